"""The coverage view's review of an accepted edition: a flag raised by verify, a release
that would replace an accepted one, and members that changed while the view was open."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog, QMessageBox

from archiver_app import cli
from archiver_app.api.editions import EditionState
from archiver_app.crawl.api import list_jobs
from archiver_app.library import Library
from tests.gui.editions.test_edition_view import act, open_view
from tests.unit.editions.accepted import accepted_edition


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


def test_a_draft_replaces_an_accepted_release_only_when_told_plainly(
    qtbot: Any, library: Library, op_runner: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    accepted_edition(library, tmp_path)
    out = tmp_path / "release" / "c-2024.wacz"
    out.parent.mkdir()
    root = str(library.root)
    assert cli.main(["--library", root, "edition", "export", "c-2024", str(out)]) == 0
    accepted = {p.name: p.read_bytes() for p in out.parent.iterdir()}
    assert len(accepted) == 6
    assert not library.editions.reopen("c-2024").refused  # what it would write is a draft
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(out), ""))
    asked: list[tuple[Any, ...]] = []

    def warning(*a: Any) -> QMessageBox.StandardButton:
        asked.append(a)
        return answer

    monkeypatch.setattr(QMessageBox, "warning", warning)
    view = open_view(qtbot, library, "c-2024", op_runner)
    answer = QMessageBox.StandardButton.No
    view.export_button.click()
    (_parent, title, text, _buttons, default) = asked[0]
    assert title == "Replace an accepted release?"
    assert "is the accepted release of edition c-2024" in text
    assert "c-2024.coverage.json" in text and "a draft of edition c-2024" in text
    assert default == QMessageBox.StandardButton.No
    assert {p.name: p.read_bytes() for p in out.parent.iterdir()} == accepted  # untouched
    assert len([j for j in list_jobs(library) if j.kind == "export"]) == 1  # the CLI's

    answer = QMessageBox.StandardButton.Yes
    with qtbot.waitSignal(view.changed, timeout=120_000):
        view.export_button.click()
    sha256 = hashlib.sha256(out.read_bytes()).hexdigest()
    notice = view.notice.text()  # a draft's digest is not the accepted edition's to cite
    assert (
        f"Its SHA-256: {sha256}. It is now the draft `archiver cite c-2024` quotes until "
        "the edition is accepted, in place of " in notice
    ), notice
    assert out.read_bytes() != accepted[out.name]
    assert '"state": "needs_review"' in (out.parent / "c-2024.coverage.json").read_text()


def test_a_release_of_an_earlier_acceptance_is_not_called_the_accepted_one(
    qtbot: Any, library: Library, op_runner: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    """The app asked "… is the accepted release of edition c-2024 … Anyone citing the
    accepted release …" about a release `cite` no longer names (members changed since)."""
    from tests.unit.editions.test_release_paths import _capture_page0_again

    accepted_edition(library, tmp_path)
    out = tmp_path / "release" / "c-2024.wacz"
    out.parent.mkdir()
    assert cli.main(["--library", str(library.root), "edition", "export", "c-2024",
                     str(out)]) == 0  # fmt: skip
    _capture_page0_again(library, tmp_path)
    assert library.editions.reopen("c-2024").transition.changed
    assert not library.editions.accept("c-2024").refused
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(out), ""))
    asked: list[tuple[Any, ...]] = []

    def warning(*a: Any) -> QMessageBox.StandardButton:
        asked.append(a)
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "warning", warning)
    view = open_view(qtbot, library, "c-2024", op_runner)
    view.export_button.click()
    (_parent, title, text, _buttons, default) = asked[0]
    assert title == "Replace the release?" and default == QMessageBox.StandardButton.No
    assert ("c-2024.wacz exists already (a release of an earlier acceptance of edition "
            "c-2024, whose members have changed since)") in text  # fmt: skip
    assert "accepted release" not in text
    assert "a new release of accepted edition c-2024" in text


def test_accept_freezes_what_was_shown_and_reopen_asks_naming_the_changes(
    qtbot: Any, library: Library, op_runner: Any, monkeypatch: Any
) -> None:
    from tests.unit.editions.memory_site import H, build, index_everything
    from tests.unit.editions.test_members_seen import _capture_a_again

    build(library)
    index_everything(library)
    library.editions.create("rivers", "e", year=2026)
    library.editions.explain_gap("e", f"{H}/dead", "gone")
    asked: list[tuple[Any, ...]] = []

    def question(*a: Any) -> QMessageBox.StandardButton:
        asked.append(a)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", question)
    view = open_view(qtbot, library, "e", op_runner)
    _capture_a_again(library)  # after the view was loaded
    act(qtbot, view, view.accept_button.click)
    assert "Not accepted: 1 member changed since you looked" in view.notice.text()
    assert f"{H}/a: capture " in view.notice.text()
    assert library.editions.get("e").state is EditionState.SEARCH_READY
    act(qtbot, view, view.accept_button.click)  # the view shows them now: accepted
    assert library.editions.get("e").state is EditionState.RESEARCH_READY

    _capture_a_again(library)
    act(qtbot, view, view.accept_button.click)  # Reopen…
    (_parent, title, text, _buttons, default) = asked[-1]
    assert title == "Reopen this edition?" and default == QMessageBox.StandardButton.No
    assert "1 member would change" in text and f"{H}/a: capture " in text
    assert "Reopened: it needs review. 1 member changed:" in view.notice.text()


def test_the_releases_are_listed_and_follow_the_release_cited_when_it_changes_elsewhere(
    qtbot: Any, library: Library, main_window: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    """The view listed no release, nor which one `cite` quotes, and F5 did not read an open
    edition again after a release was exported, or the edition reopened and accepted, in a
    terminal. The releases on record are listed, the one to cite named."""
    from archiver_app.gui.edition_view import open_edition

    accepted_edition(library, tmp_path)
    root = str(library.root)
    first = tmp_path / "first.wacz"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(first), ""))
    view = open_edition(main_window.tabs, library, "c-2024", main_window.runner,
                        main_window.apply_changes)  # fmt: skip
    qtbot.waitSignal(view.loaded, timeout=10_000).wait()
    assert view.release_box.label.text().startswith("<b>No release yet</b>")
    assert not view.release_box.table.isVisible()
    view.signing.sign_box.setChecked(True)
    with qtbot.waitSignal(view.loaded, timeout=120_000):  # the read after the job
        view.export_button.click()
    assert "The release to cite: <code>first.wacz</code> (signed, " in (
        view.release_box.label.text()
    )
    assert view.release_box.table.rowCount() == 1
    assert view.release_box.table.item(0, 4).text() == "cited"

    second = tmp_path / "second.wacz"  # a new signed release, from a terminal
    assert cli.main(["--library", root, "edition", "export", "c-2024", str(second),
                     "--sign"]) == 0  # fmt: skip
    later = hashlib.sha256(second.read_bytes()).hexdigest()
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        main_window.refresh_all()  # F5
    assert f"<code>{later}</code>" in view.release_box.label.text()
    assert [view.release_box.table.item(r, 4).text() for r in range(2)] == [
        "cited",
        "not cited (an earlier release: a later one is cited)",
    ]

    assert not library.editions.reopen("c-2024").refused  # and accepted again: no release
    assert not library.editions.accept("c-2024").refused  # since is the one to cite
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        main_window.refresh_all()
    assert "None is the release to cite" in view.release_box.label.text()


def test_the_notice_of_a_release_written_follows_the_release_cited(
    qtbot: Any, library: Library, main_window: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    """The view said "Its SHA-256 (what to cite): …" of a release written from it, and
    kept saying it, even after F5, once another release was cited (exported, or the
    edition reopened and accepted, in a terminal). The notice is said again from the
    releases on record on each read."""
    from archiver_app.gui.edition_view import open_edition

    accepted_edition(library, tmp_path)
    root = str(library.root)
    first = tmp_path / "first.wacz"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(first), ""))
    view = open_edition(main_window.tabs, library, "c-2024", main_window.runner,
                        main_window.apply_changes)  # fmt: skip
    qtbot.waitSignal(view.loaded, timeout=10_000).wait()
    view.signing.sign_box.setChecked(True)
    with qtbot.waitSignal(view.loaded, timeout=120_000):  # the read after the job
        view.export_button.click()
    digest = hashlib.sha256(first.read_bytes()).hexdigest()
    assert (
        f"Its SHA-256: {digest}. It is the release to cite: `archiver cite c-2024` quotes its "
        "SHA-256. Signed with your key "
    ) in view.notice.text()

    second = tmp_path / "second.wacz"  # a new signed release, from a terminal
    assert cli.main(["--library", root, "edition", "export", "c-2024", str(second),
                     "--sign"]) == 0  # fmt: skip
    later = hashlib.sha256(second.read_bytes()).hexdigest()
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        main_window.refresh_all()  # F5
    notice = view.notice.text()
    assert "It is the release to cite" not in notice and "what to cite" not in notice, notice
    assert (
        "It is no longer the release to cite (an earlier release: a later one is cited): the "
        f"release cited is second.wacz (signed, SHA-256 {later})."
    ) in notice

    assert not library.editions.reopen("c-2024").refused  # and accepted again: no release
    assert not library.editions.accept("c-2024").refused  # since is the one to cite
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        main_window.refresh_all()
    assert (
        "It is no longer the release to cite (exported before the edition was last accepted)."
    ) in view.notice.text()
