"""The coverage view's **Export release…**: where to write it, and what writing there
would replace.

Qt's own "already exists. Replace?" names one file and defaults to replacing it; a
release is a WACZ and five reports, and the one there may be an accepted edition's that
someone cites by its SHA-256. So the file dialog does not ask; :func:`release_output`
asks instead, saying plainly what would be replaced, with No as the default.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from archiver_app.editions.states import EditionState
from archiver_app.gui.export_signing import SigningChoice

if TYPE_CHECKING:
    from archiver_app.api.editions import EditionsManager, EditionSummary

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
