"""A browsing session killed before its end leaves its temporary profile (the browsed
sites' cookies and storage): the next session removes it, and never one in use."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from archiver_app.capture.browse.session import (
    OWNER_MARK,
    TEMP_PROFILE_PREFIX,
    UNMARKED_PROFILE_SECONDS,
    make_temp_profile,
    sweep_temp_profiles,
)


def _profile(
    root: Path, name: str, lock: str | None = None, age: float = 0.0, owner: str | None = None
) -> Path:
    folder = root / f"{TEMP_PROFILE_PREFIX}{name}"
    (folder / "Default").mkdir(parents=True)
    (folder / "Default" / "Cookies").write_bytes(b"session=secret")
    if lock is not None:
        os.symlink(lock, folder / "SingletonLock")  # as Chromium writes it: host-pid
    if owner is not None:
        (folder / OWNER_MARK).write_text(owner)
    then = time.time() - age
    os.utime(folder, (then, then))
    return folder


@pytest.mark.skipif(sys.platform == "win32", reason="Chromium's lock is a link on POSIX")
def test_profiles_of_killed_sessions_are_removed_and_those_in_use_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    host = socket.gethostname()
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = int(done.stdout)
    killed = _profile(tmp_path, "killed", f"{host}-{dead}")
    # the session killed, its browser ended by itself (and took its lock away)
    ended = _profile(tmp_path, "ended", owner=f"{host}-{dead}")
    in_use = _profile(tmp_path, "in-use", f"{host}-{os.getpid()}")
    alive = f"{host}-{os.getpid()}"
    browser_left = _profile(tmp_path, "browser-left", alive, owner=f"{host}-{dead}")
    mine = make_temp_profile()
    other_host = _profile(tmp_path, "other-host", f"not-{host}-{dead}")
    never_locked = _profile(tmp_path, "old", age=UNMARKED_PROFILE_SECONDS + 60)
    starting = _profile(tmp_path, "starting")  # made a moment ago: its browser starts
    not_ours = tmp_path / "something-else"
    not_ours.mkdir()

    assert sorted(sweep_temp_profiles()) == sorted([killed, ended, never_locked])
    assert not killed.exists() and not ended.exists() and not never_locked.exists()
    assert in_use.exists() and other_host.exists() and starting.exists() and not_ours.exists()
    assert browser_left.exists() and mine.exists() and mine.parent == tmp_path
