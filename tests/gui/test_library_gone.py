"""The library's folder goes away under the open window (renamed in a file manager, a
drive unplugged): one box says so and where it went, and the window stops using it.

Before, the window went on: "No screenshot" for every capture, notes saved through the
database connections still open on the moved file, captures failing with the folder
"gone", and the background passes failing again and again."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from archiver_app.errors import LibraryError
from archiver_app.gui.errors import show_error
from archiver_app.gui.library_gone import gone_text
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import OpRunner
from archiver_app.known_libraries import library_moved
from archiver_app.library import Library
from archiver_app.library_share import check_folder
from archiver_app.units import upper_first
from tests.helpers.snapshots import add_snapshot

SHOTS = os.environ.get("ARCHIVER_SHOTS")  # a folder: the boxes saved as PNG to look at


@pytest.fixture(autouse=True)
def own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path, gui_settings: QSettings) -> Iterator[MainWindow]:
    lib = Library.open(tmp_path / "lib")
    add_snapshot(lib, "https://harbour.example/tides", title="Tides")
    runner = OpRunner()
    window = MainWindow(lib, runner=runner, settings=gui_settings)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
    qtbot.waitUntil(lambda: not runner.running(), timeout=20_000)  # its start-up reads
    try:
        yield window
    finally:
        for timer in (window.jobs.timer, window.drives.timer, window.status.timer):
            timer.stop()
        window.migrator.stop()
        window.watches.stop()
        runner.shutdown(wait=True)
        lib.close()


def _gone_box(qtbot: QtBot, window: MainWindow) -> QMessageBox:
    window.status.refresh()  # its reading every few seconds, now
    qtbot.waitUntil(lambda: _shown(window) != [], timeout=10_000)
    (box,) = _shown(window)
    if SHOTS:
        box.grab().save(str(Path(SHOTS) / f"gone-{box.defaultButton().text()}.png"))
    return box


def _shown(window: MainWindow) -> list[QMessageBox]:
    return [b for b in window.findChildren(QMessageBox) if b.isVisible()]


def _button(box: QMessageBox, text: str) -> QPushButton:
    (button,) = [b for b in box.findChildren(QPushButton) if b.text() == text]
    return button


def test_a_folder_gone_is_said_once_and_the_window_stops_using_it(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    root = window.library.root
    root.rename(tmp_path / "renamed")  # a file manager's rename: nothing Archiver knows of
    box = _gone_box(qtbot, window)
    assert box.windowTitle() == "The library is gone"
    assert box.text() == (
        f"The library folder {root} is gone: it was moved or deleted, or its drive was unplugged."
    )
    assert "nothing more is written there" in box.informativeText()
    stopped = (window.status.timer, window.jobs.timer, window.drives.timer)
    assert not any(t.isActive() for t in stopped) and not window.watches.timer.isActive()
    window.status.refresh()  # a reading started before it stopped: no second box
    qtbot.wait(300)
    # nor for work that fails for it (a capture: "the library folder ... is gone")
    assert show_error(window, LibraryError(f"the folder {root} is gone"), "capturing") is box
    assert _shown(window) == [box]
    with qtbot.waitSignal(window.closed, timeout=5000):
        _button(box, "Try Again").click()  # the app opens it again (or says why not)
    assert window.pending_open == root


def test_a_library_this_computer_moved_is_offered_where_it_went(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    root, dest = window.library.root, tmp_path / "moved"
    root.rename(dest)
    library_moved(root, dest, window.library.id)  # as a move recorded it
    box = _gone_box(qtbot, window)
    assert box.text() == f"The library that was at {root} was moved to {dest}."
    with qtbot.waitSignal(window.closed, timeout=5000):
        _button(box, "Open It There").click()
    assert window.pending_open == dest


def test_quit_closes_the_window_with_nothing_to_open(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    window.library.root.rename(tmp_path / "renamed")
    box = _gone_box(qtbot, window)
    with qtbot.waitSignal(window.closed, timeout=5000):
        _button(box, "Quit").click()
    assert window.pending_open is None and not window.isVisible()


def test_a_shared_folder_gone_is_said_in_one_sentence(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It read "…cannot be read (…): is the share mounted?: it was moved or deleted, or its
    drive was unplugged." (two explanations glued with "?:")."""
    root = window.library.root
    monkeypatch.setattr(window.library, "share_token", "a-token")  # a shared library's folder
    root.rename(tmp_path / "unmounted")
    box = _gone_box(qtbot, window)
    token = root / ".archiver-library-token"
    assert box.text() == (
        f"The library folder {root} cannot be read ([Errno 2] No such file or directory: "
        f"'{token}'): the share is not mounted, or the folder was moved or deleted."
    )


def test_an_empty_mount_point_is_said_by_its_own_message(tmp_path: Path) -> None:
    """A share's mount point left empty: its message is whole (it ended "…included).: it
    was moved or deleted, or its drive was unplugged.")."""
    check = check_folder(tmp_path, "a-token")
    text = gone_text(check, tmp_path, None, shared=True)
    assert text == upper_first(check.message) and text.endswith("the token file included).")


def test_a_folder_gone_is_one_line_on_stderr_and_work_failing_for_it_adds_none(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    root = window.library.root
    root.rename(tmp_path / "renamed")
    _gone_box(qtbot, window)
    # a background pass that was writing there fails for it meanwhile (a folder upgrade)
    missing = FileNotFoundError(2, "No such file or directory", str(root / "collections"))
    assert window.library.outages.failed("upgrading folders", missing) is not None
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert lines == [
        f"the library's folder is gone: the library folder {root} is gone (while reading the"
        " status bar's figures)"
    ]
    assert not [r for r in caplog.records if r.exc_info]
