"""``archiver update``: orphan import, invalid folders, reconcile, exact duplicate merge; and
migration on save."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from archiver_app.cli import main
from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.layout.migrate import save_snapshot
from archiver_app.layout.moves import MoveError
from archiver_app.layout.reconcile import snapshot_tags
from archiver_app.layout.update import update_library
from archiver_app.library import Library
from archiver_app.store.models import File, Setting, Snapshot
from tests.helpers.files import tree_digest
from tests.helpers.legacy import AbxSnapshot, legacy_library, write_archivebox_snapshot


def _count(library: Library) -> int:
    with library.session() as s:
        return int(s.scalar(select(func.count()).select_from(Snapshot)) or 0)


def test_update_imports_orphans_sets_aside_invalid_and_merges(library: Library) -> None:
    root = library.root
    legacy_library(library, 3)
    with library.session() as s:
        kept_uid = s.scalars(select(Snapshot.uid).order_by(Snapshot.id)).first()
    # orphans: an ArchiveBox 0.8 folder dropped into archive/, an archiver-1 folder whose row
    # was lost, a folder with no index.json and one whose name is already taken in invalid/
    abx = AbxSnapshot(
        "https://orphan.example/a", "1633333333.5", "Orphan page", "x,y", "orphanword"
    )
    write_archivebox_snapshot(root / "archive", abx, "0.8")
    lost = root / "archive" / "1644444444.0"
    shutil.copytree(next(p for p in (root / "archive").iterdir() if p.name != abx.timestamp), lost)
    data = json.loads((lost / "index.json").read_text())
    data.update(uid="20220202T020202Z-0000abcd", url="https://lost.example/", title="Lost row")
    (lost / "index.json").write_text(json.dumps(data))
    (root / "archive" / "junk").mkdir()
    (root / "archive" / "junk" / "a.bin").write_bytes(b"junk")
    day = library.clock().strftime("%Y%m%d")
    taken = root / "invalid" / day / "junk"
    taken.mkdir(parents=True)
    (taken / "a.bin").write_bytes(b"other bytes")
    junk_before = tree_digest(root / "archive" / "junk")

    report = update_library(library, with_orphans=True)

    assert report.orphans is not None
    assert report.orphans.imported == 2
    assert len(report.orphans.invalid) == 1
    assert tree_digest(root / "invalid" / day / "junk-1") == junk_before  # suffixed, intact
    assert (taken / "a.bin").read_bytes() == b"other bytes"
    assert not (root / "archive" / "junk").exists()
    assert report.migration is not None and report.migration.remaining == 0
    with library.session() as s:
        rows = {r.url: r for r in s.scalars(select(Snapshot))}
        assert {r.fs_version for r in rows.values()} == {CURRENT_FS_VERSION}
        orphan = rows[abx.url]
        assert snapshot_tags(s, orphan.id) == {"x", "y"}
        assert orphan.warc_file is not None  # its WARC was indexed
        lost_row = rows["https://lost.example/"]
        assert lost_row.uid == "20220202T020202Z-0000abcd"
        assert (root / lost_row.folder / "screenshot.png").is_file()
        assert s.scalar(select(Snapshot.uid).where(Snapshot.uid == kept_uid)) == kept_uid
    assert not any((root / "archive").iterdir())  # everything left the flat layout


def test_reconcile_and_exact_duplicates(library: Library) -> None:
    root = library.root
    legacy_library(library, 3)
    update_library(library)
    with library.write() as s:
        a, b, c = s.scalars(select(Snapshot).order_by(Snapshot.id)).all()
        a_folder, b_folder = a.folder, b.folder
        # b and c become exact duplicates of a (same URL, same capture time)
        for dup in (b, c):
            dup.url, dup.url_key, dup.captured_at = a.url, a.url_key, a.captured_at
        a.title = "https://site0.example/p/0"
    # the folder of a says more than the DB: a real title, another tag, another result,
    # and a conflicting URL (the DB wins)
    sidecar = root / a_folder / "index.json"
    data = json.loads(sidecar.read_text())
    data.update(title="A much better page title", tags=["t", "from-file"], url="https://x.example/")
    data["archive_results"] = {
        "pdf": [{"output": "output.pdf", "status": "succeeded", "start_ts": "2022-01-01T00:00:00"}]
    }
    sidecar.write_text(json.dumps(data))
    (root / b_folder / "only-in-b.txt").write_text("b's own file")
    (root / b_folder / "screenshot.png").write_bytes(b"a different screenshot")

    report = update_library(library)

    assert report.reconciled >= 1
    assert report.duplicates_merged == 2
    with library.session() as s:
        rows = s.scalars(select(Snapshot)).all()
        assert len(rows) == 1
        keeper = rows[0]
        assert keeper.title == "A much better page title"
        assert keeper.url == "https://site0.example/p/0"  # DB wins conflicts
        assert snapshot_tags(s, keeper.id) == {"t", "from-file"}
        assert "pdf" in keeper.provenance["archive_results"]
        paths = set(s.scalars(select(File.path).where(File.snapshot_id == keeper.id)))
        assert f"{keeper.folder}/only-in-b.txt" in paths
        assert f"{keeper.folder}/screenshot.dup1.png" in paths  # clash kept under a suffix
        assert (
            s.scalar(
                select(func.count())
                .select_from(Setting)
                .where(Setting.key.like("layout.cleanup.%"))
            )
            == 0
        )
    assert (root / keeper.folder / "only-in-b.txt").read_text() == "b's own file"
    assert not (root / b_folder).exists()  # removed only after the copies verified
    rewritten = json.loads((root / keeper.folder / "index.json").read_text())
    assert rewritten["url"] == "https://site0.example/p/0"  # index.json rewritten from the DB
    assert set(rewritten["tags"]) == {"t", "from-file"}


def test_save_migrates_first_and_a_failed_copy_changes_nothing(library: Library) -> None:
    root = library.root
    legacy_library(library, 2)
    with library.session() as s:
        first, second = s.scalars(select(Snapshot).order_by(Snapshot.id)).all()
    old = root / first.folder
    before = tree_digest(old)

    save_snapshot(library, first.id, lambda snap: setattr(snap, "title", "Renamed"))

    with library.session() as s:
        row = s.get(Snapshot, first.id)
        assert row.fs_version == CURRENT_FS_VERSION and row.title == "Renamed"
        new = root / row.folder
    assert not old.exists()  # removed after the commit
    after = tree_digest(new)
    for rel, value in before.items():
        if rel != "index.json":
            assert after[rel] == value
    assert json.loads((new / "index.json").read_text())["title"] == "Renamed"

    # a different file already sits where a copy must go: refused, nothing changes
    with library.session() as s:
        target = root / "collections" / "default" / f"{second.captured_at:%Y/%m}" / second.uid
    target.mkdir(parents=True)
    (target / "screenshot.png").write_bytes(b"someone else's file")
    old2 = root / second.folder
    before2 = tree_digest(old2)
    with pytest.raises(MoveError, match="different contents"):
        save_snapshot(library, second.id)
    assert tree_digest(old2) == before2
    with library.session() as s:
        assert s.get(Snapshot, second.id).fs_version == "archiver-1"


def test_cli_migrate_and_update(library_root: Path, capsys: Any) -> None:
    with Library.open(library_root) as lib:
        legacy_library(lib, 5)
    args = ["--library", str(library_root)]
    assert main([*args, "migrate", "--resume-from", "nonsense"]) == 2
    assert "invalid cursor" in capsys.readouterr().err
    assert main([*args, "migrate", "--batch-size", "2", "--resume-from", "archiver-1:2"]) == 0
    out = capsys.readouterr().out
    assert "migrated 3 snapshots" in out  # ids 3..5 only: the cursor was honoured
    assert "2 left at older layouts" in out
    assert main([*args, "migrate", "--quiet"]) == 0
    assert "migrated 2 snapshots" in capsys.readouterr().out
    assert main([*args, "update", "--import-orphans"]) == 0
    out = capsys.readouterr().out
    assert "orphans: scanned 5 folders, imported 0" in out
    with Library.open(library_root) as lib:
        assert _count(lib) == 5


def test_migrator_reports_progress_cancels_and_resumes(library: Library) -> None:
    from archiver_app.layout.migrator import read_cursor, run_migrator
    from archiver_app.tasks import CancelToken, ProgressUpdate

    legacy_library(library, 9)
    cancel = CancelToken()
    updates: list[ProgressUpdate] = []

    def sink(update: ProgressUpdate) -> None:
        updates.append(update)
        cancel.cancel()  # stop after the first batch

    first = run_migrator(library, batch_size=4, progress=sink, cancel=cancel)
    assert first.cancelled
    assert first.migrated == 4 and first.remaining == 5
    assert updates[0].done == 4 and updates[0].total == 9
    assert read_cursor(library) == first.cursor == "archiver-1:4"
    second = run_migrator(library, batch_size=4)
    assert not second.cancelled
    assert (second.migrated, second.remaining) == (5, 0)
    assert read_cursor(library) is None  # a complete pass clears the cursor


def test_a_registered_index_json_follows_its_snapshot(library: Library) -> None:
    """A ``files`` row for index.json moves with the folder and describes the new file."""
    import hashlib

    from archiver_app.layout.migrator import run_migrator

    root = library.root
    legacy_library(library, 3)
    with library.write() as s:
        for snap in s.scalars(select(Snapshot)):
            s.add(
                File(
                    path=f"{snap.folder}/index.json",
                    size=1,
                    sha256="0" * 64,
                    kind="sidecar",
                    snapshot_id=snap.id,
                )
            )
        first = s.scalars(select(Snapshot.id).order_by(Snapshot.id)).first()
    assert first is not None
    save_snapshot(library, first)  # migration on save
    run_migrator(library)  # the rest in batches
    with library.session() as s:
        rows = s.execute(
            select(File.path, File.size, File.sha256, Snapshot.folder)
            .join(Snapshot, Snapshot.id == File.snapshot_id)
            .where(File.kind == "sidecar")
        ).all()
    assert len(rows) == 3
    for path, size, sha, folder in rows:
        assert path == f"{folder}/index.json"
        data = (root / path).read_bytes()
        assert (size, sha) == (len(data), hashlib.sha256(data).hexdigest())


def test_an_orphan_of_an_existing_capture_is_merged_into_it(library: Library) -> None:
    """A folder dropped into archive/ with the URL and capture time of a snapshot already in
    the library: its files the snapshot lacks are copied in and registered, tags unioned,
    where it came from noted, and the folder leaves archive/."""
    root = library.root
    first = AbxSnapshot("https://dup.example/p", "1655555555.0", "Dup page", "a", "dupword")
    write_archivebox_snapshot(root / "archive", first, "0.8")
    assert update_library(library, with_orphans=True).orphans.imported == 1  # type: ignore[union-attr]
    again = AbxSnapshot("https://dup.example/p", "1655555555.0", "Dup page", "b", "dupword")
    folder = write_archivebox_snapshot(root / "archive", again, "0.8")
    (folder / "media").mkdir()
    (folder / "media" / "clip.mp4").write_bytes(b"only in the second copy")

    report = update_library(library, with_orphans=True)

    assert report.orphans is not None
    assert (report.orphans.imported, report.orphans.merged) == (0, 1)
    assert _count(library) == 1
    assert not (root / "archive" / again.timestamp).exists()
    with library.session() as s:
        keeper = s.scalars(select(Snapshot)).one()
        assert snapshot_tags(s, keeper.id) == {"a", "b"}
        assert f"archive/{again.timestamp}" in keeper.provenance["merged"]
        clip = s.scalars(select(File).where(File.path.like("%/clip.mp4"))).one()
        assert clip.snapshot_id == keeper.id
        assert (root / clip.path).read_bytes() == b"only in the second copy"
    sidecar = json.loads((root / str(keeper.folder) / "index.json").read_text())
    assert sorted(sidecar["tags"]) == ["a", "b"]


def test_an_orphan_uid_that_climbs_out_is_refused_and_the_mirror_still_runs(
    library: Library, tmp_path: Path
) -> None:
    from archiver_app.mirror import add_destination, run_mirror
    from archiver_app.mirror.outcomes import Shortfall

    folder = library.root / "archive" / "1700000000"
    folder.mkdir(parents=True)
    (folder / "page.warc.gz").write_bytes(b"the page's bytes")
    escape = "../../../../../../ESCAPED"
    (folder / "index.json").write_text(
        json.dumps(
            {
                "fs_version": "archiver-1",
                "uid": escape,
                "url": "https://example.org/",
                "captured_at": "2023-11-14T22:13:20+00:00",
                "collection": "default",
            }
        )
    )
    outside = sorted(p.name for p in library.root.parent.parent.iterdir())
    report = update_library(library, with_orphans=True)
    assert any(escape in line for line in report.orphans.refused), report.orphans.refused
    with library.session() as s:
        snap = s.scalars(select(Snapshot)).one()
        paths = s.scalars(select(File.path)).all()
    assert ".." not in snap.uid and snap.folder.startswith("collections/default/2023/11/")
    assert paths and all(p.startswith(snap.folder + "/") for p in paths)
    assert (library.root / snap.folder / "page.warc.gz").read_bytes() == b"the page's bytes"
    assert sorted(p.name for p in library.root.parent.parent.iterdir()) == outside

    # a row stored with such a path by an earlier version: the mirror refuses it, nothing else
    with library.write() as s:
        s.add(File(path="../../ESCAPED/x", size=1, sha256="0" * 64, snapshot_id=snap.id))
    usb = tmp_path / "usb"
    usb.mkdir()
    add_destination(library, usb, "usb")
    result = run_mirror(library)
    assert result.plan.shortfall[Shortfall.UNSAFE_PATH] == 1
    assert result.copied == len(paths)


def test_the_migrator_records_hashes_it_had_to_compute(library: Library) -> None:
    """Files with no hash on record, or with no row at all, are hashed when they move and
    the rows say what was verified (rows updated in place, missing ones added)."""
    from archiver_app.layout.migrator import run_migrator

    originals = legacy_library(library, 6, file_bytes=4096)
    with library.write() as s:
        snaps = list(s.scalars(select(Snapshot).order_by(Snapshot.id)))
        for snap in snaps[:2]:  # rows without a hash, and one with a wrong size
            for f in s.scalars(select(File).where(File.snapshot_id == snap.id)):
                f.sha256 = None
        wrong = s.scalars(select(File).where(File.snapshot_id == snaps[2].id)).first()
        assert wrong is not None
        wrong.size += 1
        s.execute(File.__table__.delete().where(File.snapshot_id == snaps[3].id))
    report = run_migrator(library)
    assert (report.migrated, report.remaining, report.failed) == (6, 0, [])
    with library.session() as s:
        rows = s.execute(
            select(Snapshot.uid, Snapshot.folder, File.path, File.size, File.sha256)
            .join(File, File.snapshot_id == Snapshot.id)
            .where(File.kind != "sidecar")
        ).all()
    recorded = {}
    for uid, folder, path, size, sha in rows:
        assert path.startswith(folder + "/")
        recorded[f"{uid}/{path[len(folder) + 1 :]}"] = (size, sha)
    assert recorded == originals


@pytest.mark.parametrize("waits", [False, True])
def test_cleanups_run_behind_the_commits_only_when_they_wait(
    library: Library, monkeypatch: pytest.MonkeyPatch, waits: bool
) -> None:
    """Removals run in line after each commit; once they are seen waiting on the device
    (here a sleep, as a synchronous discard does), later batches' go to the cleaner
    thread behind the next commits. Either way every old folder is gone at the end."""
    import threading
    import time

    from archiver_app.layout import migrate, migrator
    from archiver_app.layout.migrator import run_migrator

    # what counts as waiting: more than a 2 ms sleep per move, or (when not waiting) more
    # than any disk here takes
    for module in (migrate, migrator):
        monkeypatch.setattr(module, "WAITING_MOVE", 0.002 if waits else 60.0)

    real = migrate.finish_cleanup
    threads: list[str] = []

    def finish(root: Path, marker: dict[str, Any], *, rehash: bool) -> list[str]:
        threads.append(threading.current_thread().name)
        if waits:
            time.sleep(0.005)
        return real(root, marker, rehash=rehash)

    monkeypatch.setattr(migrate, "finish_cleanup", finish)
    legacy_library(library, 12)
    report = run_migrator(library, batch_size=4)
    assert (report.migrated, report.cleanups, report.failed) == (12, 12, [])
    assert not any((library.root / "archive").iterdir())
    behind = [t for t in threads if t.startswith("migrate-clean")]
    assert threads[:4] == [threading.current_thread().name] * 4  # the first batch: in line
    assert bool(behind) == waits, threads


def test_a_pass_sets_older_objects_aside_from_the_collector(library: Library) -> None:
    """Full collections during a pass walk only what the pass made (gc.freeze), and the
    process gets its objects back afterwards."""
    import gc

    from archiver_app.layout.migrator import run_migrator
    from archiver_app.tasks import ProgressUpdate

    legacy_library(library, 4)
    before = gc.get_freeze_count()
    frozen: list[int] = []

    def sink(update: ProgressUpdate) -> None:
        frozen.append(gc.get_freeze_count())

    assert run_migrator(library, batch_size=2, progress=sink).migrated == 4
    assert frozen and all(n > before for n in frozen)
    assert gc.get_freeze_count() == before


def test_the_migrator_on_a_library_kept_in_postgresql(tmp_path: Path, postgres_url: str) -> None:
    """The batch updates are plain SQL in the driver's placeholder style: a library whose
    database is PostgreSQL migrates like one in SQLite."""
    from archiver_app.layout.migrator import run_migrator

    with Library.open(tmp_path / "lib", create=True, database_url=postgres_url) as lib:
        originals = legacy_library(lib, 5, file_bytes=1024)
        report = run_migrator(lib, batch_size=2)
        assert (report.migrated, report.remaining, report.failed) == (5, 0, [])
        with lib.session() as s:
            snaps = list(s.scalars(select(Snapshot)))
            rows = s.execute(
                select(Snapshot.uid, Snapshot.folder, File.path, File.size, File.sha256).join(
                    File, File.snapshot_id == Snapshot.id
                )
            ).all()
        assert {s.fs_version for s in snaps} == {CURRENT_FS_VERSION}
        assert all(s.updated_at.year >= 2026 for s in snaps)  # stamped by the migration
        recorded = {}
        for uid, folder, path, size, sha in rows:
            assert path.startswith(folder + "/")
            if not path.endswith("/index.json"):
                recorded[f"{uid}/{path[len(folder) + 1 :]}"] = (size, sha)
        assert recorded == originals
        for key, (size, _sha) in originals.items():
            uid, name = key.split("/", 1)
            folder = next(s.folder for s in snaps if s.uid == uid)
            assert (lib.root / folder / name).stat().st_size == size


def test_update_leaves_the_index_json_of_a_shared_import_as_the_importer_wrote_it(
    library: Library, tmp_path: Path
) -> None:
    """The pages of one imported WARC share its folder, whose ``index.json`` describes the
    import. ``archiver update`` rewrote it once per page, each page's over the last, and
    left its recorded hash behind: the mirror then called the laptop's copy corrupted. It is
    left as it is, and what an older update wrote there is recorded."""
    from archiver_app.importers.run import import_paths
    from archiver_app.mirror import add_destination, run_mirror
    from tests.helpers.warcs import site, write_warc

    import_paths(library, [write_warc(tmp_path / "three.warc.gz", site(3))])
    with library.session() as s:
        folders = set(s.scalars(select(Snapshot.folder)))
        sidecars = s.scalars(select(File).where(File.kind == "sidecar")).all()
    assert len(folders) == 1 and len(sidecars) == 1
    index = library.root / sidecars[0].path
    before = index.read_bytes()
    assert json.loads(before)["pages"] == 3

    update_library(library)

    assert index.read_bytes() == before
    index.write_text('{"url": "https://example.org/page2"}')  # as an older update left it
    update_library(library)  # records what is there
    (tmp_path / "blue").mkdir()
    add_destination(library, tmp_path / "blue", "blue")
    result = run_mirror(library, scan_roots=[tmp_path])
    assert result.failures == 0 and result.local_unrepairable == []
    with library.session() as s:
        assert s.scalar(select(File.local_state).where(File.id == sidecars[0].id)) == "present"


def test_an_import_of_no_pages_is_no_orphan(library: Library, tmp_path: Path) -> None:
    """A WARC of downloads makes no page; its folder is the library's all the same, and
    ``update --import-orphans`` leaves it (it moved the file to invalid/)."""
    from archiver_app.importers.run import import_paths
    from tests.helpers.warcs import Resp, write_warc

    warc = write_warc(tmp_path / "downloads.warc.gz", [
        Resp("https://files.example/data.bin", b"\x00\x01" * 500, mime="application/octet-stream"),
    ])  # fmt: skip
    report = import_paths(library, [warc])
    assert report.pages == 0 and report.records == 1
    with library.session() as s:
        (path,) = s.scalars(select(File.path).where(File.path.endswith(".warc.gz")))
    report_u = update_library(library, with_orphans=True)
    assert report_u.orphans is not None and report_u.orphans.invalid == []
    assert (library.root / path).is_file() and not (library.root / "invalid").exists()
