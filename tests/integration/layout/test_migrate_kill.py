"""SIGKILL the migrator at 30 random moments while it migrates 2,000 snapshots; lose nothing.

The library lives on a tmpfs: a kill tests process death (not power loss), which behaves the
same on any file system, and tmpfs keeps 6,000 small files and 30 restarts within budget.
Each killed migrator is ``archiver migrate`` (the CLI's ``main``) in a forked child, which
spares each round an interpreter start-up and its imports (0.8 s of CPU); the run that
finishes the work is the real command in a new process.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from archiver_app.cli import main
from archiver_app.hashing import sha256_file
from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.layout.current import snapshot_folder
from archiver_app.library import Library
from tests.helpers.legacy import legacy_library
from tests.helpers.mounts import small_drive

SNAPSHOTS = 2_000
KILLS = 30
BATCH = 10  # 200 batches: 30 kills after at most a few batches each never finish the work

pytestmark = pytest.mark.slow


def _argv(root: Path) -> list[str]:
    return ["--library", str(root), "migrate", "--batch-size", str(BATCH)]


def _migrator(root: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "archiver_app", *_argv(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _run_migrate(root: Path) -> None:  # pragma: no cover - the child
    sys.exit(main(_argv(root)))


def _forked_migrator(root: Path) -> multiprocessing.process.BaseProcess:
    """``archiver migrate`` in a forked child (no library connection is open to cross the
    fork: the library was closed, and each count opens its own)."""
    proc = multiprocessing.get_context("fork").Process(target=_run_migrate, args=(root,))
    proc.start()
    return proc


def _migrated(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return int(
            conn.execute(
                "SELECT count(*) FROM snapshots WHERE fs_version = ?", (CURRENT_FS_VERSION,)
            ).fetchone()[0]
        )
    finally:
        conn.close()


def _wait_for_progress(
    proc: multiprocessing.process.BaseProcess, db: Path, target: int, limit: float
) -> None:
    """Return once ``target`` snapshots are migrated, the process ended, or ``limit`` s."""
    deadline = time.monotonic() + limit
    while proc.is_alive() and time.monotonic() < deadline:
        if _migrated(db) >= target:
            return
        proc.join(0.005)


def test_sigkill_at_random_moments_loses_nothing(tmp_path: Path) -> None:
    with small_drive(tmp_path / "drive", 600 * 1024) as drive:
        root = drive / "library"
        with Library.open(root) as lib:
            originals = legacy_library(lib, SNAPSHOTS)
            conn = sqlite3.connect(lib.db_path)
            rows = dict(conn.execute("SELECT uid, captured_at FROM snapshots").fetchall())
            conn.close()
        rng = random.Random(20261121)
        db = root / "library.db"
        mid_run_kills = 0
        progress = []
        for n in range(KILLS):
            before = _migrated(db)
            proc = _forked_migrator(root)
            # Kill on progress, not on a clock, so a fast machine cannot finish the work
            # between kills: now and then as soon as anything moved (start-up and recovery
            # included), mostly after a random 1-30 snapshots, then a random moment later.
            target = before + (1 if n % 5 == 4 else rng.randint(1, 30))
            limit = rng.uniform(0.0, 1.5) if n % 5 == 4 else 120.0
            _wait_for_progress(proc, db, target, limit)
            if proc.is_alive():
                proc.join(rng.uniform(0.0, 0.03))
            if proc.is_alive():
                assert proc.pid is not None
                os.kill(proc.pid, signal.SIGKILL)
            proc.join()
            if proc.exitcode == 0:
                break
            assert proc.exitcode == -signal.SIGKILL
            done = _migrated(db)
            progress.append(done)
            mid_run_kills += 0 < done < SNAPSHOTS
        final = _migrator(root)
        _, err = final.communicate(timeout=300)
        assert final.returncode == 0, err.decode()

        assert len(progress) == KILLS, progress  # every kill hit a running migrator
        assert mid_run_kills >= KILLS // 2, progress  # most of them in the middle of the work
        _check_library(root, originals, rows)


def _check_library(root: Path, originals: dict[str, tuple[int, str]], rows: dict[str, str]) -> None:
    expected: dict[str, tuple[int, str]] = {}
    folders = {}
    for key, value in originals.items():
        uid, name = key.split("/", 1)
        at = datetime.fromisoformat(rows[uid] + "+00:00")
        folder = snapshot_folder("default", at, uid).as_posix()
        folders[uid] = folder
        expected[f"{folder}/{name}"] = value
    present = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.name.startswith("library."):
            present[path.relative_to(root).as_posix()] = path
    sidecars = {f"{f}/index.json" for f in folders.values()}
    # every original exactly once at its new path with its sha256; nothing else left over
    assert set(present) == set(expected) | sidecars, sorted(
        set(present) ^ (set(expected) | sidecars)
    )[:10]
    for rel, (size, sha) in expected.items():
        assert present[rel].stat().st_size == size
        assert sha256_file(present[rel]) == sha, rel
    for uid, folder in folders.items():
        data = json.loads((root / folder / "index.json").read_text())
        assert data["uid"] == uid
        assert data["fs_version"] == CURRENT_FS_VERSION
        assert len(data["files"]) == 3
    conn = sqlite3.connect(root / "library.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        versions = dict(conn.execute("SELECT fs_version, count(*) FROM snapshots GROUP BY 1"))
        assert versions == {CURRENT_FS_VERSION: SNAPSHOTS}
        db_folders = dict(conn.execute("SELECT uid, folder FROM snapshots"))
        assert db_folders == folders
        files = {p: (n, h) for p, n, h in conn.execute("SELECT path, size, sha256 FROM files")}
        # each file registered once, at its new path, right hash; each index.json too
        written = {
            rel: (present[rel].stat().st_size, sha256_file(present[rel])) for rel in sidecars
        }
        assert files == expected | written
        assert (
            conn.execute(
                "SELECT count(*) FROM settings WHERE key LIKE 'layout.cleanup.%'"
            ).fetchone()[0]
            == 0
        )
    finally:
        conn.close()
