"""Search-as-you-type and the filter bar.

The search field debounces typing (:data:`DEBOUNCE_MS`): keys that arrive together (a
held key, a fast burst) become one query. The wait is short because it is added to every
keystroke's answer and a superseded query costs little: the model runs each one on a
worker thread and interrupts it in SQLite when the next arrives, so typing never waits
for the database.
"""

from __future__ import annotations

from datetime import UTC, datetime, time

from PySide6.QtCore import QDate, QTimer, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from archiver_app.api.table import Fidelity, Filters, SnapshotState

DEBOUNCE_MS = 25

MIME_CHOICES = [
    ("Any type", ""),
    ("Web pages", "text/html"),
    ("PDF", "application/pdf"),
    ("Images", "image/"),
    ("Text", "text/plain"),
]


class SearchField(QLineEdit):
    """Emits :attr:`search_changed` once typing pauses, and at once on Return."""

    search_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("search")
        self.setPlaceholderText("Search titles, addresses and page text")
        self.setClearButtonEnabled(True)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._fire)
        self.textEdited.connect(lambda _t: self._timer.start())
        self.returnPressed.connect(self._fire)
        self.textChanged.connect(self._maybe_cleared)
        self._last = ""

    def search_now(self) -> None:
        """Search for the text typed now, if it was not searched for yet."""
        self._fire()

    def _fire(self) -> None:
        self._timer.stop()
        if self.text() != self._last:
            self._last = self.text()
            self.search_changed.emit(self._last)

    def _maybe_cleared(self, value: str) -> None:
        if not value and self._last:  # the clear button does not emit textEdited
            self._fire()

    def set_search(self, value: str) -> None:
        """Set the text programmatically (saved search) and search at once."""
        self.setText(value)
        self._fire()


class FilterBar(QWidget):
    """Domain, date range, tag, type, status and fidelity; emits :attr:`filters_changed`."""

    filters_changed = Signal(object)  # Filters

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("filter_bar")
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 0, 6, 0)
        self.domain = QLineEdit(self)
        self.domain.setPlaceholderText("domain")
        self.domain.setMinimumWidth(140)
        self.domain.setMaximumWidth(220)
        self.use_dates = QCheckBox("From", self)
        self.date_from = QDateEdit(self)
        self.date_to = QDateEdit(self)
        for edit in (self.date_from, self.date_to):
            edit.setCalendarPopup(True)
            edit.setDisplayFormat("yyyy-MM-dd")
            edit.setEnabled(False)
        self.date_from.setDate(QDate.currentDate().addMonths(-1))
        self.date_to.setDate(QDate.currentDate())
        self.tag = QLineEdit(self)
        self.tag.setPlaceholderText("tag")
        self.tag.setMinimumWidth(110)
        self.tag.setMaximumWidth(180)
        self.mime = QComboBox(self)
        for label, value in MIME_CHOICES:
            self.mime.addItem(label, value)
        self.state = QComboBox(self)
        self.state.addItem("Any status", "")
        for st in SnapshotState:
            self.state.addItem(st.value.title(), st.value)
        self.fidelity = QComboBox(self)
        self.fidelity.addItem("Any fidelity", "")
        for fid in Fidelity:
            self.fidelity.addItem(fid.value.title(), fid.value)
        for w in (
            QLabel("Filter:", self),
            self.domain,
            self.use_dates,
            self.date_from,
            QLabel("to", self),
            self.date_to,
            self.tag,
            self.mime,
            self.state,
            self.fidelity,
        ):
            row.addWidget(w)
        row.addStretch(1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self._emit)
        self.domain.textEdited.connect(lambda _t: self._timer.start())
        self.tag.textEdited.connect(lambda _t: self._timer.start())
        self.use_dates.toggled.connect(self._dates_toggled)
        for edit in (self.date_from, self.date_to):
            edit.dateChanged.connect(lambda _d: self._emit())
        for combo in (self.mime, self.state, self.fidelity):
            combo.currentIndexChanged.connect(lambda _i: self._emit())

    def _dates_toggled(self, on: bool) -> None:
        self.date_from.setEnabled(on)
        self.date_to.setEnabled(on)
        self._emit()

    def filters(self) -> Filters:
        def day(d: QDate, extra_days: int = 0) -> datetime:
            qd = d.addDays(extra_days)
            return datetime.combine(
                datetime(qd.year(), qd.month(), qd.day()).date(), time(), tzinfo=UTC
            )

        dates = self.use_dates.isChecked()
        return Filters(
            domain=self.domain.text().strip(),
            date_from=day(self.date_from.date()) if dates else None,
            date_to=day(self.date_to.date(), 1) if dates else None,
            tag=self.tag.text().strip(),
            mime=str(self.mime.currentData() or ""),
            state=str(self.state.currentData() or ""),
            fidelity=str(self.fidelity.currentData() or ""),
        )

    def set_filters(self, f: Filters) -> None:
        self.blockSignals(True)
        for w in (self.domain, self.tag, self.mime, self.state, self.fidelity, self.use_dates):
            w.blockSignals(True)
        self.domain.setText(f.domain)
        self.tag.setText(f.tag)
        self.mime.setCurrentIndex(max(0, self.mime.findData(f.mime)))
        self.state.setCurrentIndex(max(0, self.state.findData(f.state)))
        self.fidelity.setCurrentIndex(max(0, self.fidelity.findData(f.fidelity)))
        self.use_dates.setChecked(f.date_from is not None)
        self.date_from.setEnabled(f.date_from is not None)
        self.date_to.setEnabled(f.date_from is not None)
        if f.date_from is not None:
            self.date_from.setDate(QDate(f.date_from.year, f.date_from.month, f.date_from.day))
        if f.date_to is not None:
            end = QDate(f.date_to.year, f.date_to.month, f.date_to.day).addDays(-1)
            self.date_to.setDate(end)
        for w in (self.domain, self.tag, self.mime, self.state, self.fidelity, self.use_dates):
            w.blockSignals(False)
        self.blockSignals(False)

    def _emit(self) -> None:
        self.filters_changed.emit(self.filters())

    def clear(self) -> None:
        """Back to no filter (said to the view only when one was set)."""
        if self.filters() != Filters():
            self.set_filters(Filters())
            self._emit()

    def keyPressEvent(self, event: object) -> None:  # Esc clears the filters
        from PySide6.QtGui import QKeyEvent

        if isinstance(event, QKeyEvent) and event.matches(QKeySequence.StandardKey.Cancel):
            self.clear()
            return
        super().keyPressEvent(event)  # type: ignore[arg-type]


__all__ = ["DEBOUNCE_MS", "FilterBar", "SearchField"]
