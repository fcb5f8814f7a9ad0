"""File > Open Library…: the window closes, the app opens the chosen library (or creates
one in an empty folder when asked), remembers it, and falls back to the library it had
when the chosen folder cannot be opened."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog, QFileDialog, QLabel, QMessageBox
from pytestqt.qtbot import QtBot

from archiver_app.gui.app import open_at_start, open_chosen_library, open_next_library
from archiver_app.gui.first_run import LIBRARY_KEY, FirstRunDialog
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
from archiver_app.paths import remembered_library_root
from tests.helpers.snapshots import add_snapshot


@pytest.fixture(autouse=True)
def own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture
def boxes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The error boxes the app would show, by title (shown, not waited on)."""
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append(box.windowTitle()) or 0)
    return shown


def test_open_library_closes_the_window_for_the_chosen_folder(
    qtbot: QtBot, main_window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "group-library"
    Library.open(other, create=True).close()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(other))
    assert main_window.menus.open_library in main_window.menuBar().actions()[0].menu().actions()
    with qtbot.waitSignal(main_window.closed, timeout=5000):
        main_window.menus.open_library.trigger()
    assert main_window.pending_open == other


def test_the_chosen_library_opens_or_is_created_and_is_remembered(
    tmp_path: Path, gui_settings: QSettings, monkeypatch: pytest.MonkeyPatch, boxes: list[str]
) -> None:
    other = tmp_path / "group-library"
    with Library.open(other, create=True) as lib:
        add_snapshot(lib, "https://harbour.example/")
    opened = open_chosen_library(other, gui_settings)
    assert opened is not None and opened.info().snapshots == 1
    opened.close()
    assert gui_settings.value(LIBRARY_KEY) == str(other) and remembered_library_root() == other

    empty = tmp_path / "new-library"
    empty.mkdir()
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: answers.pop(0))
    assert open_chosen_library(empty, gui_settings) is None  # "No": nothing made
    assert not any(empty.iterdir())
    made = open_chosen_library(empty, gui_settings)
    assert made is not None and (empty / "library.json").is_file()
    made.close()

    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "thesis.pdf").write_bytes(b"%PDF-1.4")
    assert open_chosen_library(papers, gui_settings) is None
    assert boxes == ["Archiver cannot open the library"]
    assert remembered_library_root() == empty  # the refused folder is not remembered


def test_the_app_reopens_on_the_chosen_library_or_the_one_before(
    tmp_path: Path, gui_settings: QSettings, boxes: list[str]
) -> None:
    first, second, papers = tmp_path / "first", tmp_path / "second", tmp_path / "papers"
    Library.open(first, create=True).close()
    with Library.open(second, create=True) as lib:
        add_snapshot(lib, "https://harbour.example/")
    papers.mkdir()
    (papers / "notes.txt").write_text("not a library")
    opened, url = open_next_library(second, first, None, gui_settings)
    assert opened is not None and opened.root == second and url is None
    opened.close()
    back, url = open_next_library(papers, second, None, gui_settings)
    assert back is not None and back.root == second  # said why, then the one before
    back.close()
    assert boxes == ["Archiver cannot open the library"]


def test_a_remembered_library_that_cannot_open_offers_another_folder_with_the_reason(
    tmp_path: Path,
    gui_settings: QSettings,
    op_runner: OpRunner,
    boxes: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    papers, other = tmp_path / "papers", tmp_path / "other"
    papers.mkdir()
    (papers / "notes.txt").write_text("not a library")
    with Library.open(other, create=True) as lib:
        add_snapshot(lib, "https://harbour.example/")
    shown: list[str] = []

    def choose_other(dialog: FirstRunDialog) -> int:
        shown.append(dialog.findChild(QLabel, "problem").text())
        dialog.location.setText(str(other))
        dialog.accept()
        return dialog.result()

    monkeypatch.setattr(FirstRunDialog, "exec", choose_other)
    opened = open_at_start(papers, None, op_runner, gui_settings, chose=True)
    assert isinstance(opened, Library) and opened.root == other
    opened.close()
    assert "not an Archiver library" in shown[0] and not boxes
    assert gui_settings.value(LIBRARY_KEY) == str(other)  # opened there next time

    # A remembered library gone since (moved, deleted) is asked for, not made anew empty.
    gone = tmp_path / "gone"
    shown.clear()
    opened = open_at_start(gone, None, op_runner, gui_settings, chose=True, create=False)
    assert isinstance(opened, Library) and opened.root == other and not gone.exists()
    opened.close()
    assert "there is no library at" in shown[0]

    monkeypatch.setattr(FirstRunDialog, "exec", lambda dialog: QDialog.DialogCode.Rejected)
    assert open_at_start(papers, None, op_runner, gui_settings, chose=True) == 2  # gave up
    # A folder the user named (--library) is said, not swapped for another.
    assert open_at_start(papers, None, op_runner, gui_settings, chose=False) == 2
    assert boxes == ["Archiver cannot open the library"] and len(shown) == 1  # "gone" only


def test_the_app_starts_where_it_remembers_and_never_makes_a_remembered_library_anew(
    tmp_path: Path, gui_settings: QSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The place remembered for every front end (a moved library) is the app's own choice:
    gone, it is asked for (it was opened as a new empty library, everything seemingly
    lost); a folder named on the command line is opened as given."""
    from archiver_app.gui.app import StartPlace, start_place
    from archiver_app.gui.first_run import DONE_KEY
    from archiver_app.paths import default_library_root, remember_library_root

    monkeypatch.delenv("ARCHIVER_LIBRARY", raising=False)
    named = tmp_path / "named"
    assert start_place(named, gui_settings) == StartPlace(named, chose=False, create=True)
    default = default_library_root()
    assert start_place(default, gui_settings) == StartPlace(default, chose=True, create=True)
    gui_settings.setValue(DONE_KEY, True)
    gui_settings.setValue(LIBRARY_KEY, str(tmp_path / "chosen"))
    assert start_place(default, gui_settings) == StartPlace(
        tmp_path / "chosen", chose=True, create=False
    )
    moved = tmp_path / "moved"
    remember_library_root(moved)  # archiver move-library, File > Open Library...
    assert start_place(moved, gui_settings) == StartPlace(moved, chose=True, create=False)
    monkeypatch.setenv("ARCHIVER_LIBRARY", str(moved))  # named in the environment
    assert start_place(moved, gui_settings) == StartPlace(moved, chose=False, create=True)


def test_a_library_busy_at_start_says_so_and_tries_again(
    tmp_path: Path,
    gui_settings: QSettings,
    op_runner: OpRunner,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An import's undo in another process held the library: the app died with a
    traceback and no window. Now it says the library is busy and offers to try again."""
    from tests.helpers.locks import at_revision, short_busy_timeout, write_lock_held

    root = tmp_path / "lib"
    at_revision(root, "0011")  # opening it writes (an upgrade): it must wait for the lock
    short_busy_timeout(monkeypatch)
    shown: list[tuple[str, str]] = []
    lock = write_lock_held(root / "library.db")

    def answer(box: QMessageBox) -> QMessageBox.StandardButton:
        shown.append((box.windowTitle(), box.text()))
        if len(shown) == 1:
            return QMessageBox.StandardButton.Retry  # still busy: asked again
        lock.__exit__(None, None, None)  # the other process is done
        return QMessageBox.StandardButton.Retry

    monkeypatch.setattr(QMessageBox, "exec", answer)
    lock.__enter__()
    opened = open_at_start(root, None, op_runner, gui_settings, chose=True)
    assert isinstance(opened, Library) and opened.root == root
    opened.close()
    assert [title for title, _ in shown] == ["The library is busy"] * 2
    assert "another Archiver process is writing to it" in shown[0][1]

    monkeypatch.setattr(QMessageBox, "exec", lambda box: QMessageBox.StandardButton.Close)
    at_revision(root, "0011")
    with write_lock_held(root / "library.db"):
        assert open_at_start(root, None, op_runner, gui_settings, chose=True) == 75  # quit


def test_a_library_folder_emptied_since_is_refused_at_start_and_nothing_is_written(
    tmp_path: Path,
    gui_settings: QSettings,
    op_runner: OpRunner,
    boxes: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`archiver --library /mnt/point` with the share (or drive) not mounted opened a new
    empty library there ("Nothing saved yet") and wrote library.db and library.json."""
    from archiver_app.gui.app import start_place

    monkeypatch.delenv("ARCHIVER_LIBRARY", raising=False)
    mount = tmp_path / "mnt"
    with Library.open(mount) as lib:
        add_snapshot(lib, "https://harbour.example/")
    mount.rename(tmp_path / "unmounted")
    mount.mkdir()  # the empty mount point
    place = start_place(mount, gui_settings)  # named on the command line
    opened = open_at_start(
        place.root, None, op_runner, gui_settings, chose=place.chose, create=place.create
    )
    assert opened == 2 and boxes == ["Archiver cannot open the library"]
    assert list(mount.iterdir()) == []

    # the remembered library: the first-run screen says why, and Start refuses the folder
    shown: list[tuple[str, str, bool]] = []

    def look(dialog: FirstRunDialog) -> int:
        problem = dialog.findChild(QLabel, "problem").text()
        verdict = dialog.findChild(QLabel, "verdict").text()
        shown.append((problem, verdict, dialog.start.isEnabled()))
        return QDialog.DialogCode.Rejected

    monkeypatch.setattr(FirstRunDialog, "exec", look)
    assert open_at_start(mount, None, op_runner, gui_settings, chose=True) == 2
    [(problem, verdict, start_enabled)] = shown
    assert f"the library that was at {mount} is not there now" in problem
    assert "is its drive or share mounted" in verdict and not start_enabled
    assert list(mount.iterdir()) == []
    mount.rmdir()
    (tmp_path / "unmounted").rename(mount)  # mounted again: it opens, captures and all
    opened = open_at_start(mount, None, op_runner, gui_settings, chose=False)
    assert isinstance(opened, Library) and opened.info().snapshots == 1
    opened.close()


def test_a_remembered_library_moved_away_is_offered_where_it_went_not_made_anew(
    tmp_path: Path,
    gui_settings: QSettings,
    op_runner: OpRunner,
    boxes: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After `archiver move-library`, the first-run screen offered the old place (where
    the library no longer is) and Start made a new empty library there, remembered as
    the library from then on. Now it offers the new place, saying the library moved."""
    import os

    from archiver_app.library_move import move_library

    old, new = tmp_path / "lib", tmp_path / "moved"
    with Library.open(old) as lib:
        add_snapshot(lib, "https://harbour.example/")
    move_library(old, new)
    seen: dict[str, object] = {}

    def start(dialog: FirstRunDialog) -> int:
        seen["location"] = dialog.location.text()
        seen["moved"] = dialog.findChild(QLabel, "moved").text()
        seen["verdict"] = dialog.verdict.text()
        if shots := os.environ.get("ARCHIVER_SHOTS"):
            dialog.grab().save(str(Path(shots) / "first-run-moved.png"))
        dialog.location.setText(str(old))  # the old place typed again: not a new library
        seen["typed"], seen["start"] = dialog.verdict.text(), dialog.start.isEnabled()
        if shots:
            dialog.grab().save(str(Path(shots) / "first-run-old-typed.png"))
        dialog.location.setText(str(new))
        dialog.accept()
        return dialog.result()

    monkeypatch.setattr(FirstRunDialog, "exec", start)
    opened = open_at_start(old, None, op_runner, gui_settings, chose=True, create=False)
    assert isinstance(opened, Library) and opened.root == new
    assert opened.info().snapshots == 1
    opened.close()
    assert seen["location"] == str(new)
    assert f"it was at {old} and is now at {new}" in str(seen["moved"])
    assert "A library is already in this folder: Start opens it." in str(seen["verdict"])
    assert seen["start"] is False
    assert f"the library that was here was moved to {new}" in str(seen["typed"])
    assert not old.exists() and not boxes
    assert gui_settings.value(LIBRARY_KEY) == str(new) and remembered_library_root() == new


def test_the_window_says_its_library_was_upgraded_as_it_opened(
    main_window: MainWindow, tmp_path: Path
) -> None:
    from archiver_app.gui.app import announce_upgrade
    from archiver_app.store.schema import SchemaUpgrade

    announce_upgrade(main_window)  # opened as it was: nothing to say
    assert main_window.statusBar().currentMessage() == ""
    backup = tmp_path / "library.db.backup-0002-20260101T000000Z"
    main_window.library.upgraded = SchemaUpgrade("0002", "0013", backup)
    announce_upgrade(main_window)
    assert main_window.statusBar().currentMessage() == (
        f"Upgraded the library from schema 0002 to 0013; the database as it was is kept in "
        f"{backup}."
    )
