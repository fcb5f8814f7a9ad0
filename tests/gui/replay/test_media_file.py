"""A sound captured by its own address plays in the app, without the banner that the
built-in browser could not load the page: the file is served whole, and a capture made
before captures kept it whole (an empty ``200`` cut off by time beside the player's
``206`` holding the file) plays from that part."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.gui_fixtures import run_js
from tests.helpers.testsite import wav_tone

WHOLE = "https://sounds.example/tone.wav"
CUT = "https://sounds.example/old.wav"


WAV = wav_tone()


@pytest.fixture
def widget(replay_tab: ReplayWidget, library: Library) -> ReplayWidget:
    w = ArchiveWriter(library, "collections/default/2024/01/s/capture.warc.gz")
    w.response(WHOLE, WAV, at=at(2024), mime="audio/x-wav", page=True)
    part = [("Content-Range", f"bytes 0-{len(WAV) - 1}/{len(WAV)}")]
    w.response(CUT, WAV, at=at(2024), status=206, mime="audio/x-wav", headers=part)
    w.response(CUT, b"", at=at(2024), mime="audio/x-wav", truncated="time")
    w.commit()
    return replay_tab


@pytest.mark.parametrize("url", [WHOLE, CUT])
def test_a_sound_opened_by_its_address_plays(qtbot: QtBot, widget: ReplayWidget, url: str) -> None:
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(url)  # reported as failed: the player ends the page's own load
    assert widget.fallback.trouble is None  # no "could not load this page"
    assert "Archived on" in widget.banner.text() and "cut short" not in widget.banner.text()
    duration = "(document.querySelector('video, audio') || {}).duration || 0"
    qtbot.waitUntil(lambda: float(run_js(qtbot, widget, duration) or 0) > 1.9, timeout=10_000)
