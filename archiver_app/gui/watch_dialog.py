"""Change a watch: when its pages are captured again, and the text its comparisons leave out.

Opened from the Changes view (*Change…*, or a double-click on a watch). It only builds the
new settings; the view saves them through ``lib.jobs.set_schedule``.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from archiver_app.errors import InputError
from archiver_app.gui.capture_input import SCHEDULES, parse_ignore_patterns
from archiver_app.watch.runner import WatchRow
from archiver_app.watch.schedule import describe_schedule


class WatchDialog(QDialog):
    """Read :attr:`schedule` and :attr:`ignore` after ``accept``."""

    def __init__(self, watch: WatchRow, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("watch_dialog")
        self.setWindowTitle("Change watch")
        self.watch = watch
        self.schedule_value = watch.schedule
        self.ignore: tuple[str, ...] = watch.ignore
        layout = QVBoxLayout(self)
        pages = QLabel("\n".join(watch.seeds) or watch.name, self)
        pages.setWordWrap(True)
        layout.addWidget(pages)
        form = QFormLayout()
        self.schedule = QComboBox(self)
        for label, value in SCHEDULES:
            if value is not None:  # "Only now" is Stop Watching
                self.schedule.addItem(label, value)
        if self.schedule.findData(watch.schedule) < 0:  # cron fields set from a terminal
            self.schedule.addItem(describe_schedule(watch.schedule), watch.schedule)
        self.schedule.setCurrentIndex(self.schedule.findData(watch.schedule))
        self.ignore_text = QPlainTextEdit("\n".join(watch.ignore), self)
        self.ignore_text.setTabChangesFocus(True)  # Tab moves on: a list has no tabs
        self.ignore_text.setPlaceholderText(
            "text that changes without mattering, one regular expression per line"
        )
        self.ignore_text.setMaximumHeight(80)
        form.addRow("Capture again", self.schedule)
        form.addRow("Ignore in comparisons", self.ignore_text)
        layout.addLayout(form)
        self.problems = QLabel(self)
        self.problems.setWordWrap(True)
        layout.addWidget(self.problems)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def accept(self) -> None:
        try:
            ignore = parse_ignore_patterns(
                self.ignore_text.toPlainText(), "text to ignore in comparisons"
            )
        except InputError as exc:
            self.problems.setText(exc.message)
            return
        self.schedule_value, self.ignore = str(self.schedule.currentData()), ignore
        super().accept()
