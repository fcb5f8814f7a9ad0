"""Every hostile page replayed in the app's replay view reaches nothing live.

One view loads the pages in turn. The request log shows what the interceptor saw; the
twin counts TCP connections, which is what catches what the interceptor is never asked
about (preconnect, DNS prefetch, speculative sockets): those are stopped by the Chromium
switches of ``gui/replay/isolation.py``.
"""

from __future__ import annotations

import os

import pytest
from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.isolation import DEAD_PROXY, FLAGS_ENV
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.integration.hostile.pages import TRICKS, archive_tricks, page_url
from tests.integration.hostile.twin import Twin

SETTLE_MS = 400  # a page gets this long to try its trick after its load event


@pytest.fixture
def widget(replay_tab: ReplayWidget) -> ReplayWidget:
    return replay_tab


def test_the_engine_is_cut_off_below_the_interceptor() -> None:
    assert f"--proxy-server={DEAD_PROXY}" in os.environ[FLAGS_ENV].split()


def test_app_keeps_every_trick_in_the_archive(
    qtbot: QtBot, library: Library, widget: ReplayWidget, twin: Twin
) -> None:
    archive_tricks(library, twin.port)
    leaks: dict[str, int] = {}
    for trick in TRICKS:
        before = twin.accepted()
        with qtbot.waitSignal(widget.page.loadFinished, timeout=15_000, raising=False):
            widget.open(page_url(trick))
        qtbot.wait(SETTLE_MS)
        if twin.accepted() > before:
            leaks[trick.name] = twin.accepted() - before
    qtbot.wait(1000)  # late sockets (predictors, workers) of the last pages
    served = {e.url for e in widget.log.entries() if e.outcome == "served"}
    assert {page_url(t) for t in TRICKS} <= served  # every page really was shown
    assert leaks == {}, (leaks, [c.head for c in twin.contacts()])
    assert twin.accepted() == 0
