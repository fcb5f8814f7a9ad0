"""Bringing archives into the library from the main window: drops, File > Import.

WARC, ARC and WACZ files (or folders of them) are imported by an import job run in a child
process; an ArchiveBox data folder is registered at once and imported by the background
migration. Bookmarks files and web addresses dropped on the window open the capture dialog.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QMimeData, QObject, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox

from archiver_app.api.imports import ImportReport
from archiver_app.gui.capture_dialog import TAB_BOOKMARKS
from archiver_app.gui.errors import show_error
from archiver_app.gui.import_notice import import_notice
from archiver_app.gui.ops import IMPORT_ON_QUIT, BackgroundOp, OpFailure
from archiver_app.tasks import ProgressUpdate
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow

BOOKMARK_SUFFIXES = (".html", ".htm", ".json", ".txt")
ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz", ".wacz")
#: The status bar's word on an import the user cancelled.
CANCELLED_IMPORT = "Import cancelled: the file it was importing was undone (files already in stay)."


class WindowImports(QObject):
    """Imports for ``window``. Threading: GUI thread only."""

    finished = Signal()  # archives were imported; the report is in last_report

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.last_report: ImportReport | None = None

    def drop(self, mime: QMimeData) -> None:
        """What was dropped on the window: archives are imported, the rest captured."""
        local = [u.toLocalFile() for u in mime.urls() if u.isLocalFile()]
        web = [u.toString() for u in mime.urls() if not u.isLocalFile()]
        archives = [  # folders too: the importer takes the archives inside them
            f for f in local if f.lower().endswith(ARCHIVE_SUFFIXES) or os.path.isdir(f)
        ]
        capture = self.window.capture
        if archives:
            self.import_archives(archives)
        elif local and local[0].lower().endswith(BOOKMARK_SUFFIXES):
            capture.open_dialog(tab=TAB_BOOKMARKS).load_bookmarks(Path(local[0]))
        elif web:
            capture.open_dialog("\n".join(web))
        elif mime.hasText():
            capture.open_dialog(mime.text())

    def choose_archives(self) -> BackgroundOp[Any] | None:
        """File > Import Web Archives: pick WARC, ARC or WACZ files to copy in and index."""
        patterns = " ".join(f"*{s}" for s in ARCHIVE_SUFFIXES)
        paths, _ = QFileDialog.getOpenFileNames(
            self.window, "Import web archives", "", f"Web archives ({patterns});;All files (*)"
        )
        return self.import_archives(paths) if paths else None

    def import_archives(self, paths: list[str]) -> BackgroundOp[Any]:
        """Import WARC/ARC/WACZ files as a job and replay the first imported page."""
        imports, bar = self.window.library.imports, self.window.statusBar()

        def work(progress: Any, cancel: Any) -> ImportReport:
            return imports.run([Path(p) for p in paths], progress=progress, cancel=cancel)

        def progress(update: ProgressUpdate) -> None:
            bar.showMessage(f"Importing {update.message}")

        return (
            BackgroundOp(self.window.runner, work, label="import archives", on_quit=IMPORT_ON_QUIT)
            .with_progress(progress)
            .success(self.imported)
            .failure(self.import_failed)
            .run_in_background()
        )

    def import_failed(self, failure: OpFailure) -> None:
        """A cancel the user asked for (Jobs panel, status bar) is no error: said in the
        status bar; anything else in an error box."""
        if failure.cancelled:
            self.window.statusBar().showMessage(CANCELLED_IMPORT, 15000)
            return
        show_error(self.window, failure, "importing")

    def choose_archivebox(self) -> BackgroundOp[Any] | None:
        folder = QFileDialog.getExistingDirectory(
            self.window, "Choose the ArchiveBox data folder (the one holding archive/)"
        )
        return self.import_archivebox(Path(folder)) if folder else None

    def import_archivebox(self, folder: Path) -> BackgroundOp[Any]:
        """Register an ArchiveBox data folder (O(1)); the background migration imports it."""
        imports, window = self.window.library.imports, self.window

        def registered(_source: object) -> None:
            window.statusBar().showMessage(
                f"ArchiveBox folder {folder} added: its snapshots are imported in the "
                "background (Upgrading folders in the status bar).",
                15000,
            )
            window.migrator.poke()

        def register(_p: Any, _c: Any) -> None:
            imports.register_archivebox(folder)

        return (
            BackgroundOp(window.runner, register, label="")
            .success(registered)
            .failure(lambda f: show_error(window, f, "adding the ArchiveBox folder"))
            .run_in_background()
        )

    def imported(self, report: ImportReport) -> None:
        """Show what the import job did, then replay its first page."""
        window = self.window
        window.refresh_all()
        pages = [sid for o in report.outcomes for sid in o.snapshot_ids]
        summary = f"Imported {counted(report.records, 'record')}, {counted(len(pages), 'page')}."
        notice = import_notice(report)
        if notice is not None:  # not modal to the app: the replay below opens meanwhile
            box = QMessageBox(
                QMessageBox.Icon.Warning if notice.failed else QMessageBox.Icon.Information,
                notice.title,
                f"{summary}\n\n{notice.text}",
                QMessageBox.StandardButton.Ok,
                window,
            )
            box.setObjectName("importNotice")
            if notice.details:
                box.setDetailedText(notice.details)
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()
        window.statusBar().showMessage(summary, 8000)
        self.last_report = report
        if pages:
            window.tabs.open_replay(pages[0])
        self.finished.emit()
