"""Tools ▸ Verify Library…: run ``archiver verify`` from the app and show what it found;
Tools ▸ Verify an Export…: ``archiver verify-export`` on a WACZ the user chooses.

:class:`VerifyActions` puts the action in the window's Tools menu; it runs the verify job
through ``lib.integrity`` (the job the CLI runs, listed in the Jobs panel) on the op runner,
and opens :class:`VerifyResultsDialog` when it is done: the count of each verdict, and the
files that are not as captured, grouped by capture, in ``docs/prove.md``'s words (a file
altered after capture is left as it is; bit rot repaired names the drive it came from).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QPushButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from archiver_app.api.integrity import MEANING, VerifyFindings
from archiver_app.gui.errors import show_error
from archiver_app.gui.ops import BackgroundOp, OpFailure
from archiver_app.gui.verify_model import WORDING, FindingsModel
from archiver_app.tasks import CancelToken, Progress, ProgressUpdate
from archiver_app.units import human_bytes

if TYPE_CHECKING:
    from archiver_app.api.exports import VerifyReport
    from archiver_app.gui.main_window import MainWindow
    from archiver_app.library import Library

#: Findings of an export shown in its message (the rest: ``archiver verify-export``).
MAX_EXPORT_LINES = 20
#: Up to this many files, every capture opens; past it, the first ones (a long list stays
#: quick to open and to read from the top).
_EXPAND_UP_TO = 2000


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

    def __init__(
        self, findings: VerifyFindings, library: Library, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.library = library
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

        self.model = FindingsModel(findings, self)
        self.tree = QTreeView(self)
        self.tree.setObjectName("verify_findings")
        self.tree.setModel(self.model)
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)  # thousands of rows scroll without measuring each
        if self.model.files() <= _EXPAND_UP_TO:
            self.tree.expandAll()
        else:  # the first captures open; the rest on demand
            for row in range(min(self.model.rowCount(), 50)):
                self.tree.expand(self.model.index(row, 0))
        self.tree.setColumnWidth(0, 420)
        self.tree.resizeColumnToContents(1)
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
        self.save_button = QPushButton("&Save report…", self)
        self.save_button.setObjectName("verify_save_report")
        self.save_button.setToolTip("Save every finding as a JSON Lines or CSV file")
        self.save_button.setEnabled(bool(findings.snapshots))
        self.save_button.setAutoDefault(False)  # Return closes; Alt+S saves
        self.save_button.clicked.connect(self.save_report)
        close = buttons.button(QDialogButtonBox.StandardButton.Close)
        close.setDefault(True)
        buttons.addButton(self.save_button, QDialogButtonBox.ButtonRole.ActionRole)
        layout.addWidget(buttons)

    def save_report(self) -> Path | None:
        """Ask where, then write every finding there; the file written, if any."""
        chosen, chosen_filter = QFileDialog.getSaveFileName(
            self,
            "Save verify report",
            str(Path.home() / f"verify-{self.findings.job_id}.jsonl"),
            "JSON Lines (*.jsonl);;CSV (*.csv)",
        )
        if not chosen:
            return None
        dest = Path(chosen)
        if not dest.suffix:
            dest = dest.with_suffix(".csv" if "csv" in chosen_filter.lower() else ".jsonl")
        try:
            written = self.library.integrity.save_report(self.findings, dest)
        except OSError as exc:
            show_error(self, exc, "saving the verify report")
            return None
        self.summary.setText(f"{self._summary_text()}\nSaved {written} findings to {dest}.")
        return dest

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
        more = (
            f"\n{f.not_listed} more not listed here (the job's report file is gone)."
            if f.not_listed
            else ""
        )
        review = (
            f"\nEditions needing review (a file of theirs is damaged): "
            f"{', '.join(f.editions_to_review)}. An accepted one stays accepted and frozen, "
            "flagged for review: open it to see why."
            if f.editions_to_review
            else ""
        )
        return f"{head}\n{f.summary()}.{more}{review}"


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
        self.export_action = QAction("Verify an &Export…", window)
        self.export_action.setToolTip(
            "Check that a WACZ export's files are as exported, who signed it and when"
        )
        self.export_action.triggered.connect(lambda _checked=False: self.check_export())
        _menu(window, "Tools").addAction(self.export_action)
        self.export_box: QMessageBox | None = None
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
        self.dialog = VerifyResultsDialog(findings, self.window.library, self.window)
        self.dialog.show()

    def _failed(self, failure: OpFailure) -> None:
        self.op = None
        self.action.setEnabled(True)
        self.window.statusBar().clearMessage()
        if not failure.cancelled:
            show_error(self.window, failure, "verifying the library")

    # ------------------------------------------------------------------ an export

    def check_export(self, path: Path | None = None) -> BackgroundOp[VerifyReport] | None:
        """Check ``path`` (None: ask for a WACZ) as ``archiver verify-export`` does, in the
        background, then say what was found."""
        window = self.window
        if path is None:
            name, _ = QFileDialog.getOpenFileName(
                window, "Verify an export", "", "WACZ files (*.wacz);;All files (*)"
            )
            if not name:
                return None
            path = Path(name)
        window.statusBar().showMessage(f"Checking {path.name}…")
        chosen, exports = path, window.library.exports

        def work(progress: Progress, cancel: CancelToken) -> VerifyReport:
            return exports.verify(chosen, progress=progress, cancel=cancel)

        def progress(update: ProgressUpdate) -> None:
            if update.total:  # a large export takes a while to hash: say how far it is
                share = f"{100 * update.done // update.total}%"
                window.statusBar().showMessage(
                    f"Checking {chosen.name}: {share} ({human_bytes(update.done)} of "
                    f"{human_bytes(update.total)})"
                )

        def failed(failure: OpFailure) -> None:
            window.statusBar().clearMessage()
            if not failure.cancelled:
                show_error(window, failure, "checking the export")

        return (
            BackgroundOp(window.runner, work, label="checking an export", blocks_quit=False)
            .with_progress(progress)
            .success(self._export_checked)
            .failure(failed)
            .run_in_background()
        )

    def _export_checked(self, report: VerifyReport) -> None:
        name, count = report.path.name, report.count_text()  # as verify-export ends
        if report.ok:
            title, text = "Export intact", f"{name} is as it was exported ({count})."
        elif report.damaged:
            title, text = "Export damaged", f"{name} is damaged: cut short, or not a zip file."
        elif (cut := report.cut_text()) is not None:
            title, text = "Export cut short", f"{name} is damaged: {cut}."
        elif report.only_zip_damaged:  # bookkeeping, not content: said apart
            content = "as signed" if report.signed else "as its datapackage.json lists"
            title, text = (
                "Export's zip damaged",
                f"{name}'s {_zip_damage(report)}, but its content is {content} ({count}).",
            )
        elif report.only_as_a_file:  # a copy of a release, of other bytes: not the one cited
            content = "as signed" if report.signed else "as its datapackage.json lists"
            zip_too = f"its {damage} and " if (damage := _zip_damage(report)) else ""
            title, text = (
                "Export not the release on record",
                f"{name}'s content is {content}, but {zip_too}the file is not byte-identical "
                f"to the release on record ({count}).",
            )
        else:
            title, text = "Export changed", f"{name} is not as it was exported ({count})."
        self.window.statusBar().showMessage(text, 15000)
        lines = report.lines()[:-1]  # the verdict is the text above them
        shown = lines[:MAX_EXPORT_LINES]
        if len(lines) > len(shown):
            shown.append(f"(and {len(lines) - len(shown)} more; archiver verify-export lists all)")
        icon = QMessageBox.Icon.Information if report.ok else QMessageBox.Icon.Warning
        box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Close, self.window)
        box.setInformativeText("\n".join(shown))
        self.export_box = box
        box.open()


def _zip_damage(report: VerifyReport) -> str:
    """What of the zip's bookkeeping is damaged, after "X.wacz's"."""
    said = {"directory": "zip directory is damaged",
            "headers": "zip headers disagree (one is damaged)"}  # fmt: skip
    return " and ".join(said[part] for part in report.zip_parts)
