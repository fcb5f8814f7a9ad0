"""The status bar: captures shown, worker state, migration progress, copies, disk free.

Figures that count over big tables are computed by
:func:`~archiver_app.api.status.status_figures` through a ``BackgroundOp`` every few
seconds; the capture count comes from the table model as ids stream in. While a shared
library's database does not answer (``lib.outages``, which that reading and the other loops
that retry report to), a notice at the bar's left says so; it goes once the database
answers again, and the window reads its views again then.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QProgressBar, QSizePolicy, QStatusBar, QWidget

from archiver_app.api.status import StatusFigures, status_figures
from archiver_app.gui.fitting import elide_label_text
from archiver_app.gui.ops import BackgroundOp, OpRunner, Reads
from archiver_app.gui.snapshot_model import human_size
from archiver_app.library import Library
from archiver_app.library_share import FolderCheck
from archiver_app.outages import Outage, OutageKind

REFRESH_MS = 5000
#: How often the progress of running work is shown while it runs.
OP_POLL_MS = 500
READING = "reading the status bar's figures"
#: What the window says while the library's database does not answer.
UNREACHABLE = (
    "The library's database is unreachable \N{EM DASH} Archiver keeps trying;"
    " nothing saved is lost."
)
#: The least of it shown in a narrow window (cut there with "…").
UNREACHABLE_SHORT = "The library's database is unreachable…"
ANSWERS_AGAIN = "The library's database answers again."
OUTAGE_STYLE = (
    "#outage { background: #fff4ce; color: #4d3800; border: 1px solid #e0b252;"
    " border-radius: 3px; padding: 1px 8px; }"
)


class _Notice(QLabel):
    """The outage notice: all of its sentence where there is room, else cut with "…", so
    that the counters at the bar's right keep theirs; never shorter than its first words."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.full = ""
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def show_text(self, text: str) -> None:
        self.full = text
        self.setText(text)
        self.updateGeometry()

    def _width(self, text: str) -> int:
        """``text``'s width with the notice's padding and border."""
        frame = super().sizeHint().width() - self.fontMetrics().horizontalAdvance(self.text())
        return self.fontMetrics().horizontalAdvance(text) + frame

    def sizeHint(self) -> QSize:
        return QSize(self._width(self.full), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self._width(UNREACHABLE_SHORT), super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.setText(elide_label_text(self, self.full, Qt.TextElideMode.ElideRight))


class StatusPanel(QWidget):
    """Owns the permanent widgets of a ``QStatusBar`` and keeps them current.

    Its reading every few seconds also tells when captures were added or deleted by
    another process (``archiver capture`` in a terminal, a watch's timer, another machine
    of a shared library): :attr:`changed_elsewhere`, after which the window reads its
    table again. Watches added, changed or stopped elsewhere, or captures compared (what a
    watch's run found): :attr:`watches_elsewhere`."""

    changed_elsewhere = Signal()
    watches_elsewhere = Signal()
    #: the library's folder is gone (moved, deleted, unplugged): its FolderCheck; once
    library_gone = Signal(object)
    #: the library's database answers again after an outage
    found_again = Signal()

    def __init__(self, bar: QStatusBar, library: Library, runner: OpRunner) -> None:
        super().__init__(bar)
        self.bar, self.library, self.runner = bar, library, runner
        self.outage = _Notice(bar)  # at the left, before the messages: seen first
        self.outage.setObjectName("outage")
        self.outage.setStyleSheet(OUTAGE_STYLE)
        self.outage.setTextFormat(Qt.TextFormat.PlainText)
        self.outage.hide()
        bar.insertWidget(0, self.outage)
        self._outage: Outage | None = None  # the one shown
        self.count = self._label("count")
        self.op = QProgressBar(bar)
        self.op.setObjectName("op_progress")
        self.op.setMaximumWidth(160)
        self.op.setMaximumHeight(14)
        self.op.setTextVisible(False)
        self.op.hide()
        bar.addPermanentWidget(self.op)
        self.worker = self._label("worker")
        self.migration = self._label("migration")
        self.background = self._label("background")  # what the app does by itself, idle
        self.background.hide()
        self.copies = self._label("copies_status")
        self.disk = self._label("disk")
        self.figures: StatusFigures | None = None
        self._reads = Reads()
        self._seen: tuple[int, int] | None = None  # captures counted, newest id
        # the watches and the newest comparison's time, as last read
        self._watches: tuple[object, ...] | None = None
        self._baseline = False  # the window read everything itself: no news to tell
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)
        self.timer.start()
        # While work runs, its progress is read a few times a second (only then).
        self.op_timer = QTimer(self)
        self.op_timer.setInterval(OP_POLL_MS)
        self.op_timer.timeout.connect(self._ops_changed)
        runner.changed.connect(self._ops_changed)

    def _label(self, name: str) -> QLabel:
        label = QLabel(self.bar)
        label.setObjectName(name)
        self.bar.addPermanentWidget(label)
        return label

    def show_background(self, text: str | None) -> None:
        """Say what the app is doing by itself (a scheduled scrub), or nothing."""
        self.background.setText(text or "")
        self.background.setVisible(bool(text))

    def set_count(self, rows: int, loading: bool, partial: bool = False) -> None:
        if partial:
            self.count.setText(f"newest {rows:,} matches; finding and sorting all …")
            return
        noun = "capture" if rows == 1 else "captures"
        self.count.setText(f"{rows:,} {noun}" + (" …" if loading else ""))

    def refresh(self, *, baseline: bool = False) -> None:
        """Read the figures again (``baseline``: the window has just read the library
        itself, so the captures counted now are not news from elsewhere)."""
        self._baseline = self._baseline or baseline
        if not self._reads.begin():
            return
        library = self.library
        BackgroundOp(
            self.runner,
            lambda _p, _c: _read(library),
            label="status",
            blocks_quit=False,
        ).success(self._show).failure(self._failed).run_in_background()

    def _failed(self, failure: object) -> None:
        self._reads.end()
        self.worker.setText("status unavailable")
        self.worker.setToolTip(str(getattr(failure, "exception", failure)))
        self._show_outage()

    def _show_outage(self) -> None:
        """Say, or stop saying, that the library's database does not answer (a folder
        gone is said by the window's box: nothing more is tried there)."""
        outage = self.library.outages.of(OutageKind.DATABASE)
        if outage is self._outage:
            return
        self._outage = outage
        if outage is None:
            self.outage.hide()
            self.bar.showMessage(ANSWERS_AGAIN, 8000)
            self.found_again.emit()
            return
        self.outage.show_text(UNREACHABLE)
        self.outage.setToolTip(  # (all of the sentence too: a narrow window cuts it)
            f"{UNREACHABLE}\nSince {outage.since:%H:%M}: {outage.reason}\nThe window shows"
            " what it read last and reads again by itself once the database answers."
        )
        self.outage.show()

    def _show(self, f: StatusFigures | FolderCheck) -> None:
        again = self._reads.end()
        self._show_outage()
        if isinstance(f, FolderCheck):  # nothing more is read from a library gone
            self.timer.stop()
            self.worker.setText("library gone")
            self.library_gone.emit(f)
            return
        self.figures = f
        seen = (f.migration_total, f.newest_capture)
        if not again or self._baseline:  # (else the read that follows tells)
            if self._seen is not None and seen != self._seen and not self._baseline:
                self.changed_elsewhere.emit()
            self._seen, self._baseline = seen, self._baseline and again
        if not again:  # (a watch the app changed itself: its view has read it already)
            watched = (*f.watches, f.newest_change)
            if self._watches is not None and watched != self._watches:
                self.watches_elsewhere.emit()
            self._watches = watched
        self.worker.setText(f.worker)
        if f.migration_total and f.migration_done < f.migration_total:
            pct = 100 * f.migration_done // f.migration_total
            self.migration.setText(f"Upgrading folders: {pct}%")
            self.migration.show()
        else:
            self.migration.hide()
        self.copies.setText(f"{f.files_safe:,} files safe · {f.files_at_risk:,} at risk")
        self.copies.setToolTip(
            f"Safe: files with the verified copies their policy asks for ({f.policy_wanted})."
        )
        self.disk.setText(f"{human_size(f.disk_free)} free" if f.disk_free is not None else "")
        if again:
            self.refresh()

    def _ops_changed(self) -> None:
        """Show how far the first visible operation is, when it knows.

        Work without a known fraction (a crawl finding pages as it goes) gets no bar: the
        jobs panel and the worker figure say what runs, and a busy indicator would animate
        at 60 frames a second on the GUI thread for as long as the work lasts.
        """
        visible = [op for op in self.runner.running() if op.blocks_quit]
        if visible and not self.op_timer.isActive():
            self.op_timer.start()
        elif not visible:
            self.op_timer.stop()
        latest = visible[0].progress.latest() if visible else None
        if latest is None or latest.fraction is None:
            self.op.hide()
            return
        self.op.setToolTip("\n".join(op.label for op in visible))
        self.op.setRange(0, 1000)
        self.op.setValue(int(latest.fraction * 1000))
        self.op.show()


def _read(library: Library) -> StatusFigures | FolderCheck:
    """The figures; first, whether the library's folder is still there (a folder renamed
    away keeps its database readable through the connections open on it). Told to
    ``lib.outages``: this read every few seconds is how the window learns that the library
    was lost, and found again."""
    check = library.check_folder()
    if not check.ok:
        library.outages.lost(READING, OutageKind.FOLDER, check.message)
        return check
    return library.outages.attempt(
        READING,
        lambda: status_figures(library, library.clock()),
        kinds=(OutageKind.DATABASE, OutageKind.FOLDER),
    )
