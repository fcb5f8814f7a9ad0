"""The replay tab describes the page on screen, and shows it as it was captured.

- An address this tab once showed as a page, asked for again by another page (an iframe,
  an image), is part of that page: the banner, timeline and address stay the page's.
- What a page loads comes from its own capture first, then from the capture nearest to
  it: never from a later capture of that file made on its own.
- An address typed in the tab opens its newest capture; a link followed opens the
  capture nearest to the page it was on; Reload shows the same capture again.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.network import SERVED
from archiver_app.gui.replay.render import render
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.archive import write_capture as _capture
from tests.helpers.gui_fixtures import run_js

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


def _when(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


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


def _versions(library: Library) -> tuple[int, int]:
    """version.html captured with its green image at 06:55:25; the image captured alone
    a second before the page's own (nearer the page) and seven minutes after. Returns
    the snapshot ids of the page and of the later image."""
    _capture(library, "v1", (VERSION, VERSION_HTML.format(year=2023), _when(2023, 6, 1)))
    _capture(library, "early", (VIMG, PNG, _when(2026, 11, 29, 6, 55, 26)))
    page = _capture(
        library,
        "v2",
        (VERSION, VERSION_HTML.format(year=2026), _when(2026, 11, 29, 6, 55, 25)),
        (VIMG, PNG, _when(2026, 11, 29, 6, 55, 27)),
    )
    later = _capture(library, "later", (VIMG, PNG, _when(2026, 11, 29, 7, 2, 29)))
    return page, later


def test_a_page_loads_its_own_capture_of_each_file(qtbot: QtBot, library: Library) -> None:
    """``archiver replay --screenshot`` (``render``): the image of the page's own capture,
    newest or at a time given, not the image captured alone later (or nearer in time)."""
    _versions(library)
    for wanted in (None, "20261129070230"):
        shot = render(library, VERSION, None, at=wanted, width=400, height=300, timeout=30)
        assert shot.ok and shot.capture_ts.startswith("20261129065525")
        served = [e.detail for e in shot.requests if e.url == VIMG and e.outcome == SERVED]
        assert served == ["200 20261129065527000"], wanted


def test_typed_addresses_open_the_newest_and_links_the_nearest_capture(
    qtbot: QtBot, library: Library, replay_tab: ReplayWidget
) -> None:
    tab = replay_tab
    for year in (2023, 2024, 2026):
        _capture(library, f"v{year}", (VERSION, VERSION_HTML.format(year=year), at(year, 6)))
    for year in (2022, 2025):
        _capture(library, f"a{year}", (ARTICLE, ARTICLE_HTML.format(year=year), at(year)))
    h1 = "document.querySelector('h1').textContent"

    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.open(VERSION, at(2023, 6))  # as the library opens a capture
    assert run_js(qtbot, tab, h1) == "version 2023"
    _type(qtbot, tab, ARTICLE)  # typed: the newest, not the one nearest the tab's first page
    assert run_js(qtbot, tab, h1) == "article 2025"
    assert "2025-01-01" in tab.banner.text() and "capture 2 of 2" in tab.banner.text()

    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):  # a link: nearest 2025
        run_js(qtbot, tab, "document.getElementById('version').click()")
    assert run_js(qtbot, tab, h1) == "version 2024"
    assert "2024-06-01" in tab.banner.text() and "capture 2 of 3" in tab.banner.text()

    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.view.reload()  # the same capture again
    assert run_js(qtbot, tab, h1) == "version 2024"
    assert "capture 2 of 3" in tab.banner.text()

    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.step(1)
    assert run_js(qtbot, tab, h1) == "version 2026"
    _click(qtbot, tab, "article")  # nearest 2026: the 2025 article
    assert run_js(qtbot, tab, h1) == "article 2025"
    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.back_button.click()  # the capture shown there, not the one nearest the article
    assert run_js(qtbot, tab, h1) == "version 2026"
    assert "capture 3 of 3" in tab.banner.text()


def _click(qtbot: QtBot, tab: ReplayWidget, link: str) -> None:
    """Click the link ``link`` (an id) with the mouse, as a reader does (Back skips a
    page left without one)."""
    from PySide6.QtCore import QPoint, Qt

    where = run_js(
        qtbot,
        tab,
        f"(r => Math.round(r.x + r.width / 2) + ',' + Math.round(r.y + r.height / 2))"
        f"(document.getElementById('{link}').getBoundingClientRect())",
    )
    x, y = map(int, str(where).split(","))
    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        qtbot.mouseClick(tab.view.focusProxy(), Qt.MouseButton.LeftButton, pos=QPoint(x, y))


def test_a_redirect_leads_to_the_capture_nearest_to_it(
    qtbot: QtBot, library: Library, replay_tab: ReplayWidget
) -> None:
    """As pywb replays a redirect: its target at the redirect's time, not the newest."""
    tab = replay_tab
    moved = SITE + "moved"
    w = ArchiveWriter(library)
    w.response(moved, "", at=at(2024), status=301, headers=[("Location", "/article.html")])
    w.response(ARTICLE, ARTICLE_HTML.format(year=2024), at=at(2024, 1, 1, 1), page=True)
    w.response(ARTICLE, ARTICLE_HTML.format(year=2026), at=at(2026), page=True)
    w.commit()
    _type(qtbot, tab, moved)
    assert run_js(qtbot, tab, "document.querySelector('h1').textContent") == "article 2024"
    assert tab.address.text() == ARTICLE and "capture 1 of 2" in tab.banner.text()


def test_a_page_saying_not_archived_offers_nothing_of_a_capture(
    qtbot: QtBot, library: Library, replay_tab: ReplayWidget
) -> None:
    """Screenshot and Open in my browser act on the capture shown: with none (nothing yet,
    an address never captured) they are off; Open live page still opens the address."""
    tab = replay_tab
    capture_controls = (tab.screenshot_button, tab.own_browser_button, tab.own_browser_action)
    assert not any(c.isEnabled() for c in capture_controls)  # nothing shown yet
    _capture(library, "v", (VERSION, VERSION_HTML.format(year=2024), at(2024)))
    _type(qtbot, tab, VERSION)
    assert all(c.isEnabled() for c in capture_controls)

    _type(qtbot, tab, SITE + "never.html")
    assert "Not archived" in tab.banner.text()
    assert not any(c.isEnabled() for c in capture_controls)
    assert tab.own_browser_url() is None and tab.live_button.isEnabled()

    _type(qtbot, tab, VERSION)
    assert all(c.isEnabled() for c in capture_controls)
