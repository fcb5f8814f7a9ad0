"""A capture of a page that redirected stays on that page's timeline.

A watched page that moved (its capture answered 302 to another address) is one of the
page's captures: picked from its timeline, the tab shows where the redirect led, and the
timeline, the banner's "capture N of M", Older and Newer stay the page's, the banner
naming the redirect. Back, Forward and Reload to it keep it so.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pytestqt.qtbot import QtBot
from sqlalchemy import text

from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.archive import write_capture as _capture
from tests.helpers.gui_fixtures import run_js

MOVED, OTHER = "https://h.example/moved.html", "https://h.example/other.html"
PAGE = "<!doctype html><title>{title}</title><h1>{title}</h1>"


def _redirected_capture(library: Library, year: int) -> int:
    """A capture of MOVED that answered 302 to OTHER, the browser following it (as the
    recorder keeps both answers as the capture's own)."""
    w = ArchiveWriter(library, f"collections/default/r{year}/capture.warc.gz")
    w.response(MOVED, "", at=at(year), status=302, headers=[("Location", "/other.html")], page=True)
    w.response(
        OTHER, PAGE.format(title=f"Other {year}"), at=datetime(year, 1, 1, 0, 0, 1, tzinfo=UTC)
    )
    w.commit()
    with library.write() as s:
        conn = s.connection()
        sid = conn.execute(
            text("SELECT snapshot_id FROM records WHERE url = :u AND status = 302"), {"u": MOVED}
        ).scalar_one()
        conn.execute(
            text("UPDATE records SET snapshot_id = :s WHERE url = :u"), {"s": sid, "u": OTHER}
        )
    return int(sid)


def _h1(qtbot: QtBot, tab: ReplayWidget) -> object:
    return run_js(qtbot, tab, "document.querySelector('h1').textContent")


def test_the_capture_that_redirected_keeps_the_pages_timeline(
    qtbot: QtBot, library: Library, replay_tab: ReplayWidget
) -> None:
    tab = replay_tab
    _capture(library, "m2023", (MOVED, PAGE.format(title="Original 2023"), at(2023)))
    redirected = _redirected_capture(library, 2024)
    _capture(library, "m2025", (MOVED, PAGE.format(title="Original 2025"), at(2025)))
    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.open(MOVED)
    assert "capture 3 of 3" in tab.banner.text()

    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.step(-1)  # Older: the capture that redirected
    qtbot.waitUntil(lambda: _h1(qtbot, tab) == "Other 2024", timeout=10_000)
    assert tab.address.text() == OTHER  # where the browser is
    assert [c.url for c in tab.captures] == [MOVED] * 3  # the page's own timeline
    assert tab.captures[tab.timeline.currentIndex()].snapshot_id == redirected
    banner = tab.banner.text()
    assert f"capture 2 of 3 of {MOVED}, which redirected to this page" in banner, banner
    assert tab.older_button.isEnabled() and tab.newer_button.isEnabled()

    tab.refresh_timeline()  # a job ended: the timeline is read again, the same
    assert "capture 2 of 3 of" in tab.banner.text() and tab.timeline.currentIndex() == 1

    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.step(-1)
    assert _h1(qtbot, tab) == "Original 2023" and "capture 1 of 3" in tab.banner.text()
    assert "redirected" not in tab.banner.text()

    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.back_button.click()  # to where the redirect led: still the page's capture 2
    assert _h1(qtbot, tab) == "Other 2024"
    assert f"capture 2 of 3 of {MOVED}" in tab.banner.text()
    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.view.reload()
    assert f"capture 2 of 3 of {MOVED}" in tab.banner.text()

    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.step(1)  # Newer, from the capture that redirected
    assert _h1(qtbot, tab) == "Original 2025" and "capture 3 of 3" in tab.banner.text()


def test_a_tab_opened_on_the_capture_that_redirected_lists_the_pages_captures(
    qtbot: QtBot, library: Library, replay_tab: ReplayWidget
) -> None:
    """As Compare opens each side: the page's address at the capture's time."""
    _capture(library, "m2023", (MOVED, PAGE.format(title="Original 2023"), at(2023)))
    _redirected_capture(library, 2024)
    _capture(library, "o2026", (OTHER, PAGE.format(title="Other 2026"), at(2026)))
    tab = replay_tab
    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        tab.open(MOVED, "20240101000000")
    assert _h1(qtbot, tab) == "Other 2024"
    assert [c.url for c in tab.captures] == [MOVED] * 2
    assert f"capture 2 of 2 of {MOVED}" in tab.banner.text()
    assert tab.older_button.isEnabled() and not tab.newer_button.isEnabled()
