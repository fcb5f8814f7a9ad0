"""The drives panel: destinations, whether each is plugged in, its copies and free space.

Shows ``lib.drives`` on a timer (in the background): the same figures as ``archiver
drives``, counted under the retention policy. A known drive that appears (its marker file
is back, where it was or at an OS mount point) raises :attr:`DrivesPanel.drive_plugged` so
the tray can notify. The Jobs panel's news that a mirror, verify or offload started or
ended (:attr:`~archiver_app.gui.jobs_panel.JobsPanel.drive_jobs_changed`) refreshes it at
once, so "busy" follows a run started from a terminal too. Mirror now / Verify copies /
Offload / Export / Add drive call the mirror API (the long ones in a child process);
Retire Drive… is :mod:`archiver_app.gui.drive_retire`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from archiver_app.api.drives import DestinationStatus, LaptopStatus
from archiver_app.gui.drive_retire import DriveRetirement
from archiver_app.gui.errors import show_error
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner, Reads
from archiver_app.gui.snapshot_model import human_size
from archiver_app.gui.tables import RowsModel, list_table
from archiver_app.library import Library
from archiver_app.outages import outage_of
from archiver_app.tasks import ProgressUpdate
from archiver_app.units import counted, upper_first

REFRESH_MS = 3000
SCAN_EVERY = 5  # refreshes between scans of the OS mount points (15 s)
DRIVE_HEADERS = ["Drive", "State", "Free", "Present", "Not here", "Corrupted", "Last verified"]
#: What each column counts (over its header): "Not here" is no loss by itself.
DRIVE_TIPS = [
    "The drive's label; its folder shows over the name",
    "Plugged in or not, and whether a mirror or verify (here or in a terminal) is using it:"
    " then it is not safe to unplug",
    "Free space on the drive",
    "Verified copies this drive holds (none counts while this library's folder is not on it)",
    "Files the retention policy allows on this drive that it does not hold. Not lost: "
    "the laptop or other drives may hold them (the status bar counts files at risk)",
    "Copies on this drive that no longer match their digest (repaired from a good copy "
    "when one is in reach)",
    "When this drive's copies were last re-read and checked",
]


def laptop_summary(st: LaptopStatus) -> str:
    """One line on the library's own copies, on this computer."""
    when = f"{st.last_verified_at:%Y-%m-%d}" if st.last_verified_at else "never"
    text = f"This computer: {counted(st.present, 'file')}"
    if st.offloaded:
        text += f", {st.offloaded:,} offloaded (their copies are on drives)"
    text += f", last verified {when}"
    if st.corrupted:
        text += f", {st.corrupted:,} damaged"
    if st.scrub_due:
        text += " (due: verified when the app is idle)"
    return text + "."


def plugged_in_mirror(label: str) -> str:
    """What the mirror a drive's arrival starts is called (in the Jobs panel too). It is a
    whole mirror, as Mirror Now: the retention policy decides which of the plugged-in drives
    receive copies (the new one may need none while another does), so it is not named
    after the one drive as if it copied only to it."""
    return f"mirroring ({label} plugged in)"


class DrivesModel(RowsModel[DestinationStatus]):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(DRIVE_HEADERS, DRIVE_TIPS, parent=parent)

    def cell(self, r: DestinationStatus, col: int, role: int) -> Any:
        if role == Qt.ItemDataRole.UserRole:
            return r.id
        if role == Qt.ItemDataRole.ToolTipRole and col == 0:
            where = str(r.mount_path) if r.mount_path else "not plugged in"
            if r.library_folder_missing:  # the drive is there, this library's folder is not
                where += ": this library's folder is not on it (moved or deleted?)"
            return where
        if role == Qt.ItemDataRole.ForegroundRole and col == 5 and r.corrupted:
            return QColor("#c62828")
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if r.mounted:  # busy: a run holds its lock (from here or a terminal), as the CLI says
            state = "plugged in, " + ("busy, not safe to unplug" if r.busy else "safe to unplug")
            if r.library_folder_missing:
                state = "plugged in, library folder missing"
        else:
            state = "not plugged in"
        if not r.enabled:
            state = "retired"
        free = ""
        if r.free_bytes is not None:
            free = human_size(r.free_bytes)
            if r.capacity_bytes:
                free += f" of {human_size(r.capacity_bytes)}"
        values = [
            r.label,
            state,
            free,
            # as recorded: none of them counts as a copy while the folder is missing
            f"{r.present:,} (cannot be read)" if r.library_folder_missing else f"{r.present:,}",
            f"{r.missing:,}",
            f"{r.corrupted:,}",
            f"{r.last_verified_at:%Y-%m-%d %H:%M}" if r.last_verified_at else "never",
        ]
        return values[col]


class DrivesPanel(QWidget):
    """Destinations and copy states; actions wired to ``archiver_app.mirror`` when present."""

    drive_plugged = Signal(str)  # label
    message = Signal(str)  # for the status bar

    def __init__(self, library: Library, runner: OpRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("drives_panel")
        self.library, self.runner = library, runner
        self.model = DrivesModel(self)
        self._mounted: dict[int, bool] = {}
        self._reads = Reads()
        self._refreshes = 0
        self._mirror_op: BackgroundOp[Any] | None = None
        #: Start a mirror when a known drive is plugged in (the retention policy decides
        #: what it receives).
        self.auto_mirror = True
        self.scan_roots: list[Path] | None = None  # None: the OS's mount points

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.summary = QLabel(self)
        self.summary.setObjectName("drives_summary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        # The last finished operation's verdict, whole (the status bar cuts a long one)
        self.verdict = QLabel(self)
        self.verdict.setObjectName("drives_verdict")
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.verdict.hide()
        layout.addWidget(self.verdict)
        self.table = list_table(self, self.model, "drives_table")
        layout.addWidget(self.table, 1)
        buttons = QHBoxLayout()
        self.add_button = QPushButton("Add Drive…", self)
        self.mirror_button = QPushButton("Mirror Now", self)
        self.verify_button = QPushButton("Verify Copies", self)  # Tools has Verify Library…
        self.verify_button.setToolTip(
            "Re-read this computer's copies and each plugged-in drive's now, and repair any"
            " that changed from a good copy"
        )
        self.offload_button = QPushButton("Free Laptop Space", self)
        self.export_button = QPushButton("Export Collection…", self)
        self.retirement = DriveRetirement(self)
        for button in (
            self.add_button,
            self.retirement.button,
            self.mirror_button,
            self.verify_button,
            self.offload_button,
            self.export_button,
        ):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.add_button.clicked.connect(self.add_drive)
        self.mirror_button.clicked.connect(lambda: self.mirror_now())  # noqa: PLW0108 (not clicked(bool))
        self.verify_button.setToolTip(
            "Re-read every copy on this computer and on the plugged-in drives, and repair "
            "any that changed from a good copy"
        )
        self.verify_button.clicked.connect(
            lambda: self._run(self.library.mirror.verify_all, "verifying copies")
        )
        self.offload_button.clicked.connect(self._offload)
        self.export_button.clicked.connect(self.open_export)

        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)
        self.timer.start()
        self.refresh()

    def refresh(self) -> None:
        if not self._reads.begin():
            return
        drives, scan_roots = self.library.drives, self.scan_roots
        # Every SCAN_EVERY refreshes (and the first), look for known drives at the OS mount
        # points too, so a drive mounted somewhere new is recognised by its marker.
        scan = self._refreshes % SCAN_EVERY == 0
        self._refreshes += 1

        def read() -> tuple[list[DestinationStatus], LaptopStatus]:
            return drives.list(scan_roots=scan_roots, scan=scan), drives.laptop()

        outages = self.library.outages
        BackgroundOp(
            self.runner,
            lambda _p, _c: outages.attempt("reading the drives", read, log_others=False),
            label="drives",
            blocks_quit=False,
        ).success(self._refreshed).failure(self._failed).run_in_background()

    def _failed(self, failure: OpFailure) -> None:
        self._reads.end()
        self._refreshes = 0
        if outage_of(failure.exception) is not None:
            return  # said by the status bar while it lasts; the timer reads again
        self.timer.stop()
        show_error(self, failure, "reading the drives")

    def _refreshed(self, result: tuple[list[DestinationStatus], LaptopStatus]) -> None:
        rows, laptop_status = result
        laptop = laptop_summary(laptop_status)
        again = self._reads.end()
        self._refreshes = 0
        chosen = self.retirement.selected()
        self.model.set_rows(rows)
        # the refresh every few seconds resets the model: keep the drive the user chose
        for i, r in enumerate(rows):
            if chosen is not None and r.id == chosen.id:
                self.table.selectRow(i)
        self.retirement.follow_selection()
        for r in rows:
            was = self._mounted.get(r.id)
            if was is False and r.mounted:
                self.drive_plugged.emit(r.label)
                if self.auto_mirror and r.enabled:
                    self.mirror_now(plugged_in_mirror(r.label))
            self._mounted[r.id] = r.mounted
        if not rows:
            drives = (
                "No drives yet. Add an external drive or a folder as a destination, and the "
                "app keeps verified copies of your archive on it."
            )
        else:
            plugged = sum(1 for r in rows if r.mounted)
            drives = f"{len(rows)} drive{'s' if len(rows) != 1 else ''}, {plugged} plugged in."
        self.summary.setText(f"{laptop} {drives}" if laptop else drives)
        if again:
            self.refresh()

    def mirror_now(self, doing: str = "mirroring") -> BackgroundOp[Any] | None:
        """Start a mirror run unless one is running already (one at a time)."""
        if self._mirror_op is not None:
            return None
        op = self._run(self.library.mirror.run, doing)
        if op is not None:
            self._mirror_op = op
            self.runner.changed.connect(self._forget_finished_mirror)
        return op

    def _forget_finished_mirror(self) -> None:
        op = self._mirror_op
        if op is not None and not any(i.cancel is op.cancel_token for i in self.runner.running()):
            self._mirror_op = None
            self.runner.changed.disconnect(self._forget_finished_mirror)

    def show_verdict(self, text: str) -> None:
        """Say what an operation did: in the status bar and, whole, over the table."""
        self.message.emit(text)
        self.verdict.setText(text)
        self.verdict.show()
        self.refresh()

    def _finished(self, doing: str, result: Any = None) -> None:
        said = self.library.jobs.describe(result)  # the verdicts, not only "finished"
        self.message.emit(f"Finished {doing}" + (": " + "; ".join(said) if said else "."))
        if said:
            self.verdict.setText(f"{upper_first(doing)}: " + "\n".join(said))
        self.verdict.setVisible(bool(said))
        self.refresh()

    def add_drive(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose the drive or folder")
        if not folder:
            return
        suggested = Path(folder).name or "drive"  # the volume's name, as the system shows it
        label, ok = QInputDialog.getText(self, "Name this drive", "Label:", text=suggested)
        if ok:
            self.add_destination(folder, label.strip() or suggested)

    def add_destination(self, folder: str, label: str) -> BackgroundOp[Any] | None:
        mirror = self.library.mirror
        return (
            BackgroundOp(
                self.runner,
                lambda _p, _c: mirror.add_destination(folder, label),
                label="add drive",
            )
            .success(lambda _r: self.refresh())
            .failure(lambda f: show_error(self, f, "adding the drive"))
            .run_in_background()
        )

    def open_export(self) -> QDialog:
        """The export dialog, writing by default to the selected drive when it is plugged in."""
        from archiver_app.gui.export_dialog import ExportDialog

        folder = None
        index = self.table.currentIndex()
        if index.isValid():
            row = self.model.rows[index.row()]
            if row.mount_path is not None:
                folder = row.mount_path
        dialog = ExportDialog(self.library, self.runner, self, folder=folder)
        dialog.open()
        return dialog

    def _offload(self) -> None:
        days, ok = QInputDialog.getInt(
            self,
            "Free Laptop Space",
            "Free the laptop copies of captures older than (days), once the plugged-in "
            "drives hold enough verified copies (the copies missing are made first):",
            90,
            0,
            36500,
        )
        if ok:
            older_than = timedelta(days=days)
            self._run(partial(self.library.mirror.offload, older_than), "freeing laptop space")

    def _run(self, job: Callable[..., Any], doing: str) -> BackgroundOp[Any]:
        """Run ``job`` (a ``lib.mirror`` call: a job the Jobs panel shows, in a child
        process, since hashing a drive's worth of files is Python work)."""
        self.message.emit(f"{upper_first(doing)}…")

        def progress(update: ProgressUpdate) -> None:
            total = f"/{update.total}" if update.total else ""
            self.message.emit(f"{upper_first(doing)}: {update.done}{total} {update.message}")

        return (
            BackgroundOp(
                self.runner,
                lambda p, c: job(name=upper_first(doing), progress=p, cancel=c),
                label=doing,
            )
            .with_progress(progress)
            .success(lambda r: self._finished(doing, r))
            .failure(lambda f: show_error(self, f, doing))
            .run_in_background()
        )
