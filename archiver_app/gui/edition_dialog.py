"""File > New Edition…: make an edition of a collection, then open its coverage view.

The dialog asks for the collection, a name, the period (a year, or two dates) and, if the
user has one, a list of intended URLs. ``lib.editions.create`` runs on the op runner (a
long list takes seconds); a refusal (a taken name, a bad line in the list) is shown in the
dialog, which stays open to be corrected. :func:`install_edition_action` is the main
window's hook.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QDate
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from archiver_app.errors import ArchiverError
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner
from archiver_app.gui.window_menus import add_after_export
from archiver_app.library import Library

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow


class NewEditionDialog(QDialog):
    """``created`` holds the new edition's name once the dialog is accepted."""

    def __init__(self, library: Library, runner: OpRunner, parent: QWidget | None = None,
                 collection: str | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.setWindowTitle("New edition")
        self.setMinimumWidth(520)
        self.library, self.runner = library, runner
        self.created: str | None = None
        self.collection = QComboBox(self)
        for c in library.collections.all():
            self.collection.addItem(c.name, c.slug)
        if collection is not None:
            self.collection.setCurrentIndex(max(0, self.collection.findData(collection)))
        self.name = QLineEdit(self)  # made second: Tab follows the rows, Name is under Collection
        self.name.setPlaceholderText("rivers-2026")
        year = datetime.now(UTC).year
        self.year_choice = QRadioButton("Calendar year", self)
        self.year_choice.setChecked(True)
        self.year = QSpinBox(self)
        self.year.setRange(1990, 9998)
        self.year.setValue(year)
        self.range_choice = QRadioButton("From", self)
        self.start, self.end = QDateEdit(self), QDateEdit(self)
        for edit, day in ((self.start, QDate(year, 1, 1)), (self.end, QDate.currentDate())):
            edit.setCalendarPopup(True)
            edit.setDisplayFormat("yyyy-MM-dd")
            edit.setDate(day)
        self.targets = QLineEdit(self)
        self.targets.setPlaceholderText("optional: a text file with one URL a line")
        browse = QPushButton("Choose…", self)
        browse.setAutoDefault(False)  # Return submits the dialog, not this
        browse.clicked.connect(self._choose_targets)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b3261e")
        self.error.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        if ok is not None:
            ok.setText("Create Edition")
        self.buttons.accepted.connect(self.create_edition)
        self.buttons.rejected.connect(self.reject)
        self._lay_out(browse)
        self.collection.currentIndexChanged.connect(self._suggest_name)
        self.year.valueChanged.connect(self._suggest_name)
        self.year.valueChanged.connect(lambda _v: self.year_choice.setChecked(True))
        for edit in (self.start, self.end):  # touching a date means a range
            edit.dateChanged.connect(lambda _d: self.range_choice.setChecked(True))
        self._suggest_name()

    def _lay_out(self, browse: QPushButton) -> None:
        form = QFormLayout()
        form.addRow("Collection", self.collection)
        form.addRow("Name", self.name)
        year_row, range_row, list_row = QHBoxLayout(), QHBoxLayout(), QHBoxLayout()
        year_row.addWidget(self.year_choice)
        year_row.addWidget(self.year)
        year_row.addStretch(1)
        for w in (self.range_choice, self.start, QLabel("to", self), self.end):
            range_row.addWidget(w)
        range_row.addStretch(1)
        list_row.addWidget(self.targets, 1)
        list_row.addWidget(browse)
        form.addRow("Period", year_row)
        form.addRow("", range_row)
        form.addRow("Intended URLs", list_row)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "An edition gathers what the collection's jobs captured in the period, with every "
            "URL they meant to capture. Review its gaps, then accept it to freeze it.",
            self,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)

    def _suggest_name(self, *_args: object) -> None:
        slug = str(self.collection.currentData() or "edition")
        name = base = f"{slug}-{self.year.value()}"
        taken = {e.name for e in self.library.editions.list()}
        n = 1
        while name in taken:  # a second edition of the same year: suggest a free name
            n += 1
            name = f"{base}-{n}"
        self.name.setText(name)

    def _choose_targets(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(self, "Intended URLs", "", "Text (*.txt)")
        if path:
            self.targets.setText(path)

    def create_edition(self) -> None:
        eds, name = self.library.editions, self.name.text().strip()
        collection = str(self.collection.currentData() or "")
        year = self.year.value() if self.year_choice.isChecked() else None
        start = None if year else self.start.date().toPython()
        end = None if year else self.end.date().toPython()
        listing = self.targets.text().strip()

        def work(_progress: Any, _cancel: Any) -> str:
            text = Path(listing).read_text(encoding="utf-8") if listing else None
            eds.create(collection, name, year=year, start=start, end=end,  # type: ignore[arg-type]
                       targets_text=text)  # fmt: skip
            return name

        self.buttons.setEnabled(False)
        BackgroundOp(self.runner, work, label="new edition", blocks_quit=False).success(
            self._created
        ).failure(self._refused).run_in_background()

    def _created(self, name: str) -> None:
        self.created = name
        self.accept()

    def _refused(self, failure: OpFailure) -> None:
        self.buttons.setEnabled(True)
        exc = failure.exception
        text = exc.message if isinstance(exc, ArchiverError) else f"{exc}"
        if isinstance(exc, OSError):
            text = f"cannot read the list of URLs: {exc.strerror or exc}"
        self.error.setText(text)
        self.error.show()


def install_edition_action(window: MainWindow) -> QAction:
    """File > New Edition…; the new edition opens in its view and joins the sidebar."""
    action = QAction("New E&dition…", window)
    action.setToolTip("A reviewed, citable release of a collection over a period")

    def new_edition() -> None:
        from archiver_app.gui.edition_view import open_edition

        entry = window.sidebar.current_entry()
        current = None
        if entry is not None and entry.kind == "collection":
            current = next((c.slug for c in window.library.collections.all()
                            if c.id == entry.value), None)  # fmt: skip
        dialog = NewEditionDialog(window.library, window.runner, window, current)
        dialog.finished.connect(lambda _code: _opened(dialog))

        def _opened(d: NewEditionDialog) -> None:
            if d.created:
                window.reload_sidebar()
                open_edition(window.tabs, window.library, d.created, window.runner,
                             window.apply_changes, job_finished=window.jobs.job_finished,
                             open_capture=window.open_replay_id)  # fmt: skip

        dialog.open()
        window.new_edition_dialog = dialog  # type: ignore[attr-defined]

    action.triggered.connect(new_edition)
    add_after_export(window, action)  # before the separator that follows Export…
    return action
