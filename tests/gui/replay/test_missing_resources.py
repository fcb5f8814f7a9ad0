"""A subresource missing from the archive is a plain miss the page survives, as a 404 was
on the live web: the page renders and its scripts go on, the log says "not archived"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.network import NOT_ARCHIVED, SERVED
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.gui_fixtures import dispose, run_js

STATIC = """<!doctype html><title>static</title><h1 id=h>static page</h1>
<script src="http://never.example:8903/never.js"></script>
<img id=img src="https://never.example/pixel.png">
<script>document.getElementById('h').dataset.after = 'ran'</script>"""
DYNAMIC = """<!doctype html><title>dynamic</title><h1 id=h>dynamic page</h1><script>
setTimeout(() => { const s = document.createElement('script');
  s.src = 'https://cdn.example/x.js?' + Date.now();
  s.onerror = s.onload = (e) => document.getElementById('h').dataset.after = e.type;
  document.head.appendChild(s); }, 50);
fetch('/missing.json').then(r => r.text()).then(t => document.title = 'fetched [' + t + ']',
                                                () => document.title = 'fetch failed');
</script>"""


@pytest.fixture
def widget(qtbot: QtBot, library: Library) -> Iterator[ReplayWidget]:
    view = ReplayWidget(library)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    yield view
    dispose(qtbot, view)


def test_a_page_survives_scripts_and_images_missing_from_the_archive(
    qtbot: QtBot, library: Library, widget: ReplayWidget
) -> None:
    w = ArchiveWriter(library)
    w.response("https://site.example/static", STATIC, at=at(2024), page=True)
    w.response("https://site.example/dynamic", DYNAMIC, at=at(2024), page=True)
    w.commit()
    stopped: list[object] = []
    widget.page.renderProcessTerminated.connect(lambda *a: stopped.append(a))
    loaded: list[bool] = []
    widget.page.loadFinished.connect(loaded.append)

    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open("https://site.example/static")
    assert loaded == [True]
    assert run_js(qtbot, widget, "document.getElementById('h').dataset.after") == "ran"
    assert run_js(qtbot, widget, "document.getElementById('img').naturalWidth") == 0
    assert "could not" not in widget.banner.text() and widget.fallback.isHidden()
    log = {(e.url, e.outcome) for e in widget.log.entries()}
    assert ("http://never.example:8903/never.js", NOT_ARCHIVED) in log
    assert ("https://never.example/pixel.png", NOT_ARCHIVED) in log

    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open("https://site.example/dynamic")
    # the missing script settles (an empty script), and the page's scripts go on
    qtbot.waitUntil(
        lambda: run_js(qtbot, widget, "document.getElementById('h').dataset.after || 'no'") != "no"
    )
    qtbot.waitUntil(lambda: widget.page.title() == "fetched []")
    assert not stopped and loaded == [True, True]
    assert ("https://site.example/dynamic", SERVED) in {
        (e.url, e.outcome) for e in widget.log.entries()
    }
    assert any(
        e.url.startswith("https://cdn.example/x.js?") and e.outcome == NOT_ARCHIVED
        for e in widget.log.entries()
    )


def test_each_capture_along_the_timeline_has_its_own_style_sheet(
    qtbot: QtBot, library: Library, widget: ReplayWidget
) -> None:
    """The archive address of a style sheet names no capture: the engine must not keep the
    first capture's copy for the next ones (every answer says no-store)."""
    page = "https://styled.example/"
    w = ArchiveWriter(library)
    for year, colour in ((2022, "rgb(200, 0, 0)"), (2023, "rgb(0, 200, 0)"),
                         (2024, "rgb(0, 0, 200)")):  # fmt: skip
        html = f'<link rel=stylesheet href="/s.css"><h1 id=h>{year}</h1>'
        w.response(page, html, at=at(year), page=True)
        w.response(page + "s.css", f"h1 {{ color: {colour} }}", at=at(year), mime="text/css")
    w.commit()
    colour = "getComputedStyle(document.getElementById('h')).color"

    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(page, "2022")
    seen = [(run_js(qtbot, widget, "document.getElementById('h').textContent"),
             run_js(qtbot, widget, colour))]  # fmt: skip
    for _ in range(2):
        with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
            widget.step(1)
        seen.append((run_js(qtbot, widget, "document.getElementById('h').textContent"),
                     run_js(qtbot, widget, colour)))  # fmt: skip
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.step(-1)
    seen.append((run_js(qtbot, widget, "document.getElementById('h').textContent"),
                 run_js(qtbot, widget, colour)))  # fmt: skip
    assert seen == [
        ("2022", "rgb(200, 0, 0)"),
        ("2023", "rgb(0, 200, 0)"),
        ("2024", "rgb(0, 0, 200)"),
        ("2023", "rgb(0, 200, 0)"),
    ]
