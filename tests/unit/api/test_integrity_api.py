"""``lib.integrity``: the verify job run through the application API, its findings grouped
by capture, and one capture's state as the details pane says it."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from archiver_app.api.integrity import IntegrityCode, IntegrityState, day
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.store.models import File, FileKind, Job, Snapshot
from tests.helpers.warcs import site, write_warc


def test_verify_findings_and_a_captures_state(library: Library, tmp_path: Path) -> None:
    import_warc_file(library, write_warc(tmp_path / "in.warc.gz", site(2)), collection="c")
    with library.session() as s:
        rel, sid = s.execute(
            select(File.path, File.snapshot_id).where(File.kind == FileKind.WARC)
        ).one()
        title = s.get(Snapshot, sid).title or s.get(Snapshot, sid).url  # type: ignore[union-attr]
        # the WARC's other page: its file is the same, and so is its state
        other = s.scalar(select(Snapshot.id).where(Snapshot.id != sid))
    assert other is not None
    assert library.integrity.snapshot_state(sid).state is IntegrityState.UNVERIFIED

    found = library.integrity.verify()
    assert found.ok and found.snapshots == () and found.counts[IntegrityCode.INTACT] >= 1
    assert library.integrity.snapshot_state(other).state is IntegrityState.INTACT
    state = library.integrity.snapshot_state(sid)
    assert state.state is IntegrityState.INTACT and state.checked_at is not None
    assert state.message == f"Files unchanged since capture, {day(state.checked_at)}"

    path = library.root / rel
    good = path.read_bytes()
    path.write_bytes(good + b"\n")
    found = library.integrity.verify()
    assert not found.ok and found.summary().endswith("NOT all as captured")
    [snap] = found.snapshots
    assert (snap.snapshot_id, snap.title) == (sid, title)
    [file] = snap.files
    assert (file.name, file.code) == (Path(rel).name, IntegrityCode.ALTERED)
    for page in (sid, other):
        state = library.integrity.snapshot_state(page)
        assert state.state is IntegrityState.CHANGED
        assert state.message.startswith(f"{Path(rel).name} altered after capture (verified ")
    with library.session() as s:  # the job is the jobs panel's too
        assert s.get(Job, found.job_id).kind == "verify"  # type: ignore[union-attr]
    assert library.integrity.findings(found.job_id) == found


def test_a_capture_restored_from_a_drive_says_so(library: Library, tmp_path: Path) -> None:
    from archiver_app.mirror import add_destination, run_mirror

    import_warc_file(library, write_warc(tmp_path / "in.warc.gz", site(1)), collection="c")
    drive = tmp_path / "shelf"
    drive.mkdir()
    add_destination(library, drive, "shelf")
    assert run_mirror(library).ok
    with library.session() as s:
        rel, sid = s.execute(
            select(File.path, File.snapshot_id).where(File.kind == FileKind.WARC)
        ).one()
    path = library.root / rel
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    found = library.integrity.verify()
    assert found.ok and found.counts[IntegrityCode.REPAIRED] == 1
    [file] = found.snapshots[0].files
    assert (file.code, file.drive) == (IntegrityCode.REPAIRED, "shelf")
    state = library.integrity.snapshot_state(sid)
    assert state.state is IntegrityState.INTACT
    assert state.message.endswith("; in.warc.gz restored from drive shelf (bit rot)")
