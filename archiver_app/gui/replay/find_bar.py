"""The replay tab's find bar: Find in page, its count ("2 of 5") and its buttons.

What is searched is the tab's: it answers :attr:`FindBar.findRequested` (text, backward)
in the page, or in the archived PDF's text, and reports each result to
:meth:`FindBar.show_count`.

Threading contract: GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from archiver_app.gui.replay import keys


class FindBar(QWidget):
    """Hidden until :meth:`start`; Return finds the next match, Shift+Return the one
    before, Escape closes (and clears what the page highlights)."""

    findRequested = Signal(str, bool)  # the text ('': clear), backward

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.finding = ""  # the text last looked for ('': none)
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText("Find in page")
        self.edit.textEdited.connect(self.search)  # found as it is typed
        self.edit.returnPressed.connect(lambda: self.search(self.edit.text()))
        self.count = QLabel(self)  # "2 of 5", "No matches"
        self.count.setMinimumWidth(self.fontMetrics().horizontalAdvance("No matches  "))
        self.count.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(self.edit)
        layout.addWidget(self.count)
        previous = lambda: self.search(self.edit.text(), True)  # noqa: E731
        for label, tip, slot in (
            ("↑", "Previous match (Shift+Return)", previous),
            ("↓", "Next match (Return)", lambda: self.search(self.edit.text())),
            ("✕", "Close", self.close_find),
        ):
            button = QToolButton(self)
            button.setText(label)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            layout.addWidget(button)
        QShortcut(QKeySequence(keys.PREVIOUS_MATCH), self.edit, previous)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.close_find)
        self.hide()

    def search(self, text: str, backward: bool = False) -> None:
        self.finding = text
        self.findRequested.emit(text, backward)

    def show_count(self, active: int, matches: int) -> None:
        if not self.finding:
            self.count.clear()
        elif matches:
            self.count.setText(f"{active} of {matches}")
        else:
            self.count.setText("No matches")

    def start(self) -> None:
        self.show()
        self.edit.setFocus()
        self.edit.selectAll()

    def close_find(self) -> None:
        self.search("")
        self.count.clear()
        self.hide()
