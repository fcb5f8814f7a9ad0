"""Retire Drive… / Use Drive Again in the drives panel: a drive that died, was lost or is put
away leaves the rotation (``lib.drives.retire``), after a question whose default is Cancel.

When offloaded files have their only copy on that drive, retiring is refused first; a second
question says so and offers to retire it anyway (the drive is lost: so are they) or to plug
it in and mirror first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox, QPushButton

from archiver_app.api.drives import DestinationStatus, OnlyCopiesThere, Retirement
from archiver_app.gui.errors import question_box, show_error
from archiver_app.gui.ops import BackgroundOp, OpFailure
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.gui.drives_panel import DrivesPanel


class DriveRetirement:
    """The panel's retire button: its text follows the selected drive (retired or not)."""

    def __init__(self, panel: DrivesPanel) -> None:
        self.panel = panel
        self.button = QPushButton("Retire Drive…", panel)
        self.button.setObjectName("retire_drive")
        self.button.clicked.connect(self.act)
        self.confirm_box: QMessageBox | None = None  # the last question asked (tests)
        self.last_retirement: Retirement | None = None
        panel.table.selectionModel().selectionChanged.connect(self.follow_selection)
        self.follow_selection()

    def selected(self) -> DestinationStatus | None:
        index = self.panel.table.currentIndex()
        rows = self.panel.model.rows
        if not index.isValid() or index.row() >= len(rows):
            return None
        return rows[index.row()]

    def follow_selection(self, *_args: object) -> None:
        row = self.selected()
        self.button.setEnabled(row is not None)
        if row is not None and not row.enabled:
            self.button.setText("Use Drive Again")
            self.button.setToolTip(f"Put {row.label} back in use: mirrors copy to it again")
        else:
            self.button.setText("Retire Drive…")
            self.button.setToolTip(
                "Take the selected drive out of use (lost, broken or put away): its copies"
                " stop counting and the next mirror makes them again on the drives in use"
            )

    def act(self) -> None:
        row = self.selected()
        if row is None:
            return
        if not row.enabled:
            self._reinstate(row.label)
            return
        copies = counted(row.present, "copy", "copies")
        if self._ask(
            f"Retire drive “{row.label}”?",
            f"Its {copies} stop counting: the next mirror makes them again on the drives in"
            " use. Nothing on the drive is changed, and Use Drive Again puts it back.",
            "Retire",
            QMessageBox.Icon.Question,
        ):
            self._retire(row.label, force=False)

    def _ask(self, text: str, detail: str, action: str, icon: QMessageBox.Icon) -> bool:
        box = question_box(self.panel, icon, "Retire drive", text, action)
        box.setInformativeText(detail)
        self.confirm_box = box
        return box.exec() == QMessageBox.StandardButton.Yes

    def _retire(self, label: str, *, force: bool) -> None:
        drives = self.panel.library.drives

        def done(outcome: tuple[Retirement, object]) -> None:
            self.last_retirement = retired = outcome[0]
            said = f"Retired drive {retired.label}: its {counted(retired.copies, 'copy', 'copies')}"
            said += " no longer count; Mirror Now makes them again on the drives in use."
            if retired.lost:
                said += f" {counted(retired.lost, 'file')} had no other copy and now lost."
            if retired.shortfall:  # "cannot be met: ...; add a drive (archiver drives add) ..."
                said += f" The retention policy {retired.shortfall.split('; ')[0]}: add a drive."
            self.panel.show_verdict(said)

        BackgroundOp(
            self.panel.runner, lambda _p, _c: drives.retire(label, force=force), label="retire"
        ).success(done).failure(lambda f: self._refused(f, label)).run_in_background()

    def _refused(self, failure: OpFailure, label: str) -> None:
        exc = failure.exception
        if not isinstance(exc, OnlyCopiesThere):
            show_error(self.panel, failure, "retiring the drive")
            return
        files = counted(exc.count, "file")
        if self._ask(
            f"{files} this computer does not hold (offloaded) "
            f"{'has its' if exc.count == 1 else 'have their'} only copy on “{label}”.",
            "If the drive can still be read, plug it in with another drive and choose Mirror"
            " Now first: the copies are made across. If the drive is lost, retiring it records"
            f" {'that file' if exc.count == 1 else 'those files'} as lost.",
            "Retire Anyway",
            QMessageBox.Icon.Warning,
        ):
            self._retire(label, force=True)

    def _reinstate(self, label: str) -> None:
        drives = self.panel.library.drives
        said = (
            f"Drive {label} is in use again: the next mirror copies to it what the retention"
            " policy asks."
        )
        BackgroundOp(self.panel.runner, lambda _p, _c: drives.reinstate(label), label="reinstate")\
            .success(lambda _r: self.panel.show_verdict(said))\
            .failure(lambda f: show_error(self.panel, f, "putting the drive back"))\
            .run_in_background()  # fmt: skip
