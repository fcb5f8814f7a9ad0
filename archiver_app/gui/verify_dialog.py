"""Tools ▸ Verify Library…: run ``archiver verify`` from the app and show what it found.

:class:`VerifyActions` puts the action in the window's Tools menu; it runs the verify job
through ``lib.integrity`` (the job the CLI runs, listed in the Jobs panel) on the op runner,
and opens :class:`VerifyResultsDialog` when it is done: the count of each verdict, and the
files that are not as captured, grouped by capture, in ``docs/prove.md``'s words (a file
altered after capture is left as it is; bit rot repaired names the drive it came from).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMenu,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from archiver_app.api.integrity import (
    MEANING,
    IntegrityCode,
    SnapshotFindings,
    VerifyFindings,
    day,
)
from archiver_app.gui.errors import show_error
from archiver_app.gui.ops import BackgroundOp, OpFailure
from archiver_app.tasks import ProgressUpdate

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow

#: How each verdict reads in the list, and whether it needs the user's attention.
WORDING = {
    IntegrityCode.ALTERED: ("altered after capture", True),
    IntegrityCode.MISSING: ("missing", True),
    IntegrityCode.ROT: ("bit rot, not repaired", True),
    IntegrityCode.REPAIRED: ("bit rot repaired", False),
    IntegrityCode.RECORDED_LATER: ("digest recorded later", False),
}


def _needs_you(snap: SnapshotFindings) -> bool:
    return any(WORDING.get(f.code, ("", True))[1] for f in snap.files)


def _menu(window: MainWindow, title: str) -> QMenu:
    bar = window.menuBar()
    for action in bar.actions():
        menu = action.menu()
        if isinstance(menu, QMenu) and menu.title().replace("&", "") == title:
            return menu
    menu = bar.addMenu(f"&{title}")
    assert isinstance(menu, QMenu)
    return menu


class VerifyResultsDialog(QDialog):
    """What one verify found: a summary, then each capture with files not as captured."""

    def __init__(self, findings: VerifyFindings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("verify_results")
        self.setWindowTitle("Verify Library — results")
        if findings.snapshots:  # room for the list; a clean result stays a small box
            self.setMinimumSize(720, 420)
        else:
            self.setMinimumWidth(420)
        self.findings = findings
        layout = QVBoxLayout(self)
        self.summary = QLabel(self)
        self.summary.setObjectName("verify_summary")
        self.summary.setWordWrap(True)
        self.summary.setText(self._summary_text())
        layout.addWidget(self.summary)

        self.tree = QTreeWidget(self)
        self.tree.setObjectName("verify_findings")
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Capture, then its files", "Verdict"])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        for snap in sorted(findings.snapshots, key=lambda c: not _needs_you(c)):
            when = f" · captured {day(snap.captured_at)}" if snap.captured_at else ""
            bad_files = sum(1 for f in snap.files if WORDING.get(f.code, ("", True))[1])
            state = (
                f"{bad_files} file{'s' if bad_files > 1 else ''} not as captured"
                if bad_files
                else "as captured again (restored from a drive)"
                if any(f.code is IntegrityCode.REPAIRED for f in snap.files)
                else "as captured"
            )
            top = QTreeWidgetItem([f"{snap.title}{when}", state])
            top.setToolTip(0, snap.url)
            top.setData(0, Qt.ItemDataRole.UserRole, snap.snapshot_id)
            for f in snap.files:
                text, bad = WORDING.get(f.code, (str(f.code), True))
                if f.drive and f.code in (IntegrityCode.REPAIRED, IntegrityCode.ROT):
                    text += f" (drive “{f.drive}”)"
                item = QTreeWidgetItem([f.name, text])
                item.setToolTip(0, f.path)
                item.setToolTip(1, f"{f.message}\n{MEANING.get(f.code, '')}")
                if bad:
                    font = item.font(1)
                    font.setBold(True)
                    item.setFont(1, font)
                top.addChild(item)
            self.tree.addTopLevelItem(top)
        self.tree.expandAll()
        self.tree.resizeColumnToContents(1)
        self.tree.setColumnWidth(0, 420)
        self.tree.setVisible(bool(findings.snapshots))
        layout.addWidget(self.tree, 1)
        if not findings.snapshots:
            layout.addStretch(1)  # the summary stays at the top, above the Close button

        self.legend = QLabel(self)
        self.legend.setObjectName("verify_legend")
        self.legend.setWordWrap(True)
        shown = {f.code for s in findings.snapshots for f in s.files}
        self.legend.setText(
            "\n".join(
                f"{WORDING[code][0].capitalize()}: {MEANING[code]}."
                for code in WORDING
                if code in shown
            )
        )
        layout.addWidget(self.legend)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _summary_text(self) -> str:
        f = self.findings
        head = (
            "Every file is as it was captured."
            if f.ok and not f.snapshots
            else "Every file is as captured; some were restored or got their digest now."
            if f.ok
            else "Some files are not as they were captured. Files that no drive holds as "
            "captured were left as they are, for you to judge."
        )
        more = f"\n{f.not_listed} more not listed here (see the job's log)." if f.not_listed else ""
        return f"{head}\n{f.summary()}.{more}"


class VerifyActions(QObject):
    """Tools ▸ Verify Library…: the verify job, then its results dialog."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.action = QAction("&Verify Library…", window)
        self.action.setObjectName("verify_library")
        self.action.setToolTip(
            "Check every capture's files against the digests recorded when they were captured"
        )
        self.action.triggered.connect(self.start)
        _menu(window, "Tools").addAction(self.action)
        self.op: BackgroundOp[VerifyFindings] | None = None
        self.dialog: VerifyResultsDialog | None = None

    def start(self) -> BackgroundOp[VerifyFindings] | None:
        if self.op is not None:
            return None  # one at a time
        window, library = self.window, self.window.library
        self.action.setEnabled(False)
        window.statusBar().showMessage("Verifying the library…")

        def progress(update: ProgressUpdate) -> None:
            total = f"/{update.total}" if update.total else ""
            window.statusBar().showMessage(f"Verifying: {update.done}{total} {update.message}")

        self.op = (
            BackgroundOp(
                window.runner,
                lambda p, c: library.integrity.verify(progress=p, cancel=c),
                label="verifying the library",
            )
            .with_progress(progress)
            .success(self._done)
            .failure(self._failed)
            .run_in_background()
        )
        return self.op

    def _done(self, findings: VerifyFindings) -> None:
        self.op = None
        self.action.setEnabled(True)
        self.window.statusBar().showMessage(findings.summary(), 15000)
        self.dialog = VerifyResultsDialog(findings, self.window)
        self.dialog.show()

    def _failed(self, failure: OpFailure) -> None:
        self.op = None
        self.action.setEnabled(True)
        self.window.statusBar().clearMessage()
        if not failure.cancelled:
            show_error(self.window, failure, "verifying the library")
