"""The capture dialog and its input parsing: addresses, bookmarks files, crawl options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from archiver_app.errors import InputError
from archiver_app.gui.capture_dialog import TAB_BOOKMARKS, TAB_CRAWL, CaptureDialog
from archiver_app.gui.capture_input import parse_bookmarks_file, parse_url_lines
from archiver_app.library import Library


def test_url_lines_keep_good_ones_and_explain_bad_ones() -> None:
    urls, rejected = parse_url_lines(
        "https://a.example/\n\n# a comment\nftp://files.example/x\nhttps://a.example/\n"
        "not a url\nhttp://b.example/p?q=1\n"
    )
    assert urls == ["https://a.example/", "http://b.example/p?q=1"]
    assert [(r.line, r.text) for r in rejected] == [(4, "ftp://files.example/x"), (6, "not a url")]
    assert all(r.reason for r in rejected)


def test_bookmarks_files_html_json_and_broken(tmp_path: Path) -> None:
    html = tmp_path / "bookmarks.html"
    html.write_text(
        "<!DOCTYPE NETSCAPE-Bookmark-file-1><DL><p><DT><H3>News</H3><DL><p>"
        '<DT><A HREF="https://news.example/a" ADD_DATE="1">A</A>'
        '<DT><A HREF="javascript:alert(1)">bookmarklet</A>'
        '<DT><A HREF="https://news.example/b">B</A></DL></DL>',
        encoding="utf-8",
    )
    urls, rejected = parse_bookmarks_file(html)
    assert urls == ["https://news.example/a", "https://news.example/b"]
    assert [r.text for r in rejected] == ["javascript:alert(1)"]
    chrome = tmp_path / "Bookmarks.json"
    chrome.write_text(
        json.dumps(
            {"roots": {"bar": {"children": [{"type": "url", "url": "https://c.example/"}]}}}
        ),
        encoding="utf-8",
    )
    assert parse_bookmarks_file(chrome)[0] == ["https://c.example/"]
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="cannot be read"):
        parse_bookmarks_file(broken)
    with pytest.raises(InputError, match="cannot read"):
        parse_bookmarks_file(tmp_path / "missing.html")


def test_dialog_builds_requests_and_reports_problems(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = CaptureDialog([("default", "Default"), ("trips", "Trips")])
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.capture_button.isEnabled()
    dialog.urls.setPlainText("https://a.example/\nbad line")
    dialog.collection.setCurrentIndex(1)
    dialog.tags.setText("travel, 2026")
    request = dialog.build()
    assert request.urls == ("https://a.example/",)
    assert request.collection == "trips" and request.tags == ("travel", "2026")
    assert request.collection_name == ""
    dialog.collection.setEditText("Harbour study")  # typed, not entered: a new collection
    assert (dialog.build().collection, dialog.build().collection_name) == (
        "harbour-study",
        "Harbour study",
    )
    dialog.collection.setEditText("Café / Notes 2026")  # a folder name the library takes
    assert dialog.build().collection == "cafe-notes-2026"
    dialog.collection.setEditText("TRIPS")  # a listed one, by its name in any case
    assert (dialog.build().collection, dialog.build().collection_name) == ("trips", "")
    dialog.collection.setCurrentIndex(1)
    assert [r.line for r in request.rejected] == [2]
    dialog.accept()  # first press explains the skipped line and waits
    assert "line 2" in dialog.problems.text() and dialog.result() == 0
    dialog.accept()  # second press goes ahead
    assert dialog.request is not None and dialog.request.urls == ("https://a.example/",)

    empty = CaptureDialog([])
    qtbot.addWidget(empty)
    empty.urls.setPlainText("nothing here")
    empty.accept()
    assert "no valid web address" in empty.problems.text() and empty.request is None

    crawl = CaptureDialog([])
    qtbot.addWidget(crawl)
    crawl.tabs.setCurrentIndex(TAB_CRAWL)
    crawl.seed.setText("https://site.example/docs/")
    crawl.depth_spin.setValue(3)
    crawl.ignore.setPlainText("/calendar/\n[unclosed")
    with pytest.raises(InputError, match="line 2"):
        crawl.build()
    crawl.ignore.setPlainText("/calendar/")
    req = crawl.build()
    assert req.crawl is not None and req.crawl.depth == 3
    assert req.crawl.scope == "prefix" and req.crawl.ignore_patterns == ("/calendar/",)

    bookmarks = tmp_path / "b.txt"
    bookmarks.write_text("https://x.example/\nhttps://y.example/\n", encoding="utf-8")
    bm = CaptureDialog([])
    qtbot.addWidget(bm)
    bm.tabs.setCurrentIndex(TAB_BOOKMARKS)
    bm.load_bookmarks(bookmarks)
    assert "2 web addresses" in bm.bookmarks_summary.text()
    assert bm.build().urls == ("https://x.example/", "https://y.example/")


def test_building_the_window_does_not_import_the_core_engines() -> None:
    """The window imports core functions where they are used: the capture engine, the
    mirror or the crawl engine, and the libraries only some actions need (``surt`` with
    ``tldextract`` and ``requests``, ``cryptography``, Pillow) must not load while it is
    built (they cost the launch: together about a quarter of a second on a 2-core Xeon)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import archiver_app.gui.main_window\n"
        "heavy = ['archiver_app.capture.engine', 'archiver_app.mirror.run',\n"
        "         'archiver_app.mirror.worker', 'archiver_app.mirror.copier',\n"
        "         'archiver_app.crawl.jobs', 'surt', 'tldextract', 'requests',\n"
        "         'cryptography', 'PIL']\n"
        "loaded = [m for m in heavy if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_keep_login_pages_turns_the_login_check_off_for_the_job(
    qtbot: QtBot, library: Library
) -> None:
    """A public page that only looks like a login form (a password-strength demo) can be
    captured: the checkbox reaches the job's rules (``--no-login-check``)."""
    from archiver_app.crawl.jobs import load_context
    from archiver_app.gui.window_capture import queue_crawl

    dialog = CaptureDialog([])
    qtbot.addWidget(dialog)
    dialog.tabs.setCurrentIndex(TAB_CRAWL)
    dialog.seed.setText("https://demo.example/strength/")
    assert dialog.build().login_check  # on unless asked
    dialog.keep_login_pages.setChecked(True)
    request = dialog.build()
    assert not request.login_check
    crawl = queue_crawl(library, request)
    page = library.jobs.capture(["https://demo.example/"], login_check=request.login_check)
    with library.session() as s:
        assert not load_context(s, crawl).rules.login_check
        assert not load_context(s, page).rules.login_check


def test_tab_moves_on_from_the_address_and_pattern_lists(qtbot: QtBot) -> None:
    """Tab typed a tab character into the address list (and the ignore lists): from there
    the keyboard could not reach the collection, the tags or Capture."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    dialog = CaptureDialog([("default", "Default")])
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    for box in (dialog.urls, dialog.ignore, dialog.watch_ignore):
        assert box.tabChangesFocus(), box.objectName()
    dialog.activateWindow()
    dialog.urls.setFocus()
    qtbot.waitUntil(dialog.urls.hasFocus)
    qtbot.keyClick(dialog.urls, Qt.Key.Key_Tab)
    assert "\t" not in dialog.urls.toPlainText()
    assert QApplication.focusWidget() is not dialog.urls
