"""The detail pane when the capture it shows is edited elsewhere meanwhile (another window,
the command line, another machine on a shared library): a note saved from the stale view
asks what to keep instead of writing over the other one, and a tag added from a stale
list keeps the tags given elsewhere."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from archiver_app.api.changes import Changes
from archiver_app.api.snapshots import KEPT_BOTH_MARK
from archiver_app.gui import notes_conflict
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.notes_conflict import NotesChoice, NotesConflictDialog
from archiver_app.library import Library
from tests.helpers.snapshots import add_snapshot

FIRST = "Note from machine A about page 3"
A_EDIT = "A second edit, important"
B_TEXT = FIRST + " + B addition"


@pytest.fixture
def machine_a(library: Library) -> Iterator[Library]:
    """The library as the other machine (or window) opens it."""
    other = Library.open(library.root)
    try:
        yield other
    finally:
        other.close()


def _notes(library: Library, sid: int) -> str:
    detail = library.snapshots.detail(sid)
    assert detail is not None
    return detail.notes


def _shown(qtbot: QtBot, window: MainWindow, library: Library, **kw: object) -> int:
    """One capture in the window, selected and its details loaded."""
    sid = add_snapshot(library, "https://a.example/report", title="Report", **kw)  # type: ignore[arg-type]
    library.snapshots.set_notes(sid, FIRST)
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
    with qtbot.waitSignal(window.detail.loaded):
        window.table.selectRow(0)
    return sid


def _type_at_end(qtbot: QtBot, window: MainWindow, text: str) -> None:
    notes = window.detail.notes
    notes.setFocus()
    notes.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(notes, text)


def _stale_note(qtbot: QtBot, window: MainWindow, library: Library, machine_a: Library) -> int:
    """A's edit lands while B (the window) shows the older note; B types on, and a reload
    of the details while typing (an edit's refresh) keeps B's text, typed over the older
    note still."""
    sid = _shown(qtbot, window, library)
    machine_a.snapshots.set_notes(sid, A_EDIT, expected=FIRST)
    _type_at_end(qtbot, window, " + B addition")
    with qtbot.waitSignal(window.detail.loaded):
        window.apply_changes(Changes.of_snapshots([sid]))
    assert window.detail.notes.toPlainText() == B_TEXT
    return sid


def _answering(
    monkeypatch: pytest.MonkeyPatch, choice: NotesChoice, asked: list[tuple[str, str, str]]
) -> None:
    def ask(
        _parent: object, capture: str, stored: str, mine: str, answer: Callable[..., None]
    ) -> None:
        asked.append((capture, stored, mine))
        answer(choice)

    monkeypatch.setattr(notes_conflict, "ask_notes_conflict", ask)


def _settled(qtbot: QtBot, window: MainWindow) -> None:
    busy = lambda: [op.label for op in window.runner.running() if op.label != "jobs"]  # noqa: E731
    qtbot.waitUntil(lambda: not busy(), timeout=5000)


BOTH = f"{A_EDIT}\n\n{KEPT_BOTH_MARK}\n{B_TEXT}"


@pytest.mark.parametrize(
    ("choice", "kept"),
    [
        (NotesChoice.KEEP_MINE, B_TEXT),
        (NotesChoice.TAKE_STORED, A_EDIT),
        (NotesChoice.KEEP_BOTH, BOTH),
    ],
    ids=["keep-mine", "take-stored", "keep-both"],
)
def test_a_note_changed_elsewhere_asks_what_to_keep(
    qtbot: QtBot,
    main_window: MainWindow,
    library: Library,
    machine_a: Library,
    monkeypatch: pytest.MonkeyPatch,
    choice: NotesChoice,
    kept: str,
) -> None:
    """B's Save notes wrote "…page 3 + B addition" over A's newer "A second edit,
    important", and nobody was told."""
    window = main_window
    sid = _stale_note(qtbot, window, library, machine_a)
    asked: list[tuple[str, str, str]] = []
    _answering(monkeypatch, choice, asked)
    qtbot.mouseClick(window.detail.save_notes_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(asked), timeout=5000)
    assert asked == [(f"capture #{sid} (Report)", A_EDIT, B_TEXT)]
    qtbot.waitUntil(lambda: _notes(library, sid) == kept, timeout=5000)
    qtbot.waitUntil(lambda: window.detail.notes.toPlainText() == kept)
    _settled(qtbot, window)
    window.detail.notes.setFocus()  # leaving the field: nothing more to save or ask
    qtbot.mouseClick(window.detail.tags, Qt.MouseButton.LeftButton)
    _settled(qtbot, window)
    assert len(asked) == 1 and _notes(machine_a, sid) == kept


def test_the_question_shows_both_notes_and_keeps_both_by_default(
    qtbot: QtBot, main_window: MainWindow, library: Library, machine_a: Library, tmp_path: Path
) -> None:
    window = main_window
    sid = _stale_note(qtbot, window, library, machine_a)
    window.detail.save_notes()

    def dialog() -> NotesConflictDialog | None:
        found = window.findChildren(NotesConflictDialog)
        return found[0] if found and found[0].isVisible() else None

    qtbot.waitUntil(lambda: dialog() is not None, timeout=5000)
    box = dialog()
    assert box is not None and box.isModal()
    assert box.findChild(notes_conflict.QPlainTextEdit, "stored_note").toPlainText() == A_EDIT
    assert box.findChild(notes_conflict.QPlainTextEdit, "my_note").toPlainText() == B_TEXT
    assert [b.text() for b in box.buttons.values()] == ["Keep Mine", "Use Theirs", "Keep Both"]
    assert box.buttons[NotesChoice.KEEP_BOTH].isDefault()
    assert _notes(library, sid) == A_EDIT  # nothing written while the question is open
    shot = tmp_path / "notes-conflict.png"
    assert box.grab().save(str(shot)) and shot.stat().st_size > 1000
    qtbot.keyClick(box, Qt.Key.Key_Escape)  # Esc loses nothing either: both kept
    qtbot.waitUntil(lambda: _notes(library, sid) == BOTH, timeout=5000)
    qtbot.waitUntil(lambda: window.detail.notes.toPlainText() == BOTH)
    _settled(qtbot, window)
    assert QApplication.activeModalWidget() is None


def test_a_note_changed_twice_elsewhere_asks_again(
    qtbot: QtBot,
    main_window: MainWindow,
    library: Library,
    machine_a: Library,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window = main_window
    sid = _stale_note(qtbot, window, library, machine_a)
    asked: list[tuple[str, str, str]] = []

    def ask(_p: object, capture: str, stored: str, mine: str, answer: Callable[..., None]) -> None:
        asked.append((capture, stored, mine))
        if len(asked) == 1:  # A edits once more before B's answer is written
            machine_a.snapshots.set_notes(sid, "third", expected=A_EDIT)
        answer(NotesChoice.KEEP_MINE)

    monkeypatch.setattr(notes_conflict, "ask_notes_conflict", ask)
    window.detail.save_notes()
    qtbot.waitUntil(lambda: len(asked) == 2, timeout=5000)
    assert asked[1][1:] == ("third", B_TEXT)
    qtbot.waitUntil(lambda: _notes(library, sid) == B_TEXT, timeout=5000)


def test_closing_over_a_note_changed_elsewhere_keeps_both(
    qtbot: QtBot, main_window: MainWindow, library: Library, machine_a: Library
) -> None:
    """Quitting saves the typed note at once: there is no one to ask, so both are kept."""
    window = main_window
    sid = _stale_note(qtbot, window, library, machine_a)
    window.request_quit()
    assert _notes(library, sid) == BOTH


def test_a_tag_added_from_a_stale_list_keeps_the_other_machines_tags(
    qtbot: QtBot, main_window: MainWindow, library: Library, machine_a: Library
) -> None:
    """B's field still read "fromA, sharedtag"; B added tagB and tagA2, added by A
    meanwhile, was gone."""
    window = main_window
    sid = _shown(qtbot, window, library, tags=("fromA", "sharedtag"))
    assert window.detail.tags.text() == "fromA, sharedtag"
    machine_a.tags.change([sid], add=["tagA2"])
    window.detail.tags.setFocus()
    window.detail.tags.end(False)
    qtbot.keyClicks(window.detail.tags, ", tagB")
    with qtbot.waitSignal(window.detail.loaded, timeout=5000):  # saved, shown again
        qtbot.keyClick(window.detail.tags, Qt.Key.Key_Return)
    stored = ["fromA", "sharedtag", "tagA2", "tagB"]
    assert machine_a.snapshots.detail(sid).tags == stored  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: window.detail.tags.text() == ", ".join(stored))  # as stored

    machine_a.tags.change([sid], add=["late"])  # and a removal from a stale list
    window.detail.tags.setText("fromA, tagA2, tagB")
    with qtbot.waitSignal(window.detail.loaded, timeout=5000):
        window.detail.save_tags()
    stored = ["fromA", "late", "tagA2", "tagB"]
    assert machine_a.snapshots.detail(sid).tags == stored  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: window.detail.tags.text() == ", ".join(stored))
