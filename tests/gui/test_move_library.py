"""Moving the library from Settings: ask, confirm, close the window, move with progress."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog, QMessageBox
from pytestqt.qtbot import QtBot

from archiver_app.gui.first_run import LIBRARY_KEY
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.move_dialog import MoveDialog
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
from archiver_app.paths import remembered_library_root
from tests.helpers.mounts import small_drive
from tests.helpers.snapshots import add_snapshot


@pytest.fixture(autouse=True)
def own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def test_settings_move_asks_where_confirms_and_closes_the_window_to_move(
    qtbot: QtBot, main_window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "bigger-disk"
    target.mkdir()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(target))
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: answers.pop(0))
    dialog = main_window.open_settings()
    assert dialog.move_button.isEnabled()
    assert dialog.choose_move() is None  # "No": nothing happens
    assert main_window.pending_move is None and main_window.isVisible()
    with qtbot.waitSignal(main_window.closed, timeout=5000):
        chosen = dialog.choose_move()
    assert chosen == target / main_window.library.root.name
    assert main_window.pending_move == chosen  # the app moves it once the window is gone


def test_move_dialog_moves_across_disks_with_progress_and_remembers(
    qtbot: QtBot, tmp_path: Path, gui_settings: QSettings
) -> None:
    src = tmp_path / "lib"
    with Library.open(src, create=True) as lib:
        for i in range(5):
            add_snapshot(lib, f"https://example.org/{i}", title=f"Page {i}", body="x " * 2000)
    runner = OpRunner()
    try:
        with small_drive(tmp_path / "disk2", 32 * 1024) as disk:
            dialog = MoveDialog(src, disk / "Library", runner, gui_settings)
            qtbot.addWidget(dialog)
            dialog.start()
            qtbot.waitUntil(lambda: dialog.result_ is not None, timeout=20000)
            assert dialog.root == disk / "Library" and not src.exists()
            assert dialog.progress.value() == dialog.progress.maximum() == 1000
            assert gui_settings.value(LIBRARY_KEY) == str(disk / "Library")
            assert remembered_library_root() == disk / "Library"
            with Library.open(dialog.root) as lib:
                assert lib.info().snapshots == 5
                (move,) = [r for r in lib.jobs.rows() if r.kind == "move"]  # a job, finished
                assert move.status == "completed"
    finally:
        runner.shutdown(wait=True)


def test_move_dialog_cancel_keeps_the_library_where_it_was(
    qtbot: QtBot, tmp_path: Path, gui_settings: QSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "lib"
    with Library.open(src, create=True) as lib:
        for i in range(30):
            add_snapshot(lib, f"https://example.org/{i}", title=f"Page {i}")
    runner = OpRunner()
    try:
        with small_drive(tmp_path / "disk2", 32 * 1024) as disk:
            dialog = MoveDialog(src, disk / "Library", runner, gui_settings)
            qtbot.addWidget(dialog)
            op = dialog.start()
            op.cancel()  # the move checks its token before every file
            qtbot.waitUntil(lambda: dialog.op is None, timeout=20000)
            assert dialog.root == src and dialog.result_ is None
            assert list(disk.iterdir()) == []
        with Library.open(src) as lib:
            assert lib.info().snapshots == 30
        assert gui_settings.value(LIBRARY_KEY) is None
    finally:
        runner.shutdown(wait=True)
