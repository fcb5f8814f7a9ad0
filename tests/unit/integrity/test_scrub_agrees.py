"""The mirror's scrub and ``archiver verify`` judge files by the same rule: the
capture-time digest, not the hash the library last recorded.

A real imported WARC, real folders as drives, real mirror runs and scrubs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from sqlalchemy import select, update

from archiver_app.importers.warcs import import_warc_file
from archiver_app.integrity import IntegrityCode, verify_snapshots
from archiver_app.integrity.judge import expected_digest, judge
from archiver_app.integrity.report import as_row, scrub_verdicts
from archiver_app.library import Library
from archiver_app.mirror import add_destination, run_mirror, verify_destinations, verify_library
from archiver_app.mirror.policy import set_policy
from archiver_app.mirror.scrub import THIS_COMPUTER
from archiver_app.store.files import register_file
from archiver_app.store.models import Copy, CopyState, File, FileKind, LocalState
from tests.helpers.warcs import site, write_warc


@pytest.fixture
def warc(library: Library, tmp_path: Path) -> str:
    import_warc_file(library, write_warc(tmp_path / "in.warc.gz", site(2)), collection="c")
    with library.session() as s:
        return s.scalars(select(File.path).where(File.kind == FileKind.WARC)).one()


def _drive(library: Library, tmp_path: Path) -> Path:
    path = tmp_path / "shelf"
    path.mkdir()
    add_destination(library, path, "shelf")
    assert run_mirror(library).ok
    return path / "Archiver" / library.id


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))


def _copy_state(library: Library, rel: str) -> str:
    with library.session() as s:
        return s.scalars(
            select(Copy.state).join(File, File.id == Copy.file_id).where(File.path == rel)
        ).one()


def test_the_rule() -> None:
    want = ("a" * 64, 10)
    assert expected_digest("a" * 64, 10, "b" * 64, 11) == want  # capture-time first
    assert expected_digest(None, None, "b" * 64, 11) == ("b" * 64, 11)
    assert expected_digest(None, None, None, None) is None
    assert judge(want, want) is IntegrityCode.INTACT
    assert judge(("b" * 64, 10), want) is IntegrityCode.ALTERED
    assert judge(("b" * 64, 10), want, good_copy=True) is IntegrityCode.ROT
    assert judge(None, want) is IntegrityCode.MISSING
    assert judge(None, want, good_copy=True) is IntegrityCode.MISSING  # restorable, yet gone
    assert judge(("b" * 64, 10), want, on_drive=True) is IntegrityCode.ROT
    assert judge(None, want, on_drive=True) is IntegrityCode.MISSING


def test_a_drive_copy_with_the_captured_bytes_is_never_overwritten_by_changed_ones(
    library: Library, warc: str, tmp_path: Path
) -> None:
    """The library's file rotted and its new hash was recorded (as a layout move records
    the hash of the bytes it moved), copies kept: the drive's copy is the good one."""
    on_drive = _drive(library, tmp_path) / warc
    path = library.root / warc
    good = path.read_bytes()
    _flip(path)
    rotten = path.read_bytes()
    with library.write() as s:
        s.execute(
            update(File)
            .where(File.path == warc)
            .values(sha256=hashlib.sha256(rotten).hexdigest(), size=len(rotten))
        )
    [verdict] = verify_snapshots(library, repair=False).verdicts
    assert (verdict.code, verdict.drive) == (IntegrityCode.ROT, "shelf")

    [drive] = verify_destinations(library, "shelf")
    assert (drive.checked, drive.ok, drive.corrupted) == (drive.checked, drive.checked, [])
    assert on_drive.read_bytes() == good and _copy_state(library, warc) == CopyState.PRESENT

    laptop = verify_library(library)  # the scrub of this computer agrees with verify
    assert laptop.corrupted == [warc] and laptop.repaired == 1 and laptop.altered == []
    assert laptop.repaired_from == {warc: "shelf"}
    [row] = [as_row(v) for v in scrub_verdicts(library, [laptop])]
    assert (row["code"], row["drive"], row["repaired_from"]) == ("bit rot", THIS_COMPUTER, "shelf")
    assert row["detail"].endswith("repaired from shelf")
    assert path.read_bytes() == good
    assert verify_snapshots(library).verdicts == []


def test_rot_on_the_drive_is_repaired_from_the_library(
    library: Library, warc: str, tmp_path: Path
) -> None:
    on_drive = _drive(library, tmp_path) / warc
    good = on_drive.read_bytes()
    _flip(on_drive)
    [drive] = verify_destinations(library, "shelf")
    assert drive.corrupted == [warc] and drive.repaired == 1
    assert on_drive.read_bytes() == good
    assert drive.repaired_from == {warc: THIS_COMPUTER}
    [row] = [as_row(v) for v in scrub_verdicts(library, [drive])]
    assert (row["drive"], row["repaired_from"]) == ("shelf", THIS_COMPUTER)


def test_a_file_good_again_when_its_repair_starts_counts_as_repaired(
    library: Library, warc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found rotten, then restored by another run before this scrub's repair began: counted
    as repaired, with no source named (the other run names it)."""
    from archiver_app.mirror import scrub

    _drive(library, tmp_path)
    path = library.root / warc
    good = path.read_bytes()
    _flip(path)
    check = scrub._check_laptop

    def then_restored(*args: object, **kwargs: object) -> object:
        found = check(*args, **kwargs)  # type: ignore[arg-type]
        path.write_bytes(good)
        return found

    monkeypatch.setattr(scrub, "_check_laptop", then_restored)
    laptop = verify_library(library)
    assert (
        laptop.corrupted == [warc] and laptop.repaired == 1 and laptop.repaired_from == {warc: ""}
    )
    [row] = [as_row(v) for v in scrub_verdicts(library, [laptop])]
    assert row["repaired_from"] is None and row["detail"].endswith("repaired from a copy")


def test_a_drive_copy_is_repaired_from_another_drive_and_the_report_names_it(
    library: Library, warc: str, tmp_path: Path
) -> None:
    """Offloaded (no copy on this computer): the rotten copy on one drive comes back from
    the other drive, and the report says which."""
    on_shelf = _drive(library, tmp_path) / warc
    second = tmp_path / "attic"
    second.mkdir()
    add_destination(library, second, "attic")
    set_policy(library, copies=3)  # this computer's and both drives'
    assert run_mirror(library).ok
    good = on_shelf.read_bytes()
    (library.root / warc).unlink()
    with library.write() as s:
        s.execute(update(File).where(File.path == warc).values(local_state=LocalState.OFFLOADED))
    _flip(on_shelf)
    [drive] = verify_destinations(library, "shelf")
    assert drive.corrupted == [warc] and drive.repaired_from == {warc: "attic"}
    assert on_shelf.read_bytes() == good
    [row] = [as_row(v) for v in scrub_verdicts(library, [drive])]
    assert (row["code"], row["drive"], row["repaired_from"]) == ("bit rot", "shelf", "attic")


def test_a_changed_file_mirrored_as_it_is_is_altered_everywhere_and_repairs_nothing(
    library: Library, warc: str, tmp_path: Path
) -> None:
    """Changed and re-registered before its first copy: the drive holds the changed bytes.
    The scrub calls that copy rotten (it is not what was captured) and finds no source with
    the captured bytes; the drive's copy is never used to "repair" the library."""
    path = library.root / warc
    _flip(path)
    changed = path.read_bytes()
    with library.write() as s:
        register_file(s, library.root, warc, FileKind.WARC)  # no origin: not a capture
    on_drive = _drive(library, tmp_path) / warc
    assert on_drive.read_bytes() == changed

    [drive] = verify_destinations(library, "shelf")
    assert drive.corrupted == [warc] and drive.repaired == 0 and drive.unrepaired == 1
    laptop = verify_library(library)
    assert laptop.altered == [warc] and laptop.repaired == 0
    assert "1 altered after capture, left as they are" in laptop.describe()
    assert path.read_bytes() == changed == on_drive.read_bytes()
    [verdict] = verify_snapshots(library).verdicts
    assert verdict.code is IntegrityCode.ALTERED


def test_hashing_on_threads_gives_the_sequential_report(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nine WARCs in every state (intact, rotten with a drive copy, altered, missing): the
    report on four threads is the one on one thread, verdict for verdict, in path order,
    and the hashing did run on more than one thread."""
    import threading

    from archiver_app.integrity import verify as verify_module

    for i in range(9):
        warc = write_warc(tmp_path / f"in{i}.warc.gz", site(1, host=f"h{i}.example"))
        import_warc_file(library, warc, collection="c")
    _drive(library, tmp_path)
    with library.session() as s:
        paths = list(s.scalars(select(File.path).where(File.kind == FileKind.WARC)))
    for rel in paths[1:3]:
        _flip(library.root / rel)  # rot: the drive has the captured bytes
    with library.write() as s:  # altered: no copy holds the captured bytes
        s.execute(
            update(Copy)
            .where(Copy.file_id.in_(select(File.id).where(File.path.in_(paths[3:6]))))
            .values(state=CopyState.MISSING)
        )
    for rel in paths[3:5]:
        _flip(library.root / rel)
    (library.root / paths[5]).unlink()

    threads: set[int] = set()
    hash_one = verify_module._hash

    def spy(path: Path) -> object:
        threads.add(threading.get_ident())
        return hash_one(path)

    monkeypatch.setattr(verify_module, "_hash", spy)
    one = verify_snapshots(library, repair=False, threads=1)
    assert len(threads) == 1
    threads.clear()
    four = verify_snapshots(library, repair=False, threads=4)
    assert len(threads) > 1
    assert four == one and four.counts == one.counts
    codes = [v.code for v in one.verdicts]
    assert codes.count(IntegrityCode.ROT) == 2 and codes.count(IntegrityCode.ALTERED) == 2
    assert codes.count(IntegrityCode.MISSING) == 1
    assert [v.path for v in one.verdicts] == sorted(v.path for v in one.verdicts)


def test_a_file_put_back_by_hand_is_present_again_after_verify(
    library: Library, warc: str, tmp_path: Path
) -> None:
    """Altered on this computer and on the drive, then restored by hand: `archiver verify`
    said intact while `drives` still counted this computer's copy corrupted and the mirror
    refused it, saying "laptop copy gone, no drive holding it mounted" (it was neither)."""
    from archiver_app.mirror.outcomes import Shortfall
    from archiver_app.mirror.status import laptop_status

    shelf = _drive(library, tmp_path)
    original = (library.root / warc).read_bytes()
    _flip(library.root / warc)
    _flip(shelf / warc)
    verify_destinations(library, "shelf")
    verify_library(library)
    assert _copy_state(library, warc) != CopyState.PRESENT  # no good copy anywhere
    assert laptop_status(library).corrupted == 1
    short = run_mirror(library, dry_run=True).plan
    assert short.shortfall == {Shortfall.LAPTOP_CORRUPTED: 1}
    assert "this computer's is corrupted" in "\n".join(short.describe())
    (library.root / warc).write_bytes(original)  # put back by hand
    report = verify_snapshots(library)
    assert report.ok and report.verdicts == []  # intact
    assert laptop_status(library).corrupted == 0
    again = run_mirror(library)
    assert again.plan.shortfall == {} and again.policy_holds
    assert _copy_state(library, warc) == CopyState.PRESENT
    assert (shelf / warc).read_bytes() == original
