"""The coverage view's review of an accepted edition: a flag raised by verify, a release
that would replace an accepted one, and members that changed while the view was open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox

from archiver_app import cli
from archiver_app.api.editions import EditionState
from archiver_app.gui.edition_view import EditionView
from archiver_app.library import Library
from tests.unit.editions.accepted import accepted_edition


def open_view(qtbot: Any, library: Library, name: str, runner: Any) -> EditionView:
    view = EditionView(library, name, runner)
    qtbot.addWidget(view)
    qtbot.waitSignal(view.loaded, timeout=10_000).wait()
    return view


def act(qtbot: Any, view: EditionView, action: Any) -> None:
    with qtbot.waitSignal(view.loaded, timeout=60_000):
        action()


def _press(monkeypatch: Any, label: str, seen: list[str]) -> None:
    """Answer the next message box by its button ``label``, noting its text."""

    def exec_(box: QMessageBox) -> int:
        seen.append(box.text())
        next(b for b in box.buttons() if b.text() == label).click()
        return 0

    monkeypatch.setattr(QMessageBox, "exec", exec_)


def test_a_flagged_edition_says_why_and_is_kept_accepted_on_review(
    qtbot: Any, library: Library, op_runner: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    accepted_edition(library, tmp_path).unlink()
    assert cli.main(["--library", str(library.root), "verify"]) == 1
    view = open_view(qtbot, library, "c-2024", op_runner)
    assert "flagged for review" in view.state.text() and "verify found" in view.state.text()
    assert view.accept_button.text() == "Review flag…"
    assert not view.capture_button.isEnabled()  # still frozen

    seen: list[str] = []
    _press(monkeypatch, "Keep accepted", seen)
    act(qtbot, view, view.accept_button.click)
    assert "still accepted and frozen" in seen[0]
    assert "the flag is cleared" in view.notice.text()
    e = library.editions.get("c-2024")
    assert e.state is EditionState.RESEARCH_READY and not e.flagged
    assert view.accept_button.text() == "Reopen…"
