"""Saving a capture's notes from the detail pane: one save per text typed, never a loop,
and a note for a capture deleted elsewhere said, not lost."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot
from sqlalchemy import event

from archiver_app.api.changes import Changes
from archiver_app.gui.main_window import MainWindow
from archiver_app.library import Library
from tests.helpers.snapshots import add_snapshot


@dataclass
class NoteWrites:
    """What reached the library: ``set_notes`` calls, and writes of the full-text row."""

    calls: list[tuple[int, str]] = field(default_factory=list)
    fts: int = 0


@pytest.fixture
def writes(library: Library, monkeypatch: pytest.MonkeyPatch) -> Iterator[NoteWrites]:
    seen = NoteWrites()
    real = library.snapshots.set_notes

    def set_notes(snapshot_id: int, notes: str, *, expected: str | None = None) -> Changes:
        seen.calls.append((snapshot_id, notes))  # counted, then done for real
        return real(snapshot_id, notes, expected=expected)

    def statement(_conn: object, _cur: object, sql: str, *_rest: object) -> None:
        if " ".join(sql.split()).lower().startswith("insert into snapshot_fts"):
            seen.fts += 1

    monkeypatch.setattr(library.snapshots, "set_notes", set_notes)
    event.listen(library.engine, "before_cursor_execute", statement)
    yield seen
    event.remove(library.engine, "before_cursor_execute", statement)


def _shown(qtbot: QtBot, window: MainWindow, library: Library) -> int:
    """One capture in the window, selected, its details loaded and the window active."""
    sid = add_snapshot(library, "https://a.example/", title="Alpha page", body="alpha")
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
    with qtbot.waitSignal(window.detail.loaded):
        window.table.selectRow(0)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    return sid


def _type_notes(qtbot: QtBot, window: MainWindow, text: str) -> None:
    window.detail.notes.setFocus()
    qtbot.waitUntil(window.detail.notes.hasFocus)
    qtbot.keyClicks(window.detail.notes, text)


def _settled(qtbot: QtBot, window: MainWindow) -> None:
    """No work of the pane running for a while: a loop of saves would show here (the Jobs
    panel's own refresh, on its timer, may run at any moment and is not counted)."""

    def busy() -> list[str]:
        return [op.label for op in window.runner.running() if op.label != "jobs"]

    qtbot.waitUntil(lambda: not busy(), timeout=5000)
    qtbot.wait(400)
    assert not busy()


@pytest.mark.parametrize(
    "leave",
    [
        lambda qtbot, pane: qtbot.mouseClick(pane.save_notes_button, Qt.MouseButton.LeftButton),
        lambda qtbot, pane: qtbot.mouseClick(pane.tags, Qt.MouseButton.LeftButton),
    ],
    ids=["save-button", "click-into-tags"],
)
def test_one_save_writes_the_note_once(
    qtbot: QtBot,
    main_window: MainWindow,
    library: Library,
    writes: NoteWrites,
    leave: Callable[[QtBot, object], None],
) -> None:
    """Saving a note saved it again and again for ever: each save reloaded the details,
    the reload saved the text once more (compared with the notes loaded before the save)
    and threw away the load that would have told it otherwise."""
    window = main_window
    sid = _shown(qtbot, window, library)
    fts_before = writes.fts
    _type_notes(qtbot, window, "check the map")
    with qtbot.waitSignal(window.detail.loaded, timeout=5000):  # saved, then shown again
        leave(qtbot, window.detail)
    _settled(qtbot, window)
    assert writes.calls == [(sid, "check the map")]
    assert writes.fts - fts_before == 1
    assert library.snapshots.detail(sid).notes == "check the map"
    assert window.detail.notes.toPlainText() == "check the map"
    window.refresh_all()  # F5, and leaving the field again: nothing new to save
    window.detail.notes.setFocus()
    qtbot.mouseClick(window.detail.tags, Qt.MouseButton.LeftButton)
    _settled(qtbot, window)
    assert writes.calls == [(sid, "check the map")]


def test_typing_on_while_a_save_runs_saves_the_newest_text_last(
    qtbot: QtBot, main_window: MainWindow, library: Library, writes: NoteWrites
) -> None:
    window = main_window
    sid = _shown(qtbot, window, library)
    _type_notes(qtbot, window, "first")
    window.detail.save_notes()
    qtbot.keyClicks(window.detail.notes, " and second")
    window.detail.save_notes()
    window.detail.save_notes()  # the same text again: once is enough
    _settled(qtbot, window)
    assert writes.calls == [(sid, "first"), (sid, "first and second")]
    assert library.snapshots.detail(sid).notes == "first and second"
    assert window.detail.notes.toPlainText() == "first and second"


def _boxes(window: MainWindow) -> list[QMessageBox]:
    return [b for b in window.findChildren(QMessageBox) if b.isVisible()]


def test_a_note_for_a_capture_deleted_elsewhere_is_said_and_kept(
    qtbot: QtBot, main_window: MainWindow, library: Library, writes: NoteWrites
) -> None:
    """The capture deleted from a terminal, then Save notes: the note was lost without a
    word and the window saved it for ever (about 750 transactions a second)."""
    window = main_window
    sid = _shown(qtbot, window, library)
    _type_notes(qtbot, window, "ask the harbour office")
    other = Library.open(library.root)  # `archiver delete` in a terminal
    try:
        other.snapshots.delete([sid])
    finally:
        other.close()
    qtbot.mouseClick(window.detail.save_notes_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(_boxes(window)), timeout=5000)
    _settled(qtbot, window)
    (box,) = _boxes(window)
    assert f"capture {sid} was deleted" in box.text()
    assert "the note was not saved" in box.text()
    assert "ask the harbour office" in box.detailedText()  # to copy from, whatever comes
    assert window.detail.notes.toPlainText() == "ask the harbour office"  # kept to copy
    assert writes.calls == [(sid, "ask the harbour office")]
    box.accept()
    window.detail.notes.setFocus()  # leaving the field again asks no second time
    qtbot.mouseClick(window.detail.tags, Qt.MouseButton.LeftButton)
    _settled(qtbot, window)
    assert writes.calls == [(sid, "ask the harbour office")] and not _boxes(window)
    window.refresh_all()  # F5: the capture is gone, so are its details...
    qtbot.waitUntil(lambda: window.detail.detail is None and window.detail.placeholder.isVisible())
    qtbot.waitUntil(lambda: bool(_boxes(window)), timeout=5000)  # ...and, leaving the screen,
    (box,) = _boxes(window)  # the note is said once more, to copy from the box
    assert "ask the harbour office" in box.detailedText()
    _settled(qtbot, window)
    assert writes.calls == [(sid, "ask the harbour office")] * 2


def test_f5_clears_the_details_of_a_capture_deleted_elsewhere(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """Deleted from a terminal while its details were shown (the notes field in use):
    F5 left them on screen, note and all."""
    window = main_window
    sid = _shown(qtbot, window, library)
    window.detail.notes.setFocus()
    qtbot.waitUntil(window.detail.notes.hasFocus)
    other = Library.open(library.root)
    try:
        other.snapshots.delete([sid])
    finally:
        other.close()
    window.refresh_all()
    qtbot.waitUntil(lambda: window.detail.detail is None and window.detail.placeholder.isVisible())
    assert not window.detail.content.isVisible()
    assert QApplication.activeModalWidget() is None  # nothing typed: nothing to say


@pytest.mark.parametrize("two", [False, True], ids=["one-chosen", "current-second-of-two"])
def test_f5_while_typing_a_note_neither_saves_nor_loses_it(
    qtbot: QtBot, main_window: MainWindow, library: Library, writes: NoteWrites, two: bool
) -> None:
    """F5 pressed in the middle of a note saved the half-typed text: the table read
    again dropped and chose again its row, and the field, losing the focus, saved."""
    window = main_window
    sid = _shown(qtbot, window, library)
    if two:  # another capture chosen too, above; the one typed about is the current row
        add_snapshot(library, "https://b.example/", title="Beta page", body="beta")
        window.refresh_all()
        qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)
        row = window.model.row_of(sid)
        assert row is not None
        flags = QItemSelectionModel.SelectionFlag
        window.table.selectRow(1 - row)
        with qtbot.waitSignal(window.detail.loaded):
            window.table.selectionModel().setCurrentIndex(
                window.model.index(row, 0), flags.Select | flags.Rows
            )
        assert window.detail.wanted == sid
    _type_notes(qtbot, window, "half a thou")
    qtbot.keyClick(window.detail.notes, Qt.Key.Key_F5)  # View > Refresh
    qtbot.waitUntil(lambda: not window.model.loading)
    _settled(qtbot, window)
    assert writes.calls == []
    assert library.snapshots.detail(sid).notes == ""
    assert window.detail.notes.toPlainText() == "half a thou"
    assert window.detail.notes.hasFocus()  # typing goes on where it was
    qtbot.keyClicks(window.detail.notes, "ght")
    assert window.detail.notes.toPlainText() == "half a thought"
    assert window.detail.notes.textCursor().position() == len("half a thought")
    chosen = window.table.selectionModel()
    assert len(chosen.selectedRows()) == (2 if two else 1)  # the captures are still chosen
    assert window.model.snapshot_id(chosen.currentIndex().row()) == sid
