"""Moving a library: a rename on one file system, a verified copy across two, never a loss.

Across file systems the destination is a real tmpfs mount (a second "disk"); a full disk
is a tmpfs smaller than the library; a kill is a real SIGKILL of ``archiver move-library``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from archiver_app import library_use
from archiver_app.crawl import queue
from archiver_app.crawl.given_up import NOTES_DIR, note_given_up, settle_given_up
from archiver_app.crawl.jobs import create_job, load_context
from archiver_app.crawl.results import start_job
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.unrecorded import Unrecorded
from archiver_app.durable import is_temp
from archiver_app.errors import InputError, LibraryError
from archiver_app.library import Library
from archiver_app.library_move import STAGING_SUFFIX, move_library
from archiver_app.paths import remembered_library_root, resolve_library_root
from archiver_app.store.models import Page, Snapshot, Worker
from archiver_app.tasks import Cancelled, CancelToken, ProgressUpdate
from tests.helpers.mounts import small_drive
from tests.helpers.snapshots import add_snapshot

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The remembered library place goes to a throw-away config folder."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("ARCHIVER_LIBRARY", raising=False)


def _make_library(root: Path, n: int = 6) -> dict[str, str]:
    with Library.open(root, create=True) as lib:
        for i in range(n):
            add_snapshot(lib, f"https://example.org/{i}", title=f"Page {i}", body="river " * 500)
    return _hashes(root)


def _hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and not p.name.startswith("library.db-")  # WAL/SHM come and go
        and p.parent.name != library_use.FOLDER  # so do those of processes killed
    }


def _same_library(before: dict[str, str], root: Path, n: int) -> None:
    after = _hashes(root)
    assert {k: v for k, v in after.items() if k != "library.db"} == {
        k: v for k, v in before.items() if k != "library.db"
    }
    with Library.open(root) as lib:
        assert lib.info().snapshots == n


def test_same_file_system_is_one_rename_and_the_new_place_is_remembered(tmp_path: Path) -> None:
    src, dest = tmp_path / "old", tmp_path / "elsewhere" / "Library"
    before = _make_library(src)
    dest.parent.mkdir()
    seen: list[ProgressUpdate] = []
    result = move_library(src, dest, progress=seen.append)
    assert result.renamed and result.root == dest
    assert not src.exists()
    _same_library(before, dest, 6)
    assert remembered_library_root() == dest
    assert resolve_library_root() == dest  # the CLI's default follows the move
    assert resolve_library_root(str(src)) == src  # an explicit --library still wins
    assert seen and seen[-1].fraction == 1.0


def test_the_command_says_where_to_point_a_named_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The app and a bare ``archiver`` follow a move; ``--library`` or ``ARCHIVER_LIBRARY``
    naming the old folder would find no library there, so the command says what to give."""
    from archiver_app.cli import main

    src = tmp_path / "old"
    _make_library(src, 1)
    assert main(["--library", str(src), "move-library", str(tmp_path / "a")]) == 0
    assert f"from now on, give --library {tmp_path / 'a'}" in capsys.readouterr().out
    monkeypatch.setenv("ARCHIVER_LIBRARY", str(tmp_path / "a"))
    assert main(["move-library", str(tmp_path / "b")]) == 0
    assert f"ARCHIVER_LIBRARY names the old folder: set it to {tmp_path / 'b'}" in (
        capsys.readouterr().out
    )


def test_across_file_systems_every_file_is_copied_verified_then_the_old_removed(
    tmp_path: Path,
) -> None:
    src = tmp_path / "old"
    before = _make_library(src)
    with small_drive(tmp_path / "disk2", 64 * 1024) as disk:
        dest = disk / "Library"
        seen: list[ProgressUpdate] = []
        result = move_library(src, dest, progress=seen.append)
        assert not result.renamed and result.files == len(before) and not result.left_behind
        assert not src.exists()  # every old file removed, then its empty folders
        _same_library(before, dest, 6)
        assert not any(p.name.endswith(STAGING_SUFFIX) for p in disk.iterdir())
        assert seen[-1].bytes_done == seen[-1].bytes_total == result.bytes
        assert remembered_library_root() == dest
        # the staging copy was opened on its way, but is no place this computer knows
        known = json.loads((tmp_path / "config" / "Archiver" / "libraries.json").read_text())
        assert sorted(known["libraries"]) == [str(dest)], known
        assert known["moved"] == {str(src): str(dest)}


def test_a_full_destination_leaves_the_library_where_it_was(tmp_path: Path) -> None:
    src = tmp_path / "old"
    before = _make_library(src, n=8)
    with small_drive(tmp_path / "tiny", 48) as disk:  # smaller than the library
        with pytest.raises(LibraryError, match=r"not moved: writing .* failed \(full: "):
            move_library(src, disk / "Library")
        assert list(disk.iterdir()) == []  # the staging folder is gone too
    _same_library(before, src, 8)
    assert remembered_library_root() is None


def test_cancel_midway_leaves_the_library_where_it_was(tmp_path: Path) -> None:
    src = tmp_path / "old"
    before = _make_library(src)
    cancel = CancelToken()

    def progress(update: ProgressUpdate) -> None:
        if update.done >= 3:
            cancel.cancel()

    with small_drive(tmp_path / "disk2", 64 * 1024) as disk:
        with pytest.raises(Cancelled):
            move_library(src, disk / "Library", progress=progress, cancel=cancel)
        assert list(disk.iterdir()) == []
    _same_library(before, src, 6)


def test_a_disk_pulled_out_midway_is_not_re_created_where_it_was(tmp_path: Path) -> None:
    """The new place goes away while the library is copied there: the move stops, and
    the folders it was copying into are not made again at the old path (on a real
    system, the system disk under the unmounted drive's mount point)."""
    src = tmp_path / "old"
    before = _make_library(src)
    with small_drive(tmp_path / "disk2", 64 * 1024) as disk:
        drive = disk / "usb"  # the "drive": a folder on the second disk, pulled = moved away
        drive.mkdir()

        pulled = disk / "usb-pulled"

        def pull(update: ProgressUpdate) -> None:
            if update.done >= 2 and not pulled.exists():
                drive.rename(pulled)

        with pytest.raises(LibraryError, match="the library was not moved"):
            move_library(src, drive / "Library", progress=pull)
        assert not drive.exists()
    _same_library(before, src, 6)


def test_refusals_write_nothing(tmp_path: Path) -> None:
    src = tmp_path / "old"
    _make_library(src, n=1)
    full = tmp_path / "full"
    full.mkdir()
    (full / "something.txt").write_text("mine")
    with pytest.raises(InputError, match="not an empty folder"):
        move_library(src, full)
    with pytest.raises(InputError, match="inside the library"):
        move_library(src, src / "sub")
    with pytest.raises(InputError, match="the library is already at"):
        move_library(src, src)  # not "already exists and is not an empty folder"
    with pytest.raises(LibraryError, match="not an Archiver library"):
        move_library(tmp_path / "full", tmp_path / "x")
    with Library.open(src) as lib, lib.write() as s:
        s.add(Worker(id="w1", pid=4242, host="laptop", version="1", state="running"))
    with pytest.raises(LibraryError, match="pid 4242"):
        move_library(src, tmp_path / "new")
    with Library.open(src) as lib, lib.write() as s:  # a worker that died long ago is no bar
        w = s.get(Worker, "w1")
        assert w is not None
        w.heartbeat_at = lib.clock() - timedelta(hours=1)
    assert move_library(src, tmp_path / "new").renamed
    assert (full / "something.txt").read_text() == "mine"


def _staged_files(staging: Path) -> int:
    """Complete copies in the staging folder (it changes while the move runs)."""
    count = 0
    for dirpath, _dirs, files in os.walk(staging):
        count += sum(1 for f in files if not is_temp(f))
        del dirpath
    return count


def _no_partial_file_under_a_final_name(before: dict[str, str], folder: Path) -> None:
    """Every file in ``folder`` (a staging folder or the new library) under a name of the
    library holds exactly the old file's bytes: copies appear only once verified."""
    for rel, digest in _hashes(folder).items():
        if rel != "library.db" and not is_temp(rel):
            assert before[rel] == digest, rel


def test_killed_at_random_moments_the_move_resumes_and_nothing_is_lost(tmp_path: Path) -> None:
    """SIGKILL ``archiver move-library`` at random moments, again and again: the old
    library stays whole, staged copies are complete, and the next run reuses them."""
    import random

    src = tmp_path / "old"
    before = _make_library(src, n=60)
    archiver = Path(sys.executable).with_name("archiver")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    rng = random.Random(19)
    kills = 0
    with small_drive(tmp_path / "disk2", 96 * 1024) as disk:
        dest = disk / "Library"
        staging = disk / f".Library{STAGING_SUFFIX}"
        cmd = [str(archiver), "--library", str(src), "move-library", str(dest)]
        for _round in range(4):
            want = _staged_files(staging) + rng.randint(1, 4)  # a few more copies, then kill
            with (tmp_path / "move.log").open("wb") as log:
                proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None:
                if _staged_files(staging) >= want:
                    break
                time.sleep(rng.uniform(0.0, 0.002))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            if proc.wait() == 0:
                break  # it finished before this round's moment came: the move is done
            assert proc.returncode == -signal.SIGKILL
            kills += 1
            assert not dest.exists()  # killed while copying: the old library is untouched
            _same_library(before, src, 60)
            _no_partial_file_under_a_final_name(before, staging)
        assert kills >= 1
        if not dest.exists():
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            assert done.returncode == 0, done.stdout + done.stderr
            assert "by an interrupted earlier move" in done.stdout  # staged copies reused
        _same_library(before, dest, 60)
        assert not src.exists() and not staging.exists()
        with Library.open(dest) as lib:
            moves = [r for r in lib.jobs.rows() if r.kind == "move"]
    assert moves and moves[0].status == "completed"  # the last run, finished here
    # the killed runs, in the database copied mid-move: the last run did their work
    assert {r.status for r in moves[1:]} <= {"aborted"}, moves


def test_a_move_is_a_job_that_finishes_at_the_new_place(tmp_path: Path) -> None:
    """Killed right after the switch, the new library's queue removes the old files."""
    from archiver_app.jobs import JobKind, default_registry, run_foreground, run_queued
    from archiver_app.library_move import move_config, move_registry

    src = tmp_path / "old"
    before = _make_library(src)
    with small_drive(tmp_path / "disk2", 64 * 1024) as disk:
        dest = disk / "Library"
        with Library.open(src) as lib:  # the first half only, as if killed after it
            run = run_foreground(
                lib, JobKind.MOVE, move_config(src, dest), move_registry(), name="Move"
            )
        assert remembered_library_root() == dest
        _same_library(before, dest, 6)
        assert (src / "library.json").is_file()  # both whole: the old not yet removed
        with Library.open(dest) as lib:
            (row,) = [r for r in lib.jobs.rows() if r.id == run.job_id]
            assert row.status == "queued"  # handed over to the copy
            (ran,) = run_queued(lib, default_registry())
            assert str(ran.status) == "completed" and ran.result.left_behind == []
        assert not src.exists()
        _same_library(before, dest, 6)


def test_a_move_interrupted_while_copying_is_reported_at_the_old_place(tmp_path: Path) -> None:
    """The app's queue never starts a move (the library is open there): it says to move
    again, and leaves the library where it is."""
    from archiver_app.jobs import JobKind, default_registry, enqueue, run_queued
    from archiver_app.library_move import move_config

    src = tmp_path / "old"
    before = _make_library(src)
    with Library.open(src) as lib:
        job = enqueue(lib, JobKind.MOVE, move_config(src, tmp_path / "new"), name="Move")
        run_queued(lib, default_registry())
        (row,) = [r for r in lib.jobs.rows() if r.id == job]
    assert row.status == "failed" and "Move it again" in (row.last_error or "")
    assert not (tmp_path / "new").exists()
    _same_library(before, src, 6)


def test_a_library_on_postgresql_moves_its_folder_and_keeps_its_database(
    tmp_path: Path, postgres_url: str
) -> None:
    src = tmp_path / "old"
    with Library.open(src, create=True, database_url=postgres_url) as lib:
        add_snapshot(lib, "https://example.org/pg", title="On PostgreSQL")
    with small_drive(tmp_path / "disk2", 64 * 1024) as disk:
        dest = disk / "Library"
        result = move_library(src, dest, database_url=postgres_url)
        assert not result.renamed and not src.exists()
        with Library.open(dest, database_url=postgres_url) as lib:
            assert lib.info().snapshots == 1
            with lib.session() as s:
                snap = s.query(Snapshot).one()
            assert lib.abspath(snap.folder).is_dir()  # its files came along


URL = "http://held.test/x1.html"
REASON = "database unreachable: connection failed: Connection refused"


def _gave_up(root: Path) -> int:
    """A library whose worker gave up on the database holding a page: its note in the
    library's folder; the page's id."""
    with Library.open(root, create=True) as lib:
        job = create_job(lib, [URL], scope="page", rules=Rules(attempts=1), max_retries=0)
        assert start_job(lib, job)
        with lib.write() as s:
            ctx = load_context(s, job)
            [page] = queue.claim_pages(s, ctx, "w1", 1, now=lib.clock())
        assert note_given_up(lib, "w1", [Unrecorded(ctx, page, REASON, None)])
    return page.page_id


@pytest.mark.parametrize("disk", ["same", "other"])
def test_the_notes_of_pages_a_worker_gave_up_move_and_are_settled_there(
    tmp_path: Path, disk: str
) -> None:
    src = tmp_path / "old"
    page_id = _gave_up(src)
    with contextlib.ExitStack() as stack:
        if disk == "same":
            dest = tmp_path / "new"
        else:
            dest = stack.enter_context(small_drive(tmp_path / "disk2", 64 * 1024)) / "Library"
        assert move_library(src, dest).renamed == (disk == "same")
        assert not src.exists()
        assert [p.name for p in (dest / NOTES_DIR).iterdir()] == ["w1.json"]
        with Library.open(dest) as lib:
            assert settle_given_up(lib) == 1
            with lib.session() as s:
                row = s.get(Page, page_id)
                assert row is not None
                assert (row.state, row.attempts_remaining, row.claimed_by) == ("ready", 1, None)
        assert not list((dest / NOTES_DIR).iterdir())


def test_a_worker_here_still_running_without_a_heartbeat_bars_the_move(tmp_path: Path) -> None:
    """A worker that lost the database beats no more but still runs: moving then would
    leave what it writes next (its captures, its note of the pages it gives up) at the old
    place, or make the old folder anew. Refused, saying which, until it has ended."""
    src = tmp_path / "old"
    _make_library(src, n=1)
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with Library.open(src) as lib, lib.write() as s:
            s.add(Worker(
                id="w1", pid=running.pid, host=socket.gethostname(), version="1",
                state="working", heartbeat_at=lib.clock() - timedelta(minutes=5),
            ))  # fmt: skip
        with pytest.raises(LibraryError, match=f"pid {running.pid}"):
            move_library(src, tmp_path / "new")
        assert (src / "library.json").is_file() and not (tmp_path / "new").exists()
    finally:
        running.kill()
        running.wait()
    assert move_library(src, tmp_path / "new").renamed  # its process is gone: no bar


def test_a_note_is_not_written_where_the_library_was(tmp_path: Path) -> None:
    """A worker giving up after the library was moved from under it: its note is not
    written, and the old folder is not made anew to hold it (its pages go to their
    leases)."""
    src = tmp_path / "old"
    _make_library(src, n=1)
    with Library.open(src) as lib:
        job = create_job(lib, [URL], scope="page", rules=Rules(attempts=1), max_retries=0)
        assert start_job(lib, job)
        with lib.write() as s:
            ctx = load_context(s, job)
            [page] = queue.claim_pages(s, ctx, "w1", 1, now=lib.clock())
        os.rename(src, tmp_path / "new")  # as a move of the closed library does
        assert not note_given_up(lib, "w1", [Unrecorded(ctx, page, REASON, None)])
    assert not src.exists()
    assert not (tmp_path / "new" / NOTES_DIR).exists()
