"""Copies on drives when files move or change in the library: a layout migration, an
``index.json`` rewritten from the database, an exact duplicate merged away."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select, update

from archiver_app.layout.migrate import save_snapshot
from archiver_app.layout.migrator import run_migrator
from archiver_app.layout.update import update_library
from archiver_app.library import Library
from archiver_app.mirror import (
    add_destination,
    restore,
    run_mirror,
    set_policy,
    verify_destinations,
)
from archiver_app.mirror.offload import offload
from archiver_app.store.files import register_file
from archiver_app.store.models import Copy, CopyState, File, LocalState, Snapshot
from tests.helpers.legacy import legacy_library
from tests.helpers.mirror_data import check_drive, make_snapshot, present_ids


def _paths(library: Library) -> dict[int, str]:
    with library.session() as s:
        return {f.id: f.path for f in s.scalars(select(File))}


def test_copies_stay_where_they_were_written_when_files_move(
    library: Library, tmp_path: Path
) -> None:
    legacy_library(library, 2)
    drive = tmp_path / "A"
    drive.mkdir()
    da = add_destination(library, drive, "A").id
    assert run_mirror(library).ok
    before = _paths(library)
    assert present_ids(library, da) == set(before)

    assert run_migrator(library).migrated == 2
    after = _paths(library)
    moved = {fid for fid in before if after.get(fid) != before[fid]}
    assert moved, "the migration moved nothing"
    # the drive was not touched: each copy records where it is, and is still counted
    assert check_drive(library, drive, da) == []
    with library.session() as s:
        where = {c.file_id: c.path for c in s.scalars(select(Copy))}
        states = {c.file_id: c.state for c in s.scalars(select(Copy))}
    sidecars = {fid for fid, p in after.items() if p.endswith("/index.json")}
    for fid in moved - sidecars:
        assert (where[fid], states[fid]) == (before[fid], CopyState.PRESENT)
    # rewritten index.json files: the drive holds their old bytes, so they count as missing
    for fid in sidecars & set(states):
        assert states[fid] == CopyState.MISSING
    # they are copied again, with the index.json files the migration registered
    again = run_mirror(library)
    assert len(sidecars) == 2
    assert {t.file_id for t in again.plan.transfers} == sidecars
    assert check_drive(library, drive, da) == []

    # a scrub finds every copy where its row says
    [scrub] = verify_destinations(library, "A")
    assert (scrub.lost, scrub.corrupted) == ([], [])
    assert scrub.ok == len(after)
    # a second drive gets the new layout; then the laptop copies can be let go (the
    # offload re-hashes drive A's copies, at their old places, first)
    other = tmp_path / "B"
    other.mkdir()
    add_destination(library, other, "B")
    set_policy(library, copies=3)
    assert run_mirror(library).ok
    set_policy(library, copies=2)
    result = offload(library, timedelta(days=1))
    assert result.snapshots == 2 and result.unconfirmed == 0
    with library.session() as s:
        offloaded = s.scalars(select(File.id).where(File.local_state == LocalState.OFFLOADED)).all()
    assert set(offloaded) == set(after)
    # and brought back from drive A's old places (B unplugged), to the files' new ones
    other.rename(tmp_path / "B-away")
    assert sorted(restore(library, sorted(after)).restored) == sorted(after)
    for rel in after.values():
        assert (library.root / rel).is_file(), rel


def _with_index(library: Library, snapshot_id: int) -> File:
    """A registered index.json, as captures leave them."""
    with library.write() as s:
        snap = s.get(Snapshot, snapshot_id)
        assert snap is not None
        (library.root / snap.folder / "index.json").write_text(
            json.dumps({"uid": snap.uid, "url": snap.url, "fs_version": "archiver-2"}, indent=2)
        )
        return register_file(s, library.root, f"{snap.folder}/index.json", "sidecar", snap.id)


def test_a_rewritten_index_json_is_copied_again(library: Library, tmp_path: Path) -> None:
    made = make_snapshot(library, [1000, 2000])
    sidecar = _with_index(library, made.snapshot_id)
    drive = tmp_path / "A"
    drive.mkdir()
    da = add_destination(library, drive, "A").id
    assert run_mirror(library).ok
    assert sidecar.id in present_ids(library, da)

    def retitle(snap: Snapshot) -> None:
        snap.title = "A new title"

    save_snapshot(library, made.snapshot_id, retitle)
    assert sidecar.id not in present_ids(library, da)
    assert [t.file_id for t in run_mirror(library).plan.transfers] == [sidecar.id]
    on_drive = drive / "Archiver" / library.id / sidecar.path
    assert b"A new title" in on_drive.read_bytes()
    assert check_drive(library, drive, da) == []


def test_merging_a_duplicate_leaves_no_row_for_its_removed_index_json(
    library: Library, tmp_path: Path
) -> None:
    a = make_snapshot(library, [1000], seed=1)
    b = make_snapshot(library, [1500], seed=2)
    at = datetime(2024, 1, 1, tzinfo=UTC)
    with library.write() as s:
        s.execute(update(Snapshot).values(url="https://example.org/same", captured_at=at))
    _with_index(library, a.snapshot_id)
    _with_index(library, b.snapshot_id)
    assert update_library(library).duplicates_merged == 1
    with library.session() as s:
        paths = s.scalars(select(File.path)).all()
    assert [p for p in paths if not (library.root / p).is_file()] == []
    drive = tmp_path / "A"
    drive.mkdir()
    add_destination(library, drive, "A")
    result = run_mirror(library)
    assert result.ok, result.describe()
