"""Export a collection, a tag or a search result as a WACZ file or a plain WARC folder.

The dialog picks *what* (a collection, a tag, the current search), *how* (WACZ, which
ReplayWeb.page and pywb open, or a folder of WARCs with a CDXJ index) and *where* (a file or
folder name, by default on the drive chosen in the drives panel). The export itself is an
export job (``lib.exports.run``, in a child process): it writes under a temporary name and
renames at the end, so a cancelled export or a drive pulled mid-copy never leaves something
that looks complete. Progress, cancel and the outcome stay in the dialog.
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from archiver_app.api.exports import CapturesNotAsCaptured, ExportResult, Selection
from archiver_app.errors import InputError
from archiver_app.gui.errors import question_box, show_error
from archiver_app.gui.export_signing import SigningChoice
from archiver_app.gui.fitting import WrappedText
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner
from archiver_app.gui.snapshot_model import human_size
from archiver_app.library import Library
from archiver_app.tasks import ProgressUpdate
from archiver_app.units import counted

FORMATS = [
    ("WACZ file (opens in ReplayWeb.page and pywb)", "wacz"),
    ("Folder of WARC files with a CDXJ index", "folder"),
]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def suggested_name(what: str, fmt: str, today: date, *, captures: int | None = None) -> str:
    """``climate-2026-11-21.wacz`` (or no suffix for a folder): safe on every file system.
    The captures on screen are named by their description and their count
    (``search-counter-10-captures-2026-11-29.wacz``), never by their ids: a name that
    listed every capture id ran to 60 characters of numbers."""
    words = _slug(what)[:60].strip("-")
    if captures is not None:  # the count stays whole however long the description
        words = f"{words[:44].strip('-')}-{_slug(counted(captures, 'capture'))}".strip("-")
    stem = f"{words or 'archive'}-{today.isoformat()}"
    return f"{stem}.wacz" if fmt == "wacz" else stem


def free_name(folder: Path, name: str) -> str:
    """``name``, or ``name`` with ``-2``, ``-3`` … before its suffix where ``folder`` holds
    it already: an export never writes over a file, so a name taken would be refused."""
    path = Path(name)
    stem, suffix = (path.stem, path.suffix) if path.suffix == ".wacz" else (name, "")
    candidate, n = name, 1
    while os.path.lexists(folder / candidate):
        n += 1
        candidate = f"{stem}-{n}{suffix}"
    return candidate


class ExportDialog(QDialog):
    """One export, from choice to outcome. ``finished_export`` holds the result on success."""

    altered_box: QMessageBox | None = None  # "not as captured: export without them?"

    def __init__(
        self,
        library: Library,
        runner: OpRunner,
        parent: QWidget | None = None,
        *,
        collection: str | None = None,
        search: str = "",
        shown: tuple[str, tuple[int, ...]] | None = None,
        folder: Path | None = None,
    ) -> None:
        """``shown``: what the table shows when it is narrowed (a search within a
        collection, a tag, filters), as (its description, its captures)."""
        super().__init__(parent)
        self.setObjectName("export_dialog")
        self.setWindowTitle("Export")
        self.setMinimumWidth(560)
        self.library, self.runner = library, runner
        self.op: BackgroundOp[ExportResult] | None = None
        self.finished_export: ExportResult | None = None
        self._folder = folder or Path.home()

        form = QFormLayout()
        self.what = self._what_choices(collection, search, shown)
        form.addRow("Export", self.what)

        self.format = QComboBox(self)
        self.format.setObjectName("export_format")
        for label, value in FORMATS:
            self.format.addItem(label, value)
        form.addRow("As", self.format)

        self.dest = QLineEdit(self)
        self.dest.setObjectName("export_dest")
        self.browse = QPushButton("Choose…", self)
        self.browse.setAutoDefault(False)  # Return submits the dialog, not this
        self.browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.dest, 1)
        row.addWidget(self.browse)
        form.addRow("To", row)
        self.signing = SigningChoice(library, self)  # Sign, Timestamp with <authority>
        form.addRow("Proof", self.signing)
        form.addRow("", self._keep_private_box())
        form.addRow("", self._bibliography_box())
        self._suggested = ""
        self._suggest()
        self.what.currentIndexChanged.connect(self._suggest)
        self.format.currentIndexChanged.connect(self._suggest)
        self.format.currentIndexChanged.connect(lambda: self.signing.set_format(self.fmt()))

        self.progress = QProgressBar(self)
        self.progress.setObjectName("export_progress")
        self.progress.setRange(0, 0)
        self.progress.hide()
        # the outcome's lines make the dialog taller: they squeezed the Proof rows onto
        # each other
        self.status = WrappedText(self)
        self.status.setObjectName("export_status")
        self.status.setText(
            "Written under a temporary name and renamed when complete, so an interrupted "
            "export never looks finished."
        )

        self._add_buttons()
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)

    def _add_buttons(self) -> None:
        self.buttons = QDialogButtonBox(self)
        self.export_button = self.buttons.addButton(
            "Export", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.export_button.setObjectName("export_button")
        self.export_button.setDefault(True)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.export_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self._cancel)

    def _keep_private_box(self) -> QCheckBox:
        """The choice to keep private headers in the export (:attr:`keep_private`)."""
        box = self.keep_private = QCheckBox("Keep cookies and login headers (private)", self)
        box.setObjectName("export_keep_private")
        box.setToolTip(
            "Cookie, Authorization and Set-Cookie headers are left out of exports: anyone "
            "holding them may act as you on the sites you were logged in to."
        )
        return box

    def _bibliography_box(self) -> QCheckBox:
        """The choice to write the captures' citations beside the export."""
        text = "Write a bibliography beside it (BibTeX, CSL-JSON)"
        box = self.bibliography = QCheckBox(text, self)  # a parent now: Tab's order
        box.setObjectName("export_bibliography")
        box.setToolTip(
            "NAME.bib and NAME.csl.json next to the export: a citation of each capture, "
            "for Zotero and other reference managers."
        )
        return box

    # ------------------------------------------------------------------ choices

    def _what_choices(
        self,
        collection: str | None,
        search: str,
        shown: tuple[str, tuple[int, ...]] | None,
    ) -> QComboBox:
        """The collections, tags, what is on screen and everything; what is on screen
        chosen."""
        what = QComboBox(self)
        what.setObjectName("export_what")
        for c in self.library.collections.all():
            what.addItem(f"Collection: {c.name}", ("collection", c.slug))
        for t in self.library.tags.all():
            what.addItem(f"Tag: {t.name}", ("tag", t.name))
        if shown is not None:  # exactly the captures on screen, filters and all
            label, ids = shown
            what.addItem(
                f"As shown: {label} ({counted(len(ids), 'capture')})", ("ids", (label, ids))
            )
        elif search.strip():
            what.addItem(f"Search: “{search.strip()}”", ("query", search.strip()))
        what.addItem("Everything in the library", ("all", ""))
        wanted = (  # what is on screen: the table's, the search, the collection, else all
            ("ids", shown) if shown is not None
            else ("query", search.strip()) if search.strip()
            else ("collection", collection) if collection else ("all", "")
        )  # fmt: skip
        found = [i for i in range(what.count()) if what.itemData(i) == wanted]
        what.setCurrentIndex(found[0] if found else 0)
        return what

    def selection(self) -> Selection:
        kind, value = self.what.currentData()
        if kind == "collection":
            return Selection(collection=value)
        if kind == "tag":
            return Selection(tag=value)
        if kind == "query":
            return Selection(query=value)
        if kind == "ids":
            label, ids = value
            return Selection(snapshot_ids=tuple(ids), title=label)
        return Selection()

    def fmt(self) -> str:
        return str(self.format.currentData())

    def _name(self, fmt: str, folder: Path) -> str:
        """The suggested name of the export chosen, free in ``folder``."""
        kind, value = self.what.currentData()
        if kind == "ids":  # the captures on screen: (their description, their ids)
            label, ids = value
            name = suggested_name(str(label), fmt, date.today(), captures=len(ids))
        else:
            name = suggested_name("library" if kind == "all" else str(value), fmt, date.today())
        return free_name(folder, name)

    def _suggest(self) -> None:
        """Follow the choices with the suggested name, unless the user typed their own."""
        current = self.dest.text().strip()
        if current and current != self._suggested:
            return
        self._suggested = str(self._folder / self._name(self.fmt(), self._folder))
        self.dest.setText(self._suggested)

    def _browse(self) -> None:
        start = self.dest.text().strip() or str(self._folder)
        if self.fmt() == "wacz":
            path, _ = QFileDialog.getSaveFileName(self, "Export as", start, "WACZ (*.wacz)")
        else:
            path = QFileDialog.getExistingDirectory(self, "Export into a new folder", start)
            if path:
                path = str(Path(path) / self._name("folder", Path(path)))
        if path:
            self.dest.setText(path)

    # ------------------------------------------------------------------ running

    def start(self, *, skip_altered: bool = False) -> BackgroundOp[ExportResult] | None:
        """Export as chosen; ``skip_altered``: leave out the captures not as captured (the
        answer to :meth:`_ask_skip_altered`)."""
        text = self.dest.text().strip()
        if not text:
            self.status.setText("Choose where to write the export.")
            return None
        dest = Path(text).expanduser()
        if self.fmt() == "wacz" and dest.suffix.lower() != ".wacz":
            dest = dest.with_name(dest.name + ".wacz")
        library, selection, fmt = self.library, self.selection(), self.fmt()
        try:  # the export checks again; this says why at once, before any work starts
            dest = library.exports.check_destination(dest, fmt)
        except InputError as exc:
            self.status.setText(str(exc))
            return None
        sign, stamp = self.signing.sign(), self.signing.timestamp()
        keep_private, bib = self.keep_private.isChecked(), self.bibliography.isChecked()
        self._set_choosing(False)
        self.progress.setRange(0, 0)
        self.progress.show()
        self.status.setText(f"Exporting to {dest}…")
        self.op = (
            BackgroundOp(
                self.runner,
                lambda p, c: library.exports.run(
                    selection,
                    dest,
                    fmt=fmt,
                    sign=sign,
                    timestamp=stamp,
                    keep_private_headers=keep_private,
                    bibliography=bib,
                    skip_altered=skip_altered,
                    progress=p,
                    cancel=c,
                ),
                label=f"export to {dest.name}",
            )
            .with_progress(self._progressed)
            .success(lambda r: self._done(r, signed=sign))
            .failure(self._failed)
            .run_in_background()
        )
        return self.op

    def _set_choosing(self, on: bool) -> None:
        for w in (self.what, self.format, self.dest, self.browse, self.export_button,
                  self.signing, self.keep_private, self.bibliography):  # fmt: skip
            w.setEnabled(on)

    def _progressed(self, update: ProgressUpdate) -> None:
        if update.total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * min(update.done, update.total) / update.total))
        if update.message:
            self.status.setText(update.message)

    def _done(self, result: ExportResult, *, signed: bool = False) -> None:
        self.op = None
        self.finished_export = result
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        lines = [
            f"Exported {counted(result.pages, 'page')}, {counted(result.records, 'record')}, "
            f"{human_size(result.bytes)} to {result.path}.",
            f"{result.carried[0].upper()}{result.carried[1:]}.",
        ]
        if result.originals_added:
            lines.append(
                "Included so the export stands alone: "
                f"{counted(result.originals_added, 'original record')} of deduplicated captures."
            )
        if result.left_out is not None:
            lines += result.left_out.describe()
        lines += SigningChoice.outcome(result, signed)
        if result.bibliography:
            lines.append("Bibliography: " + ", ".join(p.name for p in result.bibliography))
        lines += [f"Warning: {p}" for p in result.problems]
        self.status.setText("\n".join(lines))
        self.cancel_button.setText("Close")

    def _failed(self, failure: OpFailure) -> None:
        self.op = None
        self.progress.hide()
        self._set_choosing(True)
        if failure.cancelled:
            self.status.setText("Export cancelled; nothing was left at the destination.")
            return
        if isinstance(failure.exception, CapturesNotAsCaptured):
            self._ask_skip_altered(failure.exception)
            return
        self.status.setText("The export failed; nothing was left at the destination.")
        show_error(self, failure, "exporting")

    def _ask_skip_altered(self, exc: CapturesNotAsCaptured) -> None:
        """Some captures are not as captured: nothing was written; say which, and offer
        to export the rest without them (``archiver export --skip-altered``)."""
        self.status.setText(
            "Not exported: files of some of these captures were altered after capture or "
            "are missing. Nothing was written."
        )
        box = self.altered_box = question_box(
            self,
            QMessageBox.Icon.Warning,
            "Captures not as captured",
            "These captures' files differ from what was captured, and no mounted drive holds "
            "the captured bytes. Nothing was written.\n\n"
            + "\n".join(line.strip() for line in exc.damaged)
            + "\n\nIf a drive holds a copy, plug it in and run Tools > Verify Library… (it "
            "repairs bit rot from the drive), then export again; or export the rest "
            "without them.",
            "Export Without Them",
        )
        yes = box.button(QMessageBox.StandardButton.Yes)
        box.buttonClicked.connect(lambda b: b is yes and self.start(skip_altered=True))
        box.open()

    def _cancel(self) -> None:
        if self.op is not None:
            self.status.setText("Cancelling…")
            self.op.cancel()
            return
        self.reject()

    def reject(self) -> None:
        if self.op is not None:  # Esc or the window's close button while exporting
            self.op.cancel()
            return
        super().reject()
