"""Status-bar messages fit beside the counters: cut with "…", whole in the tooltip, and a
timed one goes within a few seconds (a watch's message stayed a minute)."""

from __future__ import annotations

from typing import Any

from archiver_app.gui.message_bar import MAX_TIMED_MS

LONG = "Watched pages: 3 changed since yesterday " + "and more words to say " * 12 + "END"


def test_a_long_message_is_cut_beside_the_counters_and_whole_in_its_tooltip(
    qtbot: Any, main_window: Any
) -> None:
    window = main_window
    window.resize(1024, 768)
    qtbot.waitUntil(lambda: window.width() == 1024)
    bar = window.statusBar()
    bar.showMessage(LONG, 60_000)
    label = bar.findChild(type(window.status.count), "status_message")
    qtbot.waitUntil(lambda: label.text().endswith("…"))
    assert bar.currentMessage() == LONG
    assert label.toolTip() == LONG
    counters = window.status.count
    assert label.geometry().right() < counters.geometry().left(), "under the counters"
    assert window.width() == 1024
    # a timed message goes within a few seconds, not after the minute it asked for
    qtbot.waitUntil(lambda: bar.currentMessage() == "", timeout=MAX_TIMED_MS + 2000)
    bar.showMessage("Capturing 1 of 2 …")  # progress: until the next message
    qtbot.wait(300)
    assert bar.currentMessage() == "Capturing 1 of 2 …"
