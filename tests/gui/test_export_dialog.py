"""The export dialog: what, how and where, a real export on a worker thread, cancel."""

from __future__ import annotations

import json
import zipfile
from datetime import date
from pathlib import Path

from pytestqt.qtbot import QtBot

from archiver_app.gui.export_dialog import ExportDialog, suggested_name
from archiver_app.gui.ops import OpRunner
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.warc.scan import scan_records
from tests.helpers.warcs import site, write_warc


def _library_with_two_collections(library: Library, tmp_path: Path) -> None:
    import_warc_file(library, write_warc(tmp_path / "a.warc.gz", site(3)), collection="alpha")
    import_warc_file(library, write_warc(tmp_path / "b.warc.gz", site(1)), collection="beta")


def _alpha_dialog_on_a_drive(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> tuple[ExportDialog, Path]:
    _library_with_two_collections(library, tmp_path)
    drive = tmp_path / "drive"
    drive.mkdir()
    dialog = ExportDialog(library, op_runner, collection="alpha", folder=drive)
    qtbot.addWidget(dialog)
    return dialog, drive


def test_exports_the_chosen_collection_as_a_wacz_with_progress(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    dialog, drive = _alpha_dialog_on_a_drive(qtbot, library, op_runner, tmp_path)
    assert dialog.selection().collection == "alpha"
    today = date.today().isoformat()
    assert dialog.dest.text() == str(drive / f"alpha-{today}.wacz")  # on the chosen drive
    op = dialog.start()
    assert op is not None and not dialog.export_button.isEnabled()
    qtbot.waitUntil(lambda: dialog.finished_export is not None, timeout=20000)
    result = dialog.finished_export
    assert result is not None and result.path == drive / f"alpha-{today}.wacz"
    with zipfile.ZipFile(result.path) as z:
        names = set(z.namelist())
        pages = [json.loads(ln) for ln in z.read("pages/pages.jsonl").splitlines()[1:]]
    assert "datapackage.json" in names
    assert len(pages) == 3 == result.pages  # alpha's three pages, none of beta's
    assert "3 pages" in dialog.status.text()
    assert dialog.cancel_button.text() == "Close"
    assert [p.name for p in drive.iterdir()] == [result.path.name]  # no temporary left


def test_folder_format_search_selection_and_a_typed_name_is_kept(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    _library_with_two_collections(library, tmp_path)
    dialog = ExportDialog(library, op_runner, search="page0", folder=tmp_path)
    qtbot.addWidget(dialog)
    assert dialog.selection().query == "page0"
    mine = tmp_path / "mine"
    dialog.dest.setText(str(mine))
    dialog.format.setCurrentIndex(dialog.format.findData("folder"))
    assert dialog.dest.text() == str(mine)  # a name the user typed is never replaced
    dialog.start()
    qtbot.waitUntil(lambda: dialog.finished_export is not None, timeout=20000)
    assert (mine / "indexes" / "index.cdxj").is_file() or any(mine.rglob("*.cdxj"))
    warcs = sorted(mine.rglob("*.warc.gz"))
    assert warcs and sum(1 for _ in scan_records(warcs[0])) > 0
    assert suggested_name("Climate / Rivers!", "folder", date(2026, 1, 2)) == (
        "climate-rivers-2026-01-02"
    )


def test_cancel_leaves_nothing_at_the_destination(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    import_warc_file(library, write_warc(tmp_path / "a.warc.gz", site(40)), collection="alpha")
    drive = tmp_path / "drive"
    drive.mkdir()
    dialog = ExportDialog(library, op_runner, collection="alpha", folder=drive)
    qtbot.addWidget(dialog)
    op = dialog.start()
    assert op is not None
    op.cancel()  # before the worker thread gets far: the export checks its token per record
    qtbot.waitUntil(lambda: dialog.op is None, timeout=20000)
    assert "cancelled" in dialog.status.text()
    assert list(drive.iterdir()) == []
    assert dialog.export_button.isEnabled()  # the user can change something and try again


def test_refuses_a_destination_in_or_around_the_library_before_starting(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    _library_with_two_collections(library, tmp_path)
    dialog = ExportDialog(library, op_runner, collection="alpha", folder=library.root)
    qtbot.addWidget(dialog)
    assert dialog.start() is None  # the suggested name is inside the library
    assert "inside the library folder" in dialog.status.text()
    dialog.format.setCurrentIndex(dialog.format.findData("folder"))
    dialog.dest.setText(str(tmp_path))
    assert dialog.start() is None
    assert "holds the library folder" in dialog.status.text()
    assert dialog.export_button.isEnabled() and dialog.op is None
    assert library.db_path.is_file()
    assert not list(library.root.glob("*.wacz")) and not list(library.root.glob(".*partial*"))


def test_sign_and_timestamp_with_the_default_authority_and_a_pending_one(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    """A local authority (openssl ts): stamped; then unreachable (503): written signed, the
    dialog says the timestamp is pending, and the next dialog says one waits."""
    from archiver_app.export.pending import set_default_authority
    from archiver_app.export.signing import fingerprint, verify_wacz
    from archiver_app.export.timestamps import TimestampState, load_roots
    from tests.helpers.tsa import LocalTSA

    _library_with_two_collections(library, tmp_path)
    tsa = LocalTSA(tmp_path / "tsa").start()
    try:
        set_default_authority(library, tsa.url)

        def export(name: str) -> ExportDialog:
            dialog = ExportDialog(library, op_runner, collection="alpha", folder=tmp_path)
            qtbot.addWidget(dialog)
            signing = dialog.signing
            assert signing.stamp_box.text() == f"Timestamp with {tsa.url}"
            assert not signing.stamp_box.isEnabled()  # nothing to stamp before signing
            signing.sign_box.setChecked(True)
            signing.stamp_box.setChecked(True)
            dialog.dest.setText(str(tmp_path / name))
            assert dialog.start() is not None
            qtbot.waitUntil(lambda: dialog.finished_export is not None, timeout=60_000)
            return dialog

        stamped = export("stamped.wacz")
        check = verify_wacz(tmp_path / "stamped.wacz", tsa_roots=load_roots(tsa.root))
        key = fingerprint(check.public_key or "")  # to compare with the one published
        assert f"Signed with your key {key}." in stamped.status.text()
        assert "Timestamped at " in stamped.status.text()
        assert stamped.signing.note.isHidden()  # none waited before
        assert check.ok and check.signature_valid
        assert check.timestamp.state is TimestampState.VALID

        tsa.mode = "unavailable"
        waiting = export("waiting.wacz")
        assert "Timestamp pending: " in waiting.status.text()
        check = verify_wacz(tmp_path / "waiting.wacz")
        assert check.ok and check.signature_valid  # signed all the same

        later = ExportDialog(library, op_runner, collection="alpha", folder=tmp_path)
        qtbot.addWidget(later)
        assert later.signing.note.text().startswith("1 timestamp of earlier exports waits")
        assert not later.signing.note.isHidden()
        later.format.setCurrentIndex(1)  # a folder of WARCs is not signed
        assert not later.signing.sign_box.isEnabled() and not later.signing.sign()
    finally:
        tsa.stop()


def test_with_nothing_chosen_on_screen_it_offers_the_whole_library(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    _library_with_two_collections(library, tmp_path)
    dialog = ExportDialog(library, op_runner)  # All captures, no search: Ctrl+E
    qtbot.addWidget(dialog)
    assert dialog.what.currentData() == ("all", "")
    assert dialog.what.currentText() == "Everything in the library"


def test_a_bibliography_is_written_beside_the_export_when_asked(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    import bibtexparser

    dialog, drive = _alpha_dialog_on_a_drive(qtbot, library, op_runner, tmp_path)
    dialog.bibliography.setChecked(True)
    dialog.start()
    # no change of mind while it runs
    assert not dialog.bibliography.isEnabled() and not dialog.browse.isEnabled()
    qtbot.waitUntil(lambda: dialog.finished_export is not None, timeout=20000)
    result = dialog.finished_export
    assert result is not None
    stem = result.path.name.removesuffix(".wacz")
    assert sorted(p.name for p in drive.iterdir()) == sorted(
        [result.path.name, f"{stem}.bib", f"{stem}.csl.json"]
    )
    entries = bibtexparser.parse_string((drive / f"{stem}.bib").read_text("utf-8")).entries
    cited = json.loads((drive / f"{stem}.csl.json").read_text("utf-8"))
    assert len(entries) == len(cited) == 3 == result.pages  # alpha's pages, none of beta's
    assert f"Bibliography: {stem}.bib, {stem}.csl.json" in dialog.status.text()


def test_captures_altered_after_capture_are_refused_then_left_out_on_request(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    """The same check as ``archiver export``: nothing written, the captures named, and
    *Export Without Them* exports the rest and says what it left out."""
    from PySide6.QtWidgets import QMessageBox

    dialog, drive = _alpha_dialog_on_a_drive(qtbot, library, op_runner, tmp_path)
    everything = [i for i in range(dialog.what.count()) if dialog.what.itemData(i) == ("all", "")]
    dialog.what.setCurrentIndex(everything[0])
    (warc,) = (library.root / "collections" / "alpha").rglob("*.warc*")
    data = bytearray(warc.read_bytes())
    data[100] ^= 0xFF
    warc.write_bytes(bytes(data))
    dialog.signing.sign_box.setChecked(True)
    dialog.start()
    qtbot.waitUntil(lambda: dialog.altered_box is not None, timeout=20000)
    box = dialog.altered_box
    assert box is not None and dialog.finished_export is None
    assert "capture 1 (https://example.org/page0)" in box.text()
    assert "altered after capture" in box.text() and "Verify Library" in box.text()
    assert "Nothing was written" in dialog.status.text()
    assert list(drive.iterdir()) == []
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: dialog.finished_export is not None, timeout=20000)
    result = dialog.finished_export
    assert result is not None and result.pages == 1  # beta's page only
    assert "left out 3 captures not as captured" in dialog.status.text()


def test_export_from_the_window_takes_what_the_table_shows(
    qtbot: QtBot, main_window: object, library: Library, tmp_path: Path
) -> None:
    """A search within a collection: the export is the captures the table lists, not the
    search over the whole library."""
    from archiver_app.gui.main_window import MainWindow

    window = main_window
    assert isinstance(window, MainWindow)
    _library_with_two_collections(library, tmp_path)  # the same pages in alpha and beta
    alpha = next(c.id for c in library.collections.all() if c.slug == "alpha")
    window.refresh_all()
    qtbot.waitUntil(lambda: window.sidebar.select_key(f"collection:{alpha}"))
    window.search.set_search("page0")
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
    shown = window.model.shown_ids()
    dialog = window.open_export()
    assert isinstance(dialog, ExportDialog)
    assert dialog.what.currentText().startswith("As shown: Alpha, search “page0” (1 capture)")
    assert dialog.selection().snapshot_ids == shown
    dialog.dest.setText(str(tmp_path / "shown.wacz"))
    dialog.start()
    qtbot.waitUntil(lambda: dialog.finished_export is not None, timeout=20000)
    assert dialog.finished_export is not None and dialog.finished_export.pages == 1
    dialog.close()


def test_the_outcome_makes_the_dialog_taller_and_leaves_the_proof_rows_whole(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    """After an export the outcome's lines took their room from the rows above: "Sign
    with your key" and "Timestamp" were squeezed onto each other. The dialog grows
    instead, made narrower too."""
    dialog, _drive = _alpha_dialog_on_a_drive(qtbot, library, op_runner, tmp_path)
    dialog.show()
    qtbot.waitExposed(dialog)
    before = dialog.height()
    sign, stamp = dialog.signing.sign_box, dialog.signing.stamp_box
    dialog.start()
    qtbot.waitUntil(lambda: dialog.finished_export is not None, timeout=20000)
    status = dialog.status
    qtbot.waitUntil(lambda: status.height() >= status.heightForWidth(status.width()))
    for box in (sign, stamp):
        assert box.height() >= box.sizeHint().height(), box.text()
    assert sign.geometry().bottom() < stamp.geometry().top()
    assert dialog.height() > before
    dialog.resize(dialog.minimumWidth(), dialog.height())  # narrower: more lines, taller
    qtbot.waitUntil(lambda: status.height() >= status.heightForWidth(status.width()))
    assert sign.height() >= sign.sizeHint().height()


def test_the_captures_on_screen_are_named_by_their_count_and_a_name_taken_is_not_offered(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    """The name proposed for the captures a search shows listed every capture id
    ("all-captures-search-counter-72-65-58-51-40-33-27-18-12-6-2026-11-29.wacz"); it now
    counts them. A name a file already has is not proposed: the export would refuse it."""
    today = date.today().isoformat()
    ids = (72, 65, 58, 51, 40, 33, 27, 18, 12, 6)
    shown = ("All captures, search “Counter”", ids)
    dialog = ExportDialog(library, op_runner, shown=shown, folder=tmp_path)
    qtbot.addWidget(dialog)
    name = f"all-captures-search-counter-10-captures-{today}.wacz"
    assert dialog.dest.text() == str(tmp_path / name)
    dialog.format.setCurrentIndex(dialog.format.findData("folder"))
    assert dialog.dest.text() == str(tmp_path / name.removesuffix(".wacz"))

    (tmp_path / name).write_bytes(b"an earlier export")
    again = ExportDialog(library, op_runner, shown=shown, folder=tmp_path)
    qtbot.addWidget(again)
    assert again.dest.text() == str(tmp_path / name.replace(".wacz", "-2.wacz"))
    one = ExportDialog(library, op_runner, shown=("Recent", (5,)), folder=tmp_path)
    qtbot.addWidget(one)
    assert Path(one.dest.text()).name == f"recent-1-capture-{today}.wacz"
    long = ("Collection: " + "Rivers and estuaries of the north " * 4, ids)
    cut = suggested_name(long[0], "wacz", date(2026, 11, 29), captures=len(ids))
    assert cut.endswith("-10-captures-2026-11-29.wacz") and len(cut) < 80
