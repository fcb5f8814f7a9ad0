"""A hash-routed app's routes are pages of their own in the replay tab: the timeline of
``#/a`` lists the captures of ``#/a`` only, the document's other routes are "Other views",
and moving to another route in the page gives that route's timeline."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.archive import ArchiveWriter, at

DOC = "https://app.example/"
APP = """<!doctype html><title>App {year}</title><main id="m"></main><script>
function show() {{ document.getElementById('m').textContent =
  'route ' + (location.hash || 'none') + ' in {year}'; }}
addEventListener('hashchange', show); show();</script>"""
#: (year, route) of each capture: #/a twice, #/b once, the document without a route once.
CAPTURED = [(2022, ""), (2023, "#/a"), (2024, "#/b"), (2025, "#/a")]


def _archive(library: Library) -> None:
    w = ArchiveWriter(library, "collections/default/2025/01/r/capture.warc.gz")
    for year, _route in CAPTURED:
        w.response(DOC, APP.format(year=year), at=at(year), page=True)
    w.commit()
    with library.write() as s:  # the request had no fragment; the page keeps its route
        for snap in s.scalars(select(Snapshot)):
            snap.url = DOC + dict(CAPTURED)[snap.captured_at.year]


@pytest.fixture
def widget(replay_tab: ReplayWidget) -> ReplayWidget:
    return replay_tab


def _labels(widget: ReplayWidget) -> list[str]:
    return [widget.timeline.itemText(i)[:4] for i in range(widget.timeline.count())]


def _views(widget: ReplayWidget) -> list[str]:
    return [a.text() for a in widget.views_button.menu().actions()]


def test_each_route_has_its_own_timeline(
    qtbot: QtBot, widget: ReplayWidget, library: Library
) -> None:
    _archive(library)
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(DOC + "#/a")
    assert _labels(widget) == ["2023", "2025"]  # the captures of #/a, not of #/b or the doc
    assert widget.timeline.currentIndex() == 1
    assert "capture 2 of 2" in widget.banner.text()
    assert widget.views_button.isVisible()
    assert _views(widget) == ["without a route — 1 capture", "#/b — 1 capture"]

    widget.page.runJavaScript("location.hash = '#/b'")  # the reader moves to another route
    qtbot.waitUntil(lambda: _labels(widget) == ["2024"], timeout=10_000)
    assert _views(widget) == ["without a route — 1 capture", "#/a — 2 captures"]

    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.views_button.menu().actions()[0].trigger()  # the document itself
    qtbot.waitUntil(lambda: _labels(widget) == ["2022"], timeout=10_000)
    assert _views(widget) == ["#/a — 2 captures", "#/b — 1 capture"]


def test_a_page_without_routes_shows_no_other_views(
    qtbot: QtBot, widget: ReplayWidget, library: Library
) -> None:
    w = ArchiveWriter(library, "collections/default/2025/01/p/capture.warc.gz")
    for year in (2023, 2024):
        w.response("https://plain.example/", f"<title>{year}</title>", at=at(year), page=True)
    w.commit()
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open("https://plain.example/")
    assert _labels(widget) == ["2023", "2024"]
    assert widget.views_button.isHidden()
