"""The replay tab describes the page on screen.

- An address this tab once showed as a page, asked for again by another page (an iframe,
  an image), is part of that page: the banner, timeline and address stay the page's.
"""

from __future__ import annotations

from datetime import datetime

from pytestqt.qtbot import QtBot
from sqlalchemy import text

from archiver_app.gui.replay.network import SERVED
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at

SITE = "https://h.example/"
FRAME, ARTICLE = SITE + "frame.html", SITE + "article.html"
VERSION, VIMG = SITE + "version.html", SITE + "vimg.png"
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2259e"
    "4f0000000049454e44ae426082"
)
ARTICLE_HTML = """<!doctype html><title>Article {year}</title><h1>article {year}</h1>
<iframe src="/frame.html"></iframe><a id="version" href="/version.html">version</a>"""
VERSION_HTML = """<!doctype html><title>Version {year}</title><h1 id="h">version {year}</h1>
<img id="i" src="/vimg.png"><a id="article" href="/article.html">article</a>"""


def _capture(library: Library, name: str, *records: tuple[str, str | bytes, datetime]) -> int:
    """One capture's WARC: its first record the page, every record indexed as the
    capture's own (as the recorder indexes them). Returns its snapshot id."""
    w = ArchiveWriter(library, f"collections/default/{name}/capture.warc.gz")
    for i, (url, body, when) in enumerate(records):
        mime = "image/png" if url.endswith(".png") else "text/html; charset=utf-8"
        w.response(url, body, at=when, mime=mime, page=i == 0)
    w.commit()
    with library.write() as s:
        conn = s.connection()
        snapshot = conn.execute(
            text("SELECT snapshot_id FROM records WHERE url = :u AND ts = :t"),
            {"u": records[0][0], "t": w.written[0].ts},
        ).scalar_one()
        conn.execute(
            text(
                "UPDATE records SET snapshot_id = :s WHERE file_id ="
                " (SELECT id FROM files WHERE path = :p)"
            ),
            {"s": snapshot, "p": w.relative},
        )
    return int(snapshot)


def _type(qtbot: QtBot, tab: ReplayWidget, url: str) -> None:
    """Type ``url`` in the tab's address bar and press Return, as a reader does."""
    from PySide6.QtCore import Qt

    tab.address.setFocus()
    tab.address.selectAll()
    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        qtbot.keyClicks(tab.address, url)
        qtbot.keyClick(tab.address, Qt.Key.Key_Return)


def _served(tab: ReplayWidget, url: str) -> list[str]:
    """The record times ``url`` was served from, in order."""
    return [e.detail.split()[1] for e in tab.log.entries() if e.url == url and e.outcome == SERVED]


def test_an_address_shown_before_as_a_page_is_part_of_the_next_page(
    qtbot: QtBot, library: Library, replay_tab: ReplayWidget
) -> None:
    tab = replay_tab
    _capture(library, "frame", (FRAME, "<title>Frame</title><p>frame alone</p>", at(2025)))
    _capture(library, "a1", (ARTICLE, ARTICLE_HTML.format(year=2023), at(2023)))
    _capture(
        library,
        "a2",
        (ARTICLE, ARTICLE_HTML.format(year=2024), at(2024)),
        (FRAME, "<p>frame in the article</p>", at(2024)),
    )
    _capture(library, "img", (VIMG, PNG, at(2025)))
    _capture(
        library, "v", (VERSION, VERSION_HTML.format(year=2024), at(2024)), (VIMG, PNG, at(2024))
    )
    changed: list[str] = []
    tab.captureChanged.connect(changed.append)

    _type(qtbot, tab, FRAME)  # captured on its own, after the article
    assert "2025-01-01" in tab.banner.text() and "capture 1 of 1" in tab.banner.text()
    _type(qtbot, tab, ARTICLE)
    qtbot.waitUntil(lambda: len(_served(tab, FRAME)) == 2)  # the page, then the iframe
    qtbot.wait(200)  # the iframe's answer has been handled
    assert "Archived on 2024-01-01 00:00:00 UTC — capture 2 of 2" in tab.banner.text()
    assert [c.url for c in tab.captures] == [ARTICLE, ARTICLE]
    assert tab.current_url == ARTICLE and tab.address.text() == ARTICLE
    assert tab.current is not None and tab.current.url == ARTICLE
    assert changed[-1].startswith("20240101")
    assert tab.own_browser_url() is not None and "article.html" in str(tab.own_browser_url())

    _type(qtbot, tab, VIMG)  # captured on its own too
    assert "2025-01-01" in tab.banner.text()
    _type(qtbot, tab, VERSION)
    qtbot.waitUntil(lambda: len(_served(tab, VIMG)) == 2)
    qtbot.wait(200)
    assert "Archived on 2024-01-01 00:00:00 UTC — capture 1 of 1" in tab.banner.text()
    assert [c.url for c in tab.captures] == [VERSION]
    assert tab.current_url == VERSION and changed[-1].startswith("20240101")
