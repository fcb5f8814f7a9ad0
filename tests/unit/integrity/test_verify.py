"""Capture-time digests and ``archiver verify``: intact, altered after capture, bit rot
repaired from a drive, missing, and digests recorded later for older files.

Real folders as drives, a real mirror run to put copies on them, real WARC imports.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from sqlalchemy import select, update

from archiver_app import cli
from archiver_app.importers.warcs import import_warc_file
from archiver_app.integrity import IntegrityCode, verify_snapshots
from archiver_app.library import Library
from archiver_app.mirror import add_destination, run_mirror, set_policy
from archiver_app.store.files import register_file
from archiver_app.store.models import File, FileKind, Origin
from tests.helpers.warcs import site, write_warc


@pytest.fixture
def warc(library: Library, tmp_path: Path) -> str:
    """An imported WARC's path in the library."""
    import_warc_file(library, write_warc(tmp_path / "in.warc.gz", site(2)), collection="c")
    with library.session() as s:
        return s.scalars(select(File.path).where(File.kind == FileKind.WARC)).one()


def _drive(library: Library, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.mkdir()
    add_destination(library, path, name)
    return path


def _flip(path: Path, offset: int = 100) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def _row(library: Library, rel: str) -> File:
    with library.session() as s:
        row = s.scalars(select(File).where(File.path == rel)).one()
        s.expunge(row)
        return row


def test_an_import_records_the_digest(library: Library, warc: str) -> None:
    row = _row(library, warc)
    data = (library.root / warc).read_bytes()
    assert row.origin == Origin.IMPORT
    assert (row.origin_sha256, row.origin_size) == (hashlib.sha256(data).hexdigest(), len(data))
    report = verify_snapshots(library)
    assert report.ok and report.counts[IntegrityCode.INTACT] == report.checked >= 1
    assert report.verdicts == []


def test_a_change_without_a_good_copy_is_altered_and_left_alone(
    library: Library, warc: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = library.root / warc
    _flip(path)
    changed = path.read_bytes()
    assert cli.main(["verify", "--library", str(library.root)]) == 1
    out = capsys.readouterr().out
    assert f"altered after capture: {warc}: differs from its capture-time digest" in out
    assert "NOT all as captured" in out
    assert path.read_bytes() == changed  # never replaced silently


def test_bit_rot_is_repaired_from_the_drive_that_holds_the_captured_bytes(
    library: Library, warc: str, tmp_path: Path
) -> None:
    _drive(library, tmp_path, "shelf")
    assert run_mirror(library).ok
    path = library.root / warc
    good = path.read_bytes()
    _flip(path)
    report = verify_snapshots(library, repair=False)
    [rot] = report.verdicts
    assert (rot.code, rot.drive) == (IntegrityCode.ROT, "shelf") and not report.ok
    assert path.read_bytes() != good  # --no-repair: reported only
    report = verify_snapshots(library)
    [repaired] = report.verdicts
    assert (repaired.code, repaired.path, repaired.drive) == (IntegrityCode.REPAIRED, warc, "shelf")
    assert repaired.message == "differed from its capture-time digest; restored from drive 'shelf'"
    assert report.ok and path.read_bytes() == good
    assert verify_snapshots(library).verdicts == []


def test_a_change_recorded_as_the_file_and_mirrored_is_still_altered(
    library: Library, warc: str, tmp_path: Path
) -> None:
    """Rewritten and re-registered (so the mirror and its scrub see nothing wrong) and
    copied to a drive: only the capture-time digest tells."""
    drive = _drive(library, tmp_path, "shelf")
    path = library.root / warc
    _flip(path)
    with library.write() as s:
        register_file(s, library.root, warc, FileKind.WARC)  # no origin: not a capture
    assert run_mirror(library).ok
    assert (drive / "Archiver" / library.id / warc).read_bytes() == path.read_bytes()
    [verdict] = verify_snapshots(library).verdicts
    assert verdict.code is IntegrityCode.ALTERED
    drive.rename(tmp_path / "away")  # unplugged: its copy of the changed bytes is no witness
    [verdict] = verify_snapshots(library).verdicts
    assert verdict.code is IntegrityCode.ALTERED


def test_damage_that_only_unplugged_drives_can_repair_names_them_not_alteration(
    library: Library, warc: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With its drives unplugged, rot in a file both drives hold verified copies of was
    called "altered after capture ... no drive copy holds it as captured"."""
    drives = [_drive(library, tmp_path, name) for name in ("blue", "red")]
    set_policy(library, copies=3)
    assert run_mirror(library).ok
    path = library.root / warc
    good = path.read_bytes()
    for drive in drives:
        drive.rename(tmp_path / f"away-{drive.name}")
    _flip(path)
    root = str(library.root)
    held = "drives blue, red hold a verified copy but are not plugged in: plug one in and run"
    assert cli.main(["verify", "--library", root]) == 1
    out = capsys.readouterr().out
    assert f"bit rot: {warc}: damaged since capture; {held} verify again to repair it\n" in out
    assert "altered" not in out
    assert cli.main(["drives", "verify", "--laptop", "--library", root]) == 1
    out = capsys.readouterr().out
    assert f"1 could not be repaired ({held} verify again to repair it)" in out
    assert "altered" not in out
    path.unlink()
    assert cli.main(["verify", "--library", root]) == 1
    assert f"missing: {warc}: missing; {held} verify again to restore it\n" in (
        capsys.readouterr().out
    )
    path.write_bytes(good[:-1])
    for drive in drives:
        (tmp_path / f"away-{drive.name}").rename(drive)
    assert cli.main(["verify", "--library", root]) == 0
    assert f"bit rot repaired: {warc}:" in capsys.readouterr().out
    assert path.read_bytes() == good


def test_a_deleted_file_left_unrepaired_is_missing_not_rotten(
    library: Library, warc: str, tmp_path: Path
) -> None:
    _drive(library, tmp_path, "shelf")
    assert run_mirror(library).ok
    (library.root / warc).unlink()
    [verdict] = verify_snapshots(library, repair=False).verdicts
    assert (verdict.code, verdict.message) == (
        IntegrityCode.MISSING,
        "missing; drive 'shelf' holds it",
    )


def test_a_missing_file_comes_back_from_a_drive_or_is_reported(
    library: Library, warc: str, tmp_path: Path
) -> None:
    path = library.root / warc
    good = path.read_bytes()
    path.unlink()
    [verdict] = verify_snapshots(library).verdicts
    assert verdict.code is IntegrityCode.MISSING
    path.write_bytes(good)
    _drive(library, tmp_path, "shelf")
    assert run_mirror(library).ok
    path.unlink()
    [verdict] = verify_snapshots(library).verdicts
    assert verdict.code is IntegrityCode.REPAIRED and path.read_bytes() == good
    assert verdict.message == "was missing; restored from drive 'shelf'"  # not "differed"


def test_older_files_get_their_digest_on_first_verify(library: Library, warc: str) -> None:
    with library.write() as s:  # as a library from before capture-time digests
        s.execute(update(File).values(origin_sha256=None, origin_size=None, origin=None))
    report = verify_snapshots(library)
    assert report.ok and {v.code for v in report.verdicts} == {IntegrityCode.RECORDED_LATER}
    row = _row(library, warc)
    assert row.origin == Origin.LATER and row.origin_sha256 == row.sha256
    assert verify_snapshots(library).verdicts == []  # from now on checked like the others
    _flip(library.root / warc)
    assert [v.code for v in verify_snapshots(library).verdicts] == [IntegrityCode.ALTERED]


def test_an_older_file_already_changed_is_not_taken_as_it_is(library: Library, warc: str) -> None:
    """Its digest is recorded later from the hash the library recorded when it came in, so
    a change made before the first verify is still found."""
    with library.write() as s:
        s.execute(update(File).values(origin_sha256=None, origin_size=None, origin=None))
    _flip(library.root / warc)
    report = verify_snapshots(library)
    assert [(v.code, v.path) for v in report.verdicts if v.path == warc] == [
        (IntegrityCode.ALTERED, warc)
    ]
    row = _row(library, warc)
    assert row.origin == Origin.LATER and row.origin_sha256 == row.sha256
