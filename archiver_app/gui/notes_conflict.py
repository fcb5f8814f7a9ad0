"""The question asked when a note being saved was changed elsewhere since it was opened
(another machine on a shared library, another window, the command line): keep mine,
take the stored one, or keep both. Nothing is written here; the detail pane acts on the
answer (:class:`NotesChoice`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class NotesChoice(enum.Enum):
    KEEP_MINE = "keep mine"  # written over the stored note
    TAKE_STORED = "take stored"  # the stored note shown, mine dropped
    KEEP_BOTH = "keep both"  # the stored note, then mine below a marked line


class NotesConflictDialog(QDialog):
    """Both notes side by side and three answers. *Keep both* is the default, and what
    Esc or closing the dialog choose: whatever key is pressed, no text is lost."""

    def __init__(self, parent: QWidget | None, capture: str, stored: str, mine: str) -> None:
        super().__init__(parent)
        self.setObjectName("notes_conflict")
        self.setWindowTitle("Note changed elsewhere")
        self.choice = NotesChoice.KEEP_BOTH
        col = QVBoxLayout(self)
        intro = QLabel(
            f"The note of {capture} was changed elsewhere (another window or computer)"
            " since you opened it here. Yours is not saved yet: keep yours, use theirs,"
            " or keep both (yours below theirs, after a marked line).",
            self,
        )
        intro.setWordWrap(True)
        col.addWidget(intro)
        for title, text, name in (
            ("Theirs, the note as it is now:", stored, "stored_note"),
            ("Yours, not saved:", mine, "my_note"),
        ):
            col.addWidget(QLabel(title, self))
            view = QPlainTextEdit(text, self)
            view.setObjectName(name)
            view.setReadOnly(True)
            view.setMaximumHeight(110)
            col.addWidget(view)
        buttons = QDialogButtonBox(self)
        self.buttons: dict[NotesChoice, QPushButton] = {}
        for choice, label, role in (
            (NotesChoice.KEEP_MINE, "Keep Mine", QDialogButtonBox.ButtonRole.AcceptRole),
            (NotesChoice.TAKE_STORED, "Use Theirs", QDialogButtonBox.ButtonRole.AcceptRole),
            (NotesChoice.KEEP_BOTH, "Keep Both", QDialogButtonBox.ButtonRole.AcceptRole),
        ):
            button = buttons.addButton(label, role)
            assert button is not None
            button.setObjectName(choice.name.lower())
            button.clicked.connect(lambda _=False, c=choice: self._answer(c))
            self.buttons[choice] = button
        self.buttons[NotesChoice.KEEP_MINE].setToolTip("Save your note over the one stored")
        self.buttons[NotesChoice.TAKE_STORED].setToolTip("Show the stored note; drop yours")
        self.buttons[NotesChoice.KEEP_BOTH].setToolTip(
            "Save the stored note with yours below it, after a marked line"
        )
        self.buttons[NotesChoice.KEEP_BOTH].setDefault(True)
        col.addWidget(buttons)
        self.resize(460, self.sizeHint().height())

    def _answer(self, choice: NotesChoice) -> None:
        self.choice = choice
        self.accept()


def ask_notes_conflict(
    parent: QWidget,
    capture: str,
    stored: str,
    mine: str,
    answer: Callable[[NotesChoice], None],
) -> NotesConflictDialog:
    """Open the question window-modal (returns at once); ``answer`` gets the choice."""
    dialog = NotesConflictDialog(parent, capture, stored, mine)
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.finished.connect(lambda _code: answer(dialog.choice))
    dialog.open()
    return dialog
