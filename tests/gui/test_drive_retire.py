"""Retire Drive… in the drives panel: asked first (Cancel is the default), the drive's copies
stop counting, the choice of drive survives the panel's refreshes, Use Drive Again puts it
back; a drive holding an offloaded file's only copy is retired only when told it is lost."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from archiver_app.gui.drives_panel import DrivesPanel
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
from archiver_app.mirror import add_destination, parse_age, run_mirror, set_policy
from archiver_app.mirror.offload import offload
from archiver_app.store.models import CopyState
from tests.helpers.gui_fixtures import answer_next_box
from tests.helpers.mirror_data import copy_states, make_snapshot

_answer = answer_next_box


def _press(key: Qt.Key) -> Callable[[QMessageBox], None]:
    return lambda box: QTest.keyClick(box, key)


def _click_action(box: QMessageBox) -> None:
    button = box.button(QMessageBox.StandardButton.Yes)
    assert button is not None
    button.click()


def _panel(qtbot: QtBot, library: Library, op_runner: OpRunner, drives: Path) -> DrivesPanel:
    panel = DrivesPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.timer.stop()
    panel.auto_mirror = False
    panel.scan_roots = [drives]
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=10_000)
    return panel


def test_retire_asks_first_keeps_the_choice_and_use_again_puts_it_back(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    snap = make_snapshot(library, [4_000, 600], seed=1)
    (tmp_path / "red").mkdir()
    red = add_destination(library, tmp_path / "red", "red").id
    assert run_mirror(library).ok
    panel = _panel(qtbot, library, op_runner, tmp_path)
    button = panel.retirement.button
    assert not button.isEnabled()  # no drive chosen yet
    panel.table.selectRow(0)
    assert button.isEnabled() and button.text() == "Retire Drive…"

    seen: list[QMessageBox] = []
    _answer(_press(Qt.Key.Key_Return), seen)  # Return is Cancel: nothing happens
    button.click()
    [box] = seen
    assert box.text() == "Retire drive “red”?"
    assert "Its 2 copies stop counting" in box.informativeText()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    qtbot.wait(200)
    assert set(copy_states(library, red).values()) == {CopyState.PRESENT}

    _answer(_click_action, seen)
    button.click()
    qtbot.waitUntil(lambda: panel.retirement.last_retirement is not None, timeout=10_000)
    assert set(copy_states(library, red).values()) == {CopyState.MISSING}
    qtbot.waitUntil(lambda: not panel.model.rows[0].enabled, timeout=10_000)
    state = panel.model.data(panel.model.index(0, 1), Qt.ItemDataRole.DisplayRole)
    assert state == "retired"
    assert panel.verdict.text().startswith("Retired drive red: its 2 copies no longer count")
    assert panel.verdict.text().endswith(
        "The retention policy cannot be met: it asks for 2 copies and only this computer may"
        " hold one: add a drive."
    )
    panel.refresh()  # the refresh resets the model; the drive chosen stays chosen
    qtbot.waitUntil(lambda: not panel._reads.busy, timeout=10_000)
    assert panel.retirement.selected() is not None
    assert button.text() == "Use Drive Again"

    button.click()  # no question: nothing is given up by putting it back
    qtbot.waitUntil(lambda: panel.model.rows[0].enabled, timeout=10_000)
    assert button.text() == "Retire Drive…" and "in use again" in panel.verdict.text()
    assert len(snap.file_ids) == 2


def test_an_only_copy_asks_again_and_is_given_up_only_when_told(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    make_snapshot(library, [4_000, 600], seed=1, captured_at=datetime(2020, 5, 1, tzinfo=UTC))
    (tmp_path / "red").mkdir()
    red = add_destination(library, tmp_path / "red", "red").id
    set_policy(library, copies=2)
    assert run_mirror(library).ok
    set_policy(library, copies=1)
    assert offload(library, parse_age("1y")).files == 2
    panel = _panel(qtbot, library, op_runner, tmp_path)
    panel.table.selectRow(0)

    seen: list[QMessageBox] = []
    _answer(_click_action, seen)  # Retire, then the second question: Esc keeps the drive
    panel.retirement.button.click()
    qtbot.waitUntil(lambda: len(seen) == 1 and QApplication.activeModalWidget() is None)
    _answer(_press(Qt.Key.Key_Escape), seen)
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=10_000)
    assert "2 files this computer does not hold (offloaded) have their only copy" in seen[1].text()
    assert seen[1].button(QMessageBox.StandardButton.Yes).text() == "Retire Anyway"
    qtbot.wait(200)
    assert panel.retirement.last_retirement is None
    assert set(copy_states(library, red).values()) == {CopyState.PRESENT}

    _answer(_click_action, seen)
    panel.retirement.button.click()
    qtbot.waitUntil(lambda: len(seen) == 3 and QApplication.activeModalWidget() is None)
    _answer(_click_action, seen)
    qtbot.waitUntil(lambda: panel.retirement.last_retirement is not None, timeout=10_000)
    assert panel.retirement.last_retirement.lost == 2
    assert "2 files had no other copy and now lost" in panel.verdict.text()
