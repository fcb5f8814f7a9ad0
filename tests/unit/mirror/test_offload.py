"""Offload frees laptop space only when enough verified copies exist; restore brings it back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.mirror import (
    DriveNotMounted,
    add_destination,
    parse_age,
    restore,
    restore_snapshot,
    run_mirror,
    set_policy,
)
from archiver_app.mirror.offload import offload
from archiver_app.store.models import CopyState, File, LocalState, Snapshot
from tests.helpers.mirror_data import add_revisit, copy_states, make_snapshot


def test_parse_age() -> None:
    assert parse_age("1y") == timedelta(days=365)
    assert parse_age(" 6m ") == timedelta(days=180)
    assert parse_age("2w") == timedelta(days=14)
    assert parse_age("12h") == timedelta(hours=12)
    for bad in ["", "1", "y", "-1y", "1.5y", "3 years"]:
        with pytest.raises(InputError, match="invalid age"):
            parse_age(bad)


def local_states(lib: Library, ids: list[int]) -> list[str]:
    with lib.session() as s:
        return [s.get(File, i).local_state for i in ids]  # type: ignore[union-attr]


def test_offload_then_restore(library: Library, tmp_path: Path) -> None:
    old = make_snapshot(
        library, [50_000, 700], seed=1, captured_at=datetime(2020, 5, 1, tzinfo=UTC)
    )
    dep = make_snapshot(library, [900], seed=2, captured_at=datetime(2020, 4, 1, tzinfo=UTC))
    add_revisit(library, old.file_ids[0], dep.file_ids[0])
    recent = make_snapshot(library, [800], seed=3, captured_at=library.clock() - timedelta(days=3))
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        add_destination(library, tmp_path / name, name)
        (tmp_path / name).rename(tmp_path / f"{name}-away")
    r = offload(library, parse_age("1y"))  # two drives may hold them, neither is plugged in
    assert (r.snapshots, r.not_safe, r.short_of_drives, r.copying) == (0, 2, 0, None)
    assert r.describe()[1:] == [
        "2 older snapshots kept: 2 more copies needed on drives not connected now ('a', 'b'):"
        " connect them and offload again"
    ]
    for name in ("a", "b"):
        (tmp_path / f"{name}-away").rename(tmp_path / name)
    set_policy(library, destinations=["a"])
    # policy 2 copies: only drive a may hold them, so no copying can make them safe
    r = offload(library, parse_age("1y"))
    assert (r.snapshots, r.not_safe, r.short_of_drives) == (0, 2, 2)
    assert r.describe()[-2:] == [
        "freed 0 B: 0 snapshots, 0 files",
        "2 older snapshots kept: their policy asks for more copies than the drives it allows"
        " can hold (add a drive, or lower its copies)",
    ]
    set_policy(library, destinations=None)
    preview = offload(library, parse_age("1y"), dry_run=True)  # the copies it would make
    assert preview.snapshots == 2 and all((library.root / p).exists() for p in old.paths)
    assert preview.copying is not None and len(preview.copying.plan.transfers) == 6  # 3 x 2
    assert not list((tmp_path / "b").rglob("*.bin"))
    r = offload(library, parse_age("1y"))
    assert (r.snapshots, r.files) == (2, 3) and r.bytes_freed == 51_600
    assert not any((library.root / p).exists() for p in old.paths + dep.paths)
    assert (library.root / recent.paths[0]).exists()
    assert local_states(library, old.file_ids) == [LocalState.OFFLOADED] * 2
    # the mirror still knows the files: nothing to do, nothing lost
    assert [t.file_id for t in run_mirror(library).plan.transfers] == recent.file_ids
    from archiver_app.layout.update import update_library

    with library.session() as s:  # their folders went with their files
        folders = [s.get(Snapshot, i).folder for i in (old.snapshot_id, dep.snapshot_id)]  # type: ignore[union-attr]
    update_library(library)  # their folders are empty: their files are on drives
    for folder in folders:  # it wrote an index.json into each offloaded folder
        assert not any((library.root / str(folder)).iterdir())
    assert local_states(library, old.file_ids) == [LocalState.OFFLOADED] * 2
    for folder in folders:  # the folder gone too: offloaded, not "folder is missing"
        (library.root / str(folder)).rmdir()
    assert update_library(library).problems == []
    # unplug both drives: restore names them
    (tmp_path / "a").rename(tmp_path / "a-away")
    (tmp_path / "b").rename(tmp_path / "b-away")
    with pytest.raises(DriveNotMounted, match="plug in drive 'a' or 'b'") as info:
        restore(library, old.file_ids)
    assert info.value.labels == ["a", "b"]
    (tmp_path / "b-away").rename(tmp_path / "b")
    # bit rot on b's copy of one file: restore refuses it and says which drive to bring
    b_copy = tmp_path / "b" / "Archiver" / library.id / old.paths[1]
    b_copy.write_bytes(b"rotten" + b_copy.read_bytes()[6:])
    with pytest.raises(DriveNotMounted, match="'a'"):
        restore(library, old.file_ids)
    assert copy_states(library, 2)[old.file_ids[1]] == CopyState.CORRUPTED
    (tmp_path / "a-away").rename(tmp_path / "a")
    done = restore(library, old.file_ids)
    assert done.already_local == [old.file_ids[0]] and done.restored == [old.file_ids[1]]
    assert local_states(library, old.file_ids) == [LocalState.PRESENT] * 2
    # what replay calls: the snapshot's files plus the revisit original it needs
    assert local_states(library, dep.file_ids) == [LocalState.OFFLOADED]
    got = restore_snapshot(library, old.snapshot_id)
    assert got.restored == dep.file_ids
    assert (library.root / dep.paths[0]).exists()
    assert restore_snapshot(library, old.snapshot_id).restored == []
    with pytest.raises(InputError, match="unknown file id"):
        restore(library, [99_999])


def test_offload_needs_a_mounted_copy_to_recheck(library: Library, tmp_path: Path) -> None:
    old = make_snapshot(library, [1000], seed=4, captured_at=datetime(2019, 1, 1, tzinfo=UTC))
    (tmp_path / "a").mkdir()
    add_destination(library, tmp_path / "a", "a")
    set_policy(library, copies=1)
    library.ensure_collection("default")
    assert run_mirror(library).plan.transfers == []  # 1 copy: the laptop suffices
    set_policy(library, copies=2)
    assert run_mirror(library).ok
    set_policy(library, copies=1)
    (tmp_path / "a").rename(tmp_path / "away")
    r = offload(library, parse_age("1y"))
    assert (r.snapshots, r.unconfirmed) == (0, 1)
    assert (library.root / old.paths[0]).exists()


def test_offload_rehashes_only_a_copy_on_an_allowed_drive(library: Library, tmp_path: Path) -> None:
    """The re-check right before letting go reads a copy that made the snapshot safe: a
    good copy on a drive the policy does not allow proves nothing about the allowed ones."""
    old = make_snapshot(library, [1000], seed=5, captured_at=datetime(2019, 1, 1, tzinfo=UTC))
    for name in ("a", "b", "x"):
        (tmp_path / name).mkdir()
        add_destination(library, tmp_path / name, name)
    set_policy(library, copies=4)  # laptop + a + b + x
    assert run_mirror(library).ok
    set_policy(library, copies=2, destinations=["a", "b"])
    (tmp_path / "b").rename(tmp_path / "b-away")
    rotten = tmp_path / "a" / "Archiver" / library.id / old.paths[0]
    rotten.write_bytes(b"rotten" + rotten.read_bytes()[6:])  # a's copy rots unnoticed
    r = offload(library, parse_age("1y"))
    assert (r.snapshots, r.not_safe, r.unconfirmed) == (0, 0, 1)
    assert (library.root / old.paths[0]).exists()
    assert local_states(library, old.file_ids) == [LocalState.PRESENT]


def test_a_page_of_an_imported_warc_is_as_safe_as_the_warc_and_restored_with_it(
    library: Library, tmp_path: Path
) -> None:
    """An imported WARC of several pages is one file, its row naming one of the pages: the
    others' copies are that file's (the detail pane said "No files to copy yet"), and
    replaying one of them once it is offloaded brings that file back."""
    from archiver_app.importers.run import import_paths
    from archiver_app.mirror import snapshot_copies
    from archiver_app.store.models import Snapshot
    from tests.helpers.warcs import site, write_warc

    [outcome] = import_paths(library, [write_warc(tmp_path / "three.warc.gz", site(3))]).outcomes
    assert outcome.pages == 3
    with library.session() as s:
        [warc] = s.scalars(select(File).where(File.kind == "warc")).all()
        pages = s.scalars(select(Snapshot.id).order_by(Snapshot.id)).all()
        others = [sid for sid in pages if sid != warc.snapshot_id]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    add_destination(library, tmp_path / "a", "a")
    add_destination(library, tmp_path / "b", "b")
    for sid in others:  # the detail pane lists the WARC it shares
        detail = library.snapshots.detail(sid)
        assert detail is not None and [f[1] for f in detail.files] == [warc.path]
    for sid in pages:  # on the laptop only: each page is at risk, none "has no files"
        report = snapshot_copies(library, sid)
        assert set(report.local_states) == {LocalState.PRESENT}
        assert [d.safe for d in report.destinations] == [False, False]
    set_policy(library, copies=3)  # the laptop and both drives
    assert run_mirror(library).ok
    for sid in others:
        report = snapshot_copies(library, sid)
        assert report.safe_copies == 3 and all(d.files == 1 for d in report.destinations)
    set_policy(library, copies=2)  # two drives hold each file: the laptop may let go
    r = offload(library, timedelta(0))
    assert r.snapshots >= 1 and not (library.root / warc.path).exists()
    assert restore_snapshot(library, others[-1]).restored == [warc.id]  # the page's file
    assert (library.root / warc.path).exists()


def test_exporting_offloaded_captures_brings_their_files_back_or_writes_nothing(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An export holds every record it names: files offloaded to drives are copied back,
    verified, first; with their drives unplugged it says which to plug in and writes no
    file (it wrote a WACZ without their records)."""
    from archiver_app.export import Selection, export
    from archiver_app.importers.run import import_paths
    from tests.helpers.warcs import site, write_warc

    import_paths(library, [write_warc(tmp_path / "three.warc.gz", site(3))])
    (tmp_path / "a").mkdir()
    add_destination(library, tmp_path / "a", "a")
    set_policy(library, copies=2)  # this computer and drive a
    assert run_mirror(library).ok
    set_policy(library, copies=1)  # drive a's copy is enough: this computer may let go
    assert offload(library, timedelta(0)).files >= 1
    with library.session() as s:
        [warc] = s.scalars(select(File).where(File.kind == "warc")).all()
    assert not (library.root / warc.path).exists()
    from archiver_app import cli

    assert cli.main(["--library", str(library.root), "verify"]) == 0  # says what it skipped
    assert "not checked here: 1 file offloaded to drives" in capsys.readouterr().out
    (tmp_path / "a").rename(tmp_path / "away")  # unplugged
    with pytest.raises(DriveNotMounted, match="plug in drive 'a' to export"):
        export(library, Selection(), tmp_path / "out.wacz")
    assert not (tmp_path / "out.wacz").exists()
    (tmp_path / "away").rename(tmp_path / "a")  # plugged back in
    result = export(library, Selection(), tmp_path / "out.wacz")
    assert (result.pages, result.records) == (3, 6) and not result.problems
    assert local_states(library, [warc.id]) == [LocalState.PRESENT]


def drive_copies(library: Library, tmp_path: Path, names: list[str], rel: str) -> set[str]:
    """The drives among ``names`` holding a copy of ``rel``."""
    return {n for n in names if (tmp_path / n / "Archiver" / library.id / rel).exists()}


def test_offload_makes_the_drive_copies_it_needs_wherever_the_mirror_put_the_others(
    library: Library, tmp_path: Path
) -> None:
    """The default policy (2 copies) and four drives: the mirror puts one copy of each file
    on a drive (the laptop holds the other), a snapshot's files on different drives. Offload
    said "not enough verified copies on drives yet (mirror them first)" while the mirror had
    nothing left to do; it now makes the second drive copy of each file, then lets go."""
    names = ["green", "yellow", "blue", "red"]
    snaps = [make_snapshot(library, [3000, 700, 500], seed=10 + i) for i in range(2)]
    for name in names:
        (tmp_path / name).mkdir()
        add_destination(library, tmp_path / name, name)
    assert run_mirror(library).ok
    paths = [p for m in snaps for p in m.paths]
    placed = [drive_copies(library, tmp_path, names, p) for p in paths]
    assert all(len(on) == 1 for on in placed) and len(set().union(*placed)) > 1  # scattered
    assert run_mirror(library).plan.transfers == []  # the mirror has nothing left to do
    r = offload(library, timedelta(0))
    assert (r.snapshots, r.files, r.not_safe, r.unconfirmed) == (2, 6, 0, 0)
    assert r.copying is not None and r.copying.copied == 6 and r.failures == 0
    assert r.describe()[-1] == "freed 8.4 KB: 2 snapshots, 6 files"
    assert not any((library.root / p).exists() for p in paths)
    for p, before in zip(paths, placed, strict=True):
        on = drive_copies(library, tmp_path, names, p)
        assert len(on) == 2 and before < on  # one more copy, beside the mirror's
    ids = [i for m in snaps for i in m.file_ids]
    assert local_states(library, ids) == [LocalState.OFFLOADED] * 6
    for name in names:  # all unplugged: restore names drives that together hold them all
        (tmp_path / name).rename(tmp_path / f"{name}-away")
    with pytest.raises(DriveNotMounted, match=r"plug in drives '[a-z]+' and '[a-z]+' to") as info:
        restore(library, ids)
    assert info.value.every
    for name in info.value.labels:
        (tmp_path / f"{name}-away").rename(tmp_path / name)
    assert sorted(restore(library, ids).restored) == sorted(ids)


def test_offload_names_the_drive_it_waits_for_and_frees_once_it_is_connected(
    library: Library, tmp_path: Path
) -> None:
    old = make_snapshot(library, [2000, 300], seed=20)
    for name in ("x", "y"):
        (tmp_path / name).mkdir()
        add_destination(library, tmp_path / name, name)
    (tmp_path / "y").rename(tmp_path / "y-away")
    r = offload(library, timedelta(0))  # x gets its copies; y must hold the second ones
    assert (r.snapshots, r.not_safe) == (0, 1)
    assert r.copying is not None and r.copying.copied == 2
    assert r.describe()[-1] == (
        "1 older snapshot kept: one more copy needed on drives not connected now ('y'):"
        " connect it and offload again"
    )
    assert all((library.root / p).exists() for p in old.paths)
    assert drive_copies(library, tmp_path, ["x"], old.paths[0]) == {"x"}
    (tmp_path / "y-away").rename(tmp_path / "y")
    r = offload(library, timedelta(0))
    assert (r.snapshots, r.files, r.not_safe) == (1, 2, 0)
    assert r.copying is not None and r.copying.copied == 2
    assert not any((library.root / p).exists() for p in old.paths)


def test_offload_says_when_a_connected_drive_could_not_take_the_copies(
    library: Library, tmp_path: Path
) -> None:
    """A drive connected but read-only is not "not connected": the copy lines say why, the
    kept line says see above."""
    from tests.helpers.mounts import read_only_folder

    old = make_snapshot(library, [2000], seed=21)
    for name in ("x", "y"):
        (tmp_path / name).mkdir()
        add_destination(library, tmp_path / name, name)
    with read_only_folder(tmp_path / "y"):
        r = offload(library, timedelta(0))
    assert (r.snapshots, r.not_safe) == (0, 1)
    lines = r.describe()
    assert (
        "    y: cannot be written: the drive is read-only (Read-only file system); skipped" in lines
    )
    assert (
        "    1 file stays below its policy: a drive it needs cannot be written: the drive is"
        f" read-only ({old.paths[0]})" in lines
    )
    assert lines[-1] == (
        "1 older snapshot kept: the copies they need could not be made on the connected drives"
        " (see above)"
    )
    assert (library.root / old.paths[0]).exists()
    assert offload(library, timedelta(0)).snapshots == 1  # writable again
