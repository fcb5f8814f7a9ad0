"""Tools ▸ Verify Library… runs the verify job and lists what it found by capture; the
details pane says where a capture stands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QMenu
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from archiver_app.api.integrity import (
    FileFinding,
    IntegrityCode,
    SnapshotFindings,
    VerifyFindings,
)
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.verify_dialog import VerifyResultsDialog
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.store.models import File, FileKind
from tests.helpers.warcs import site, write_warc


def top_text(dialog: VerifyResultsDialog) -> str:
    return str(dialog.model.index(0, 1).data())


def _tools_menu(window: MainWindow) -> QMenu:
    [menu] = [
        a.menu()
        for a in window.menuBar().actions()
        if isinstance(a.menu(), QMenu) and a.menu().title().replace("&", "") == "Tools"  # type: ignore[union-attr]
    ]
    assert isinstance(menu, QMenu)
    return menu


def test_verify_library_lists_an_altered_file_and_the_details_pane_says_so(
    qtbot: QtBot, main_window: MainWindow, library: Library, tmp_path: Path
) -> None:
    import_warc_file(library, write_warc(tmp_path / "in.warc.gz", site(2)), collection="c")
    with library.session() as s:
        rel, sid = s.execute(
            select(File.path, File.snapshot_id).where(File.kind == FileKind.WARC)
        ).one()
    path = library.root / rel
    path.write_bytes(path.read_bytes() + b"\n")
    verify = main_window.verify
    assert verify.action in _tools_menu(main_window).actions()

    verify.action.trigger()
    qtbot.waitUntil(lambda: verify.dialog is not None, timeout=60_000)
    dialog = verify.dialog
    assert isinstance(dialog, VerifyResultsDialog) and dialog.isVisible()
    assert "NOT all as captured" in dialog.summary.text()
    assert "left as they are, for you to judge" in dialog.summary.text()
    assert top_text(dialog) == "1 file not as captured"
    model = dialog.model
    assert model.rowCount() == 1
    top = model.index(0, 0)
    assert model.rowCount(top) == 1
    assert (model.index(0, 0, top).data(), model.index(0, 1, top).data()) == (
        "in.warc.gz",
        "altered after capture",
    )
    assert "Altered after capture: the file differs" in dialog.legend.text()
    dialog.close()

    main_window.detail.show_snapshot(sid)
    qtbot.waitUntil(lambda: main_window.detail.integrity.text() != "", timeout=10_000)
    assert main_window.detail.integrity.text().startswith("in.warc.gz altered after capture")


def test_a_clean_library_says_so(qtbot: QtBot, library: Library, tmp_path: Path) -> None:
    import_warc_file(library, write_warc(tmp_path / "in.warc.gz", site(1)), collection="c")
    findings = library.integrity.verify()
    dialog = VerifyResultsDialog(findings, library)
    qtbot.addWidget(dialog)
    assert dialog.summary.text().startswith("Every file is as it was captured.")
    assert "all as captured" in dialog.summary.text() and dialog.tree.isHidden()


def test_a_clean_result_is_a_small_box_with_its_summary_at_the_top(
    qtbot: QtBot, library: Library
) -> None:
    findings = VerifyFindings(
        job_id=1,
        finished_at=None,
        checked=25,
        counts={IntegrityCode.INTACT: 25},
        ok=True,
        snapshots=(),
    )
    dialog = VerifyResultsDialog(findings, library)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert "Every file is as it was captured." in dialog.summary.text()
    assert dialog.height() < 250, "an all-clear result is not a big empty box"
    assert dialog.summary.geometry().top() < 30


def _many_findings(n_snaps: int = 31, per: int = 20) -> VerifyFindings:
    snaps = tuple(
        SnapshotFindings(
            sid,
            f"Field notes, page {sid}",
            f"https://example.org/notes/{sid}",
            None,
            tuple(
                FileFinding(
                    f"page-{sid:02}-{i:02}.txt",
                    f"archive/bulk/page-{sid:02}-{i:02}.txt",
                    IntegrityCode.MISSING if i % 7 == 0 else IntegrityCode.ALTERED,
                    "differs from its capture-time digest",
                )
                for i in range(per)
            ),
        )
        for sid in range(1, n_snaps + 1)
    )
    missing = sum(1 for s in snaps for f in s.files if f.code is IntegrityCode.MISSING)
    counts = {IntegrityCode.ALTERED: n_snaps * per - missing, IntegrityCode.MISSING: missing}
    return VerifyFindings(9, None, n_snaps * per, counts, ok=False, snapshots=snaps)


def test_hundreds_of_findings_are_all_listed_and_saved_from_the_keyboard(
    qtbot: QtBot, library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    findings = _many_findings()  # 620 files: more than a job's row keeps
    dialog = VerifyResultsDialog(findings, library)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    model = dialog.model
    listed = [
        model.index(row, 0, model.index(top, 0)).data(Qt.ItemDataRole.UserRole)
        for top in range(model.rowCount())
        for row in range(model.rowCount(model.index(top, 0)))
    ]
    assert sorted(listed) == sorted(f.path for s in findings.snapshots for f in s.files)
    assert len(listed) == 620 == sum(findings.counts.values())

    dest = tmp_path / "verify-9"
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a, **k: (str(dest), "JSON Lines (*.jsonl)")
    )
    dialog.activateWindow()
    qtbot.waitActive(dialog)
    for _ in range(6):  # Tab from the list reaches the button; Space presses it
        if dialog.focusWidget() is dialog.save_button:
            break
        QTest.keyClick(dialog.focusWidget() or dialog, Qt.Key.Key_Tab)
    assert dialog.focusWidget() is dialog.save_button
    QTest.keyClick(dialog.save_button, Qt.Key.Key_Space)
    saved = dest.with_suffix(".jsonl")
    qtbot.waitUntil(saved.exists, timeout=5_000)
    rows = [json.loads(line) for line in saved.read_text().splitlines()]
    assert sorted(r["path"] for r in rows) == sorted(listed)
    assert {r["code"] for r in rows} == {"altered after capture", "missing"}
    assert f"Saved 620 findings to {saved}" in dialog.summary.text()


def test_verify_an_export_says_intact_or_what_changed(
    qtbot: QtBot, main_window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tools ▸ Verify an Export… checks a WACZ as ``archiver verify-export`` does and shows
    the same lines: intact and who signed it, or each file that changed."""
    from PySide6.QtWidgets import QMessageBox

    from tests.unit.export.test_signing import WARC, _rewrite, write_wacz

    wacz = tmp_path / "harbour.wacz"
    write_wacz(wacz, tmp_path / "key")
    checks = main_window.verify
    assert checks.export_action in _tools_menu(main_window).actions()
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(wacz), ""))
    checks.export_action.trigger()  # asks for the file, then checks it in the background
    qtbot.waitUntil(lambda: checks.export_box is not None and checks.export_box.isVisible())
    box = checks.export_box
    assert box is not None and box.windowTitle() == "Export intact"
    assert box.text() == "harbour.wacz is as it was exported (2 files checked)."
    assert box.informativeText().startswith("signed with key ")
    assert box.informativeText().split("\n")[0].endswith(": the signature is valid")
    assert box.icon() == QMessageBox.Icon.Information
    box.close()

    _rewrite(wacz, {"archive/data.warc": WARC[:-1] + b"!"})
    op = checks.check_export(wacz)
    assert op is not None
    qtbot.waitUntil(lambda: checks.export_box is not box and checks.export_box is not None)
    changed = checks.export_box
    assert changed.windowTitle() == "Export changed"
    assert "changed: archive/data.warc was changed (its hash differs)" in (
        changed.informativeText()
    )
    assert (
        "the signature is valid, but the package is NOT as signed: it was altered after signing"
        in changed.informativeText()
    )
    assert changed.icon() == QMessageBox.Icon.Warning
    assert main_window.statusBar().currentMessage() == (
        "harbour.wacz is not as it was exported (2 files checked)."
    )
    changed.close()

    _rewrite(wacz, {"pages/pages.jsonl": None})  # the count says why one was not checked
    checks.check_export(wacz)
    qtbot.waitUntil(lambda: checks.export_box is not changed and checks.export_box is not None)
    missing = checks.export_box
    assert (
        missing.text()
        == "harbour.wacz is not as it was exported (1 of 2 files checked; 1 missing)."
    )
    changed = missing
    changed.close()

    write_wacz(wacz, tmp_path / "key")  # a checksum damaged in the zip: not the content
    data = bytearray(wacz.read_bytes())
    data[data.index(b"PK\x01\x02") + 16] ^= 0x01
    wacz.write_bytes(bytes(data))
    checks.check_export(wacz)
    qtbot.waitUntil(lambda: checks.export_box is not changed and checks.export_box is not None)
    zip_damaged = checks.export_box
    assert zip_damaged.windowTitle() == "Export's zip damaged"
    assert zip_damaged.text() == (
        "harbour.wacz's zip directory is damaged, but its content is as signed (2 files checked)."
    )
    assert "NOT as signed" not in zip_damaged.informativeText()
    changed = zip_damaged
    changed.close()

    wacz.write_bytes(wacz.read_bytes()[: wacz.stat().st_size // 2])  # cut short: a verdict
    checks.check_export(wacz)
    qtbot.waitUntil(lambda: checks.export_box is not changed and checks.export_box is not None)
    damaged = checks.export_box
    assert damaged.windowTitle() == "Export cut short"  # was "Export changed", the cut unsaid
    assert damaged.text().startswith("harbour.wacz is damaged: the file is cut short inside '")
    assert damaged.text().endswith(" before the cut; 0 files checked).")
    assert damaged.icon() == QMessageBox.Icon.Warning


def test_the_results_name_the_editions_put_up_for_review(
    qtbot: QtBot, library: Library, tmp_path: Path
) -> None:
    from tests.unit.editions.accepted import accepted_edition

    warc = accepted_edition(library, tmp_path)
    warc.write_bytes(warc.read_bytes() + b"\n")
    findings = library.integrity.verify()
    assert findings.editions_to_review == ("c-2024",)
    dialog = VerifyResultsDialog(findings, library)
    qtbot.addWidget(dialog)
    assert "Editions needing review (a file of theirs is damaged): c-2024." in (
        dialog.summary.text()
    )


def test_verify_an_export_names_the_release_it_is_or_is_a_copy_of(
    qtbot: QtBot, main_window: MainWindow, tmp_path: Path
) -> None:
    """The app checks an export against the library's edition releases as verify-export
    does: the release cited is named; a copy of it whose bytes differ is not that file."""
    from archiver_app.editions.release import release_config
    from archiver_app.jobs import JobKind
    from archiver_app.jobs.foreground import run_as_job
    from tests.unit.editions.accepted import accepted_edition

    library = main_window.library
    accepted_edition(library, tmp_path)
    out = tmp_path / "c-2024.wacz"
    run_as_job(library, JobKind.EXPORT, release_config("c-2024", out, sign=True), name="r")
    checks = main_window.verify
    checks.check_export(out)
    qtbot.waitUntil(lambda: checks.export_box is not None and checks.export_box.isVisible())
    box = checks.export_box
    assert box is not None and box.windowTitle() == "Export intact"
    assert "release: this is the file of the signed release of edition c-2024 written " in (
        box.informativeText()
    )
    box.close()

    copy = tmp_path / "copy.wacz"
    copy.write_bytes(out.read_bytes() + b"\0")
    checks.check_export(copy)
    qtbot.waitUntil(lambda: checks.export_box is not box and checks.export_box is not None)
    other = checks.export_box
    assert other.windowTitle() == "Export not the release on record"
    assert other.text() == (
        "copy.wacz's content is as signed, but the file is not byte-identical to the release "
        "on record (3 files checked)."
    )
    assert "release: its contents are intact but the file is not byte-identical to the " in (
        other.informativeText()
    )
