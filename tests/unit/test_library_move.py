"""Moving a library: a rename on one file system, a verified copy across two, never a loss.

Across file systems the destination is a real tmpfs mount (a second "disk"); a full disk
is a tmpfs smaller than the library; a kill is a real SIGKILL of ``archiver move-library``.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from archiver_app.errors import InputError, LibraryError
from archiver_app.library import Library
from archiver_app.library_move import STAGING_SUFFIX, move_library
from archiver_app.paths import remembered_library_root, resolve_library_root
from archiver_app.store.models import Snapshot, Worker
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
        if p.is_file() and not p.name.startswith("library.db-")  # WAL/SHM come and go
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


def test_killed_at_any_moment_the_library_is_whole_in_one_place(tmp_path: Path) -> None:
    """SIGKILL ``archiver move-library`` mid-copy, then run it again: nothing lost."""
    src = tmp_path / "old"
    before = _make_library(src, n=40)
    archiver = Path(sys.executable).with_name("archiver")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    with small_drive(tmp_path / "disk2", 64 * 1024) as disk:
        dest = disk / "Library"
        cmd = [str(archiver), "--library", str(src), "move-library", str(dest)]
        with (tmp_path / "move.log").open("wb") as log:
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        staging = disk / f".Library{STAGING_SUFFIX}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if staging.exists() and sum(1 for p in staging.rglob("*") if p.is_file()) >= 10:
                break
            time.sleep(0.005)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL  # it was still copying when killed
        if not dest.exists():  # killed before the rename: the old library is untouched
            _same_library(before, src, 40)
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            assert done.returncode == 0, done.stdout + done.stderr
            assert "moved" in done.stdout
        _same_library(before, dest, 40)
        assert not src.exists() and not staging.exists()


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
