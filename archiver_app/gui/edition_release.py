"""The coverage view's releases: **Export release…** (where to write it, and what writing
there would replace), what a release written says, and the releases on record.

Qt's own "already exists. Replace?" names one file and defaults to replacing it; a
release is a WACZ and five reports, and the one there may be an accepted edition's that
someone cites by its SHA-256. So the file dialog does not ask; :func:`release_output`
asks instead, saying plainly what would be replaced, with No as the default.

Which release ``archiver cite`` quotes changes from outside the view (an export, reopen or
accept in a terminal): :class:`ReleasesBox` lists the releases as last read, the one cited
first in words.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHeaderView,
    QLabel,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from archiver_app.editions.states import EditionState
from archiver_app.gui.export_signing import SigningChoice

if TYPE_CHECKING:
    from archiver_app.api.editions import EditionsManager, EditionSummary, ReleaseView

NO = QMessageBox.StandardButton.No
YES = QMessageBox.StandardButton.Yes


def release_output(
    parent: QWidget, editions: EditionsManager, name: str
) -> tuple[Path, bool] | None:
    """Ask where to write edition ``name``'s release: the WACZ's path, and whether the user
    agreed to replace the release there; None when the user cancels or will not."""
    start = str(Path.home() / f"{name}.wacz")
    path, _filter = QFileDialog.getSaveFileName(
        parent, "Export the edition's release", start, "Web archive (*.wacz)", "",
        QFileDialog.Option.DontConfirmOverwrite,  # asked below, naming every file
    )  # fmt: skip
    if not path:
        return None
    out = Path(path) if path.endswith(".wacz") else Path(path + ".wacz")
    there = editions.release_in_place(out)
    if there is None:
        return out, False
    names = ", ".join(p.name for p in there.files)
    this = _this_release(editions.get(name))
    if there.accepted:
        title = "Replace an accepted release?"
        text = (
            f"{out.name} is {there.what}. Exporting here replaces it and its reports "
            f"({names}) with {this}. Anyone citing the accepted release by its SHA-256 "
            "would no longer find that file here.\n\n"
            "Replace the accepted release?"
        )
    else:
        title = "Replace the release?"
        text = (
            f"{out.name} exists already{there.describe()}. Exporting here replaces "
            f"{names} with {this}.\n\nReplace them?"
        )
    answer = QMessageBox.warning(parent, title, text, YES | NO, NO)
    return (out, True) if answer == YES else None


def _this_release(e: EditionSummary) -> str:
    if e.frozen:
        return f"a new release of accepted edition {e.name}"
    return f"a draft of edition {e.name} ({e.state.value.replace('_', ' ')}, not accepted)"


def release_written(out: Path, result: object, sign: bool) -> str:
    """What the view says once the release job ended (``result``: its ReleaseResult)."""
    wacz = getattr(result, "wacz", None)
    sha256 = getattr(result, "sha256", None)
    if getattr(result, "state", None) == EditionState.RESEARCH_READY:
        digest = f" Its SHA-256 (what to cite): {sha256}." if sha256 else ""
    else:  # archiver cite names no draft of an edition once it is accepted
        digest = f" Its SHA-256: {sha256} (a draft: the edition is not accepted)." if sha256 else ""
    proof = SigningChoice.outcome(wacz, sign) if wacz is not None else []
    return " ".join([f"Release written: {out}, with its coverage report, target ledger and "
                     f"bibliography beside it.{digest}", *proof])  # fmt: skip


RELEASE_COLUMNS = ("WACZ", "Written", "Signed", "SHA-256", "Cited")


class ReleasesBox(QWidget):
    """The edition's releases on record, newest first: a line on the one ``archiver
    cite`` quotes, and a table of them all, each not cited with why."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(RELEASE_COLUMNS), self)
        self.table.setHorizontalHeaderLabels(list(RELEASE_COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(RELEASE_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.table)

    def show_releases(self, releases: Sequence[ReleaseView], *, accepted: bool) -> None:
        cited = next((r for r in releases if r.cited), None)
        if cited is not None:
            when = f", {cited.released_at:%-d %b %Y %H:%M} UTC" if cited.released_at else ""
            what = "draft cited" if not accepted else "release to cite"
            text = (f"<b>Releases: {len(releases)}</b>. The {what}: "
                    f"<code>{html.escape(cited.file_name)}</code> "
                    f"({'signed' if cited.signed else 'unsigned'}{when}), SHA-256 "
                    f"<code>{cited.sha256}</code>.")  # fmt: skip
        elif releases:
            text = (f"<b>Releases: {len(releases)}</b>. None is the release to cite: none was "
                    "exported since the edition was last accepted.")  # fmt: skip
        else:
            text = "<b>No release yet</b>: <b>Export release…</b> writes one."
        self.label.setText(text)
        self.table.setRowCount(len(releases))
        for r, release in enumerate(releases):
            when = f"{release.released_at:%Y-%m-%d %H:%M} UTC" if release.released_at else ""
            signed = "signed" if release.signed else "unsigned"
            said = "cited" if release.cited else f"no: {release.why}"
            cells = (release.file_name, when, signed, release.sha256, said)
            for c, value in enumerate(cells):
                item = QTableWidgetItem(value)
                item.setToolTip(release.path if c == 0 else value)
                if release.cited:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, c, item)
        self.table.setVisible(bool(releases))
        self.table.setMaximumHeight(
            self.table.horizontalHeader().height() + 8
            + sum(self.table.rowHeight(r) for r in range(min(len(releases), 4)))
        )  # fmt: skip
