"""The coverage view's releases: **Export release…** (where to write it, and what writing
there would replace), what a release written says, and the releases on record.

Qt's own "already exists. Replace?" names one file and defaults to replacing it; a
release is a WACZ and five reports, and the one there may be an accepted edition's that
someone cites by its SHA-256. So the file dialog does not ask; :func:`release_output`
asks instead, saying plainly what would be replaced, with No as the default.

Which release ``archiver cite`` quotes changes from outside the view (an export, reopen or
accept in a terminal): :class:`ReleasesBox` lists the releases as last read, the one cited
first in words, and :func:`release_written`'s notice of a release written here is said
again from them on each read, never left claiming a release is the one to cite when it no
longer is.
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

from archiver_app.gui.export_signing import SigningChoice
from archiver_app.gui.tables import leave_on_tab

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


def release_written(
    out: Path, result: object, sign: bool, releases: Sequence[ReleaseView] = ()
) -> str:
    """What the view says of the release it wrote (``result``: its job's ReleaseResult),
    with whether it is the release to cite as ``releases`` (the view's last read) say."""
    wacz = getattr(result, "wacz", None)
    sha256 = getattr(result, "sha256", None)
    digest = f" Its SHA-256: {sha256}." if sha256 else ""
    proof = SigningChoice.outcome(wacz, sign) if wacz is not None else []
    cited = _cited_now(result, releases) if sha256 else ""
    return " ".join(x for x in [f"Release written: {out}, with its coverage report, target "
                                f"ledger and bibliography beside it.{digest}", cited, *proof]
                    if x)  # fmt: skip


def _cited_now(result: object, releases: Sequence[ReleaseView]) -> str:
    """Whether the release ``result`` wrote is the one to cite: as its job said when the
    releases read since agree (the one cited then is the one cited now), else as they
    say now."""
    said = getattr(result, "citation", None)
    then = getattr(getattr(result, "cited_now", None), "sha256", None)
    this = next((r for r in releases if r.sha256 == getattr(result, "sha256", None)), None)
    cited = next((r for r in releases if r.cited), None)
    if this is None or then == (cited.sha256 if cited else None):  # not read since, or as said
        return said() if callable(said) else ""
    if this.cited:
        return "It is now the release to cite."
    instead = f": the release cited is {_named(cited)}" if cited is not None else ""
    return f"It is no longer the release to cite ({this.why}){instead}."


def _named(r: ReleaseView) -> str:
    return f"{r.file_name} ({'signed' if r.signed else 'unsigned'}, SHA-256 {r.sha256})"


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
        leave_on_tab(self.table)
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
            said = "cited" if release.cited else f"not cited ({release.why})"
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
