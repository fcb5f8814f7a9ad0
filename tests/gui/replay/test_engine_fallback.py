"""The way out when the built-in engine cannot run a page: "Open in my browser" is always in
the replay tab (button, context menu, Ctrl+Shift+O) and is offered above the page when the
load fails, when a script fails the way an older engine makes it fail, or when the capture
was made by a newer Chromium; ordinary console noise offers nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QDesktopServices
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from archiver_app.gui.replay.fallback import (
    VERSION_NOTES_KEY,
    Trouble,
    browser_major,
    engine_major,
    forget_version_note_shown,
    script_trouble,
)
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.corpus import REPORT_PDF
from tests.helpers.gui_fixtures import dispose

SITE = "https://site.example/"
PAGES = {
    # a script the engine cannot parse (as new syntax would be in an older engine)
    "broken-syntax": "<script>const ready = ;</script><p>text</p>",
    # a method that does not exist: the engine's fault only if a newer browser made it
    "missing-method": "<script>[3, 1].toFancySorted();</script><p>text</p>",
    # noise that does not mean the engine is too old
    "bad-json": "<script>JSON.parse('{oops');</script><p>text</p>",
    "html-as-script": "<script src='/gone.js'></script><img src='/gone.png'><p>text</p>",
    "clean": "<p>nothing wrong here</p>",
}


def _archive(library: Library, browser: str | None) -> None:
    w = ArchiveWriter(library, "collections/default/2025/01/e/capture.warc.gz")
    for name, body in PAGES.items():
        w.response(
            SITE + name, f"<!doctype html><title>{name}</title>{body}", at=at(2025), page=True
        )
    w.response(SITE + "gone.js", "<html>404</html>", at=at(2025), status=404)
    w.response(SITE + "report.pdf", REPORT_PDF, at=at(2025), mime="application/pdf", page=True)
    w.response(SITE + "data.bin", b"\x00\x01binary", at=at(2025), mime="application/octet-stream",
               page=True)  # fmt: skip
    w.commit()
    with library.write() as s:
        for snap in s.scalars(select(Snapshot)):
            snap.provenance = {"backend": "playwright", "browser": browser}


@pytest.fixture(autouse=True)
def fresh_run() -> Iterator[None]:
    """Each test is a new run of the app with the version notes on."""
    forget_version_note_shown()
    QSettings().remove(VERSION_NOTES_KEY)
    yield
    forget_version_note_shown()
    QSettings().remove(VERSION_NOTES_KEY)


def _tab(qtbot: QtBot, library: Library) -> ReplayWidget:
    view = ReplayWidget(library)
    qtbot.addWidget(view)
    view.resize(1000, 600)
    view.show()
    return view


@pytest.fixture
def widget(replay_tab: ReplayWidget) -> ReplayWidget:
    return replay_tab


def _settled(qtbot: QtBot, widget: ReplayWidget, url: str) -> None:
    """Open ``url`` and give its scripts their first moments."""
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(url)
    qtbot.wait(300)  # console messages arrive just after the load; nothing else to wait on


def test_versions_and_messages_are_read_carefully() -> None:
    assert browser_major("156.0.8078.108") == 156
    assert browser_major("Mozilla/5.0 (X11) AppleWebKit/537.36 Chrome/141.0.0.0 Safari") == 141
    assert browser_major("HeadlessChrome/120.0.6099.0") == 120
    assert browser_major("Firefox/128.0") is None and browser_major(None) is None
    assert engine_major() >= 100
    assert script_trouble("Uncaught SyntaxError: Unexpected token ';'", newer_capture=False)
    assert not script_trouble("Uncaught SyntaxError: Unexpected token '<'", newer_capture=True)
    assert not script_trouble(
        "Uncaught SyntaxError: Expected property name or '}' in JSON at position 1",
        newer_capture=True,
    )
    assert not script_trouble("Uncaught TypeError: x.y is not a function", newer_capture=False)
    assert script_trouble("Uncaught TypeError: x.y is not a function", newer_capture=True)
    assert not script_trouble("Failed to load resource: net::ERR_FAILED", newer_capture=True)


def test_same_engine_captures_offer_it_only_for_real_trouble(
    qtbot: QtBot, widget: ReplayWidget, library: Library, opened_urls: Any
) -> None:
    _archive(library, browser=f"{engine_major()}.0.1.2")  # made by the engine's own version
    for quiet in ("clean", "bad-json", "html-as-script", "missing-method"):
        _settled(qtbot, widget, SITE + quiet)
        assert widget.fallback.trouble is None, (quiet, widget.fallback.trouble)
        assert widget.fallback.isHidden()

    widget.open(SITE + "report.pdf")  # shown by the app's PDF view: no engine trouble
    qtbot.waitUntil(lambda: widget.stack.currentWidget() is widget.pdf_view, timeout=20_000)
    _settled(qtbot, widget, SITE + "data.bin")  # a file: its own page offers the way out
    assert widget.fallback.trouble is None, widget.fallback.trouble

    _settled(qtbot, widget, SITE + "broken-syntax")
    assert widget.fallback.trouble is not None
    assert widget.fallback.trouble.code is Trouble.SCRIPT_ERROR
    assert widget.fallback.isVisible()
    widget.fallback.button.click()  # the offer opens the capture, offline, in the browser
    assert opened_urls.urls and opened_urls.urls[-1].startswith("http://127.0.0.1:")

    with qtbot.waitSignal(widget.fallback.offered, timeout=20_000) as offered:
        widget.page.loadFinished.emit(False)  # the engine gives up on the capture served
    assert offered.args == [str(Trouble.LOAD_FAILED)]

    _settled(qtbot, widget, SITE + "clean")  # a new page forgets the last one's trouble
    assert widget.fallback.trouble is None and widget.fallback.isHidden()


def test_a_capture_by_a_newer_browser_is_noted_and_its_script_errors_count(
    qtbot: QtBot, widget: ReplayWidget, library: Library, opened_urls: Any
) -> None:
    newer = engine_major() + 16
    _archive(library, browser=f"{newer}.0.8078.108")
    _settled(qtbot, widget, SITE + "clean")
    assert widget.fallback.trouble is not None
    assert widget.fallback.trouble.code is Trouble.NEWER_BROWSER
    assert f"Chromium {newer}" in widget.fallback.text.text()

    _settled(qtbot, widget, SITE + "missing-method")
    assert widget.fallback.trouble is not None
    assert widget.fallback.trouble.code is Trouble.SCRIPT_ERROR

    _settled(qtbot, widget, SITE + "bad-json")  # still noise, whoever captured it
    assert widget.fallback.trouble is not None
    assert widget.fallback.trouble.code is Trouble.NEWER_BROWSER

    widget.own_browser_action.trigger()  # always there: button, context menu, Ctrl+Shift+O
    assert opened_urls.urls[-1].startswith("http://127.0.0.1:")

    widget.fallback.dismiss()  # the reader has read the version note: not again in this tab
    _settled(qtbot, widget, SITE + "clean")
    assert widget.fallback.isHidden()
    _settled(qtbot, widget, SITE + "missing-method")  # a failure is still offered
    assert widget.fallback.trouble is not None
    assert widget.fallback.trouble.code is Trouble.SCRIPT_ERROR and widget.fallback.isVisible()


def test_open_in_my_browser_names_its_shortcut(widget: ReplayWidget) -> None:
    key = widget.own_browser_action.shortcut().toString()
    assert key == "Ctrl+Shift+O"
    for tip in (widget.own_browser_button.toolTip(), widget.fallback.button.toolTip()):
        assert f"({key})" in tip  # a button shows no shortcut of its own: its tooltip does


def test_when_no_browser_opens_the_tab_gives_the_address_to_copy(
    qtbot: QtBot, widget: ReplayWidget, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    _archive(library, browser=None)
    _settled(qtbot, widget, SITE + "clean")
    # a desktop with no web browser set up: the one thing that cannot exist here
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda _url: False)
    widget.own_browser_action.trigger()
    text = widget.banner.text()
    assert "No web browser could be opened" in text
    assert "http://127.0.0.1:" in text  # the address, to copy into a browser by hand
    assert widget.banner.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse


def test_the_version_note_shows_once_per_run_and_failures_always(
    qtbot: QtBot, widget: ReplayWidget, library: Library
) -> None:
    _archive(library, browser=f"{engine_major() + 16}.0.8078.108")
    _settled(qtbot, widget, SITE + "clean")
    assert widget.fallback.trouble is not None
    assert widget.fallback.trouble.code is Trouble.NEWER_BROWSER and widget.fallback.isVisible()
    assert widget.fallback.never_button.isVisible()

    second = _tab(qtbot, library)  # the same run: the note was seen already
    _settled(qtbot, second, SITE + "clean")
    assert second.fallback.trouble is None and second.fallback.isHidden()
    assert second.own_browser_action.isEnabled()  # the way out is still there
    _settled(qtbot, second, SITE + "missing-method")  # a failure is offered in every tab
    assert second.fallback.trouble is not None
    assert second.fallback.trouble.code is Trouble.SCRIPT_ERROR and second.fallback.isVisible()
    assert not second.fallback.never_button.isVisible()  # only the version note has it
    dispose(qtbot, second)


def test_dont_show_again_lasts_across_runs_and_settings_turns_it_back_on(
    qtbot: QtBot, widget: ReplayWidget, library: Library, op_runner: object
) -> None:
    from archiver_app.gui.settings_dialog import SettingsDialog

    _archive(library, browser=f"{engine_major() + 16}.0.8078.108")
    _settled(qtbot, widget, SITE + "clean")
    assert widget.fallback.trouble is not None and widget.fallback.isVisible()
    widget.fallback.never_button.click()
    assert widget.fallback.isHidden()

    forget_version_note_shown()  # as after a restart, read from a new settings object
    assert QSettings().value(VERSION_NOTES_KEY) in (False, "false")
    later = _tab(qtbot, library)
    _settled(qtbot, later, SITE + "clean")
    assert later.fallback.trouble is None and later.fallback.isHidden()
    _settled(qtbot, later, SITE + "missing-method")  # a failure still shows, notes off
    assert later.fallback.trouble is not None and later.fallback.isVisible()
    assert later.fallback.trouble.code is Trouble.SCRIPT_ERROR
    dispose(qtbot, later)

    settings = QSettings()
    dialog = SettingsDialog(library, op_runner, settings)  # type: ignore[arg-type]
    assert not dialog.version_notes.isChecked()
    dialog.version_notes.setChecked(True)
    dialog.accept()
    forget_version_note_shown()
    again = _tab(qtbot, library)
    _settled(qtbot, again, SITE + "clean")
    assert again.fallback.trouble is not None
    assert again.fallback.trouble.code is Trouble.NEWER_BROWSER and again.fallback.isVisible()
    dispose(qtbot, again)


def test_version_note_survives_load_started_after_the_served_capture(
    qtbot: QtBot, widget: ReplayWidget, library: Library
) -> None:
    """Under load the engine's loadStarted can arrive after the capture was served; the note
    about a newer browser must not be lost with the reset it brings."""
    _archive(library, browser=f"{engine_major() + 16}.0.8078.108")
    _settled(qtbot, widget, SITE + "clean")
    assert widget.fallback.trouble is not None
    widget.fallback.page_started()  # as if loadStarted came late: trouble forgotten
    assert widget.fallback.trouble is None
    widget.page.loadFinished.emit(True)
    assert widget.fallback.trouble is not None
    assert widget.fallback.trouble.code is Trouble.NEWER_BROWSER
    assert widget.fallback.isVisible()


def test_panes_side_by_side_keep_their_pages_level(
    qtbot: QtBot, library: Library, op_runner: Any
) -> None:
    """The Compare view's two panes showed the version note in one of them (the first of
    the run), which pushed that page down against the other; the panes show failures only,
    and the note is still there for the next replay tab."""
    from archiver_app.gui.compare_view import CompareView

    newer = engine_major() + 16
    _archive(library, browser=f"{newer}.0.8078.108")
    later = ArchiveWriter(library, "collections/default/2025/02/f/capture.warc.gz")
    later.response(SITE + "clean", "<title>clean</title><p>changed</p>", at=at(2025, 2), page=True)
    later.commit()
    with library.write() as s:
        ids = list(s.scalars(select(Snapshot.id).where(Snapshot.url == SITE + "clean")))
        for snap in s.scalars(select(Snapshot)):
            snap.provenance = {"backend": "playwright", "browser": f"{newer}.0.8078.108"}
    view = CompareView(library, ids[0], ids[1], op_runner)
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.show()
    qtbot.waitUntil(lambda: view.result is not None, timeout=30_000)
    for pane in (view.old_view, view.new_view):
        qtbot.waitUntil(lambda p=pane: p.current is not None, timeout=30_000)
    qtbot.wait(300)
    for pane in (view.old_view, view.new_view):
        assert pane.capture_browser == f"{newer}.0.8078.108"
        assert pane.fallback.trouble is None and pane.fallback.isHidden()
    assert view.old_view.view.mapTo(view, view.old_view.view.rect().topLeft()).y() == (
        view.new_view.view.mapTo(view, view.new_view.view.rect().topLeft()).y()
    )
    tab = _tab(qtbot, library)  # the first replay tab of the run still has the note
    _settled(qtbot, tab, SITE + "clean")
    assert tab.fallback.trouble is not None
    assert tab.fallback.trouble.code is Trouble.NEWER_BROWSER
    dispose(qtbot, tab)
    dispose(qtbot, view.old_view)
    dispose(qtbot, view.new_view)
