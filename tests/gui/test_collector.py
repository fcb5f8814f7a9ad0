"""The app's cycle collector: never at an allocation, on the GUI thread from a timer."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QDialog
from pytestqt.qtbot import QtBot

from archiver_app.gui.collector import GuiCollector


class Node:
    """An object in a reference cycle that says on which thread it was finalised."""

    def __init__(self, freed_on: list[threading.Thread]) -> None:
        self.me = self
        self.freed_on = freed_on

    def __del__(self) -> None:
        self.freed_on.append(threading.current_thread())


def cycle(freed_on: list[threading.Thread]) -> weakref.ref[Node]:
    """A cycle only the collector can free; a weak reference to it."""
    return weakref.ref(Node(freed_on))


@pytest.fixture
def collector(qtbot: QtBot) -> Iterator[GuiCollector]:
    """A collector that looks every 10 ms and finds a young pass due after 2,000 objects,
    in a process that collected at allocations before (the Qt tests' own fixture switched
    that off for the test: ``tests/helpers/gui_fixtures.py``)."""
    gc.collect()  # no full pass due from the tests before (Python's count of middle passes)
    gc.enable()
    made = GuiCollector(check_ms=10, young_limit=2_000, full_every_ms=3_600_000)
    made.take_over()
    try:
        yield made
    finally:
        made.stop()
        gc.unfreeze()
        gc.disable()  # as the Qt tests' fixture keeps it until its own collection


def test_the_app_takes_automatic_collection_over_and_can_give_it_back(
    collector: GuiCollector,
) -> None:
    assert not gc.isenabled()
    collector.settle()
    assert collector.timer.isActive() and gc.get_freeze_count() > 0
    collector.stop()
    assert gc.isenabled() and not collector.timer.isActive()
    gc.disable()


def test_a_cycle_made_on_a_worker_thread_is_freed_on_the_gui_thread(
    qtbot: QtBot, collector: GuiCollector
) -> None:
    collector.settle()
    freed_on: list[threading.Thread] = []
    refs: list[weakref.ref[Node]] = []
    made: list[list[int]] = []

    def work() -> None:  # as a table read or the detail pane's thread allocates
        refs.append(cycle(freed_on))
        made.extend([] for _ in range(5_000))  # enough for a young pass to be due

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    assert refs[0]() is not None  # nothing was collected where it was made
    qtbot.waitUntil(lambda: refs[0]() is None, timeout=5_000)
    assert freed_on == [threading.main_thread()]
    assert collector.passes[0] + collector.passes[1] >= 1 and collector.passes[2] == 0


def test_a_young_pass_waits_for_enough_new_objects(qtbot: QtBot, collector: GuiCollector) -> None:
    collector.settle()
    freed_on: list[threading.Thread] = []
    ref = cycle(freed_on)
    qtbot.wait(100)  # ten checks: too few new objects for a pass to be worth it
    assert ref() is not None and collector.passes == [0, 0, 0]
    made = [[] for _ in range(5_000)]
    qtbot.waitUntil(lambda: ref() is None, timeout=5_000)
    assert freed_on == [threading.main_thread()] and len(made) == 5_000


def test_a_full_pass_follows_a_dialog_closing(qtbot: QtBot, collector: GuiCollector) -> None:
    collector.young_limit = 10**9  # only the dialog's closing makes a pass due
    collector.settle()
    dialog = QDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    freed_on: list[threading.Thread] = []
    ref = cycle(freed_on)
    qtbot.wait(50)  # the collector sees the dialog shown
    assert ref() is not None and collector.passes == [0, 0, 0]
    dialog.close()
    qtbot.waitUntil(lambda: collector.passes[2] == 1, timeout=5_000)
    assert ref() is None and freed_on == [threading.main_thread()]


def test_a_full_pass_runs_at_the_longest_interval(qtbot: QtBot) -> None:
    gc.collect()
    gc.enable()
    collector = GuiCollector(check_ms=10, young_limit=10**9, full_every_ms=100)
    collector.take_over()
    try:
        collector.settle()
        ref = cycle([])
        qtbot.waitUntil(lambda: collector.passes[2] >= 1, timeout=5_000)
        assert ref() is None
    finally:
        collector.stop()
        gc.unfreeze()
        gc.disable()
