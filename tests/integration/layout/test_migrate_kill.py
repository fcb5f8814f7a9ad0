"""SIGKILL the migrator at 30 random moments while it migrates 2,000 snapshots; lose nothing.

The library lives on a tmpfs: a kill tests process death (not power loss), which behaves the
same on any file system, and tmpfs keeps 6,000 small files and 30 restarts within budget.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from archiver_app.hashing import sha256_file
from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.layout.current import snapshot_folder
from archiver_app.library import Library
from tests.helpers.legacy import legacy_library
from tests.helpers.mounts import small_drive

SNAPSHOTS = 2_000
KILLS = 30

pytestmark = pytest.mark.slow


def _migrator(root: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "archiver_app",
            "--library",
            str(root),
            "migrate",
            "--batch-size",
            "25",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


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


def test_sigkill_at_random_moments_loses_nothing(tmp_path: Path) -> None:
    with small_drive(tmp_path / "drive", 600 * 1024) as drive:
        root = drive / "library"
        with Library.open(root) as lib:
            originals = legacy_library(lib, SNAPSHOTS)
            conn = sqlite3.connect(lib.db_path)
            rows = dict(conn.execute("SELECT uid, captured_at FROM snapshots").fetchall())
            conn.close()
        rng = random.Random(20261121)
        mid_run_kills = 0
        progress = []
        for n in range(KILLS):
            proc = _migrator(root)
            assert proc.stderr is not None
            if n % 5 == 4:  # now and then a kill anywhere, start-up and recovery included
                delay = rng.uniform(0.0, 3.0)
            else:  # mostly once it has committed its first batch, then at a random moment
                first = proc.stderr.readline()
                delay = rng.uniform(0.0, 0.3) if first else 0.0
            try:  # the process ending early, or a kill at a random moment
                proc.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
            proc.stderr.close()
            if proc.returncode == 0:
                break
            assert proc.returncode == -signal.SIGKILL
            done = _migrated(root / "library.db")
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
        assert files == expected  # each file registered once, at its new path, right hash
        assert (
            conn.execute(
                "SELECT count(*) FROM settings WHERE key LIKE 'layout.cleanup.%'"
            ).fetchone()[0]
            == 0
        )
    finally:
        conn.close()
