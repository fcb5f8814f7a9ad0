"""A library another process has open is not moved, and a library being moved is not
opened: real ``archiver`` processes, each holding the library as a user's would.

(The desktop app holding its library: ``tests/e2e/test_move_open_library.py``.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from archiver_app import library_use
from archiver_app.library import Library
from archiver_app.library_move import move_library
from archiver_app.tasks import ProgressUpdate
from tests.helpers.mounts import small_drive
from tests.helpers.snapshots import add_snapshot

pytestmark = pytest.mark.unit

ARCHIVER = Path(sys.executable).with_name("archiver")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The commands' environment: this test's own remembered places."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("ARCHIVER_LIBRARY", None)
    return env


@pytest.fixture(autouse=True)
def own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("ARCHIVER_LIBRARY", raising=False)


def _archiver(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ARCHIVER), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


@contextmanager
def _serving(root: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """``archiver serve`` on the library, once it says where it serves (it has it open)."""
    proc = subprocess.Popen(
        [str(ARCHIVER), "--library", str(root), "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "http://127.0.0.1:" in first, first + (proc.stderr.read() if proc.stderr else "")
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def test_a_library_served_is_not_moved_until_the_server_is_gone(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """`archiver move-library` moved the library from under a running `archiver serve`
    (and the desktop app, and a worker). Now it says who has it open; once that process is
    gone, even killed without letting go, the move goes ahead."""
    src, dest = tmp_path / "lib", tmp_path / "moved"
    with Library.open(src) as lib:
        add_snapshot(lib, "https://harbour.example/tides", title="Tides")
    with _serving(src, env) as server:
        done = _archiver(env, "--library", str(src), "move-library", str(dest))
        assert done.returncode == 2, done.stdout + done.stderr
        assert (
            f"the library is open in archiver serve (pid {server.pid}): close it first"
            in done.stderr
        )
        assert not dest.exists() and (src / "library.json").is_file()
        # the same from this process's own move (the app's File > Move Library…)
        with pytest.raises(library_use.LibraryInUseError, match=f"pid {server.pid}"):
            move_library(src, dest)
        assert not dest.exists()
        server.send_signal(signal.SIGKILL)  # gone without a word: its lock goes with it
        server.wait(timeout=30)
    assert [p.name for p in (src / library_use.FOLDER).iterdir()]  # its file is left...
    done = _archiver(env, "--library", str(src), "move-library", str(dest))
    assert done.returncode == 0, done.stdout + done.stderr  # ...and not counted
    assert "moved the library to" in done.stdout
    assert not (dest / library_use.FOLDER).exists()  # removed by the look that found it
    with Library.open(dest) as lib:
        assert lib.info().snapshots == 1


def test_a_library_being_moved_is_not_opened_by_another_process(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """While the files are copied to another disk, a command (a capture from a terminal,
    the app) opening the old place would write where the copy no longer looks."""
    src = tmp_path / "lib"
    with Library.open(src) as lib:
        for i in range(3):
            add_snapshot(lib, f"https://harbour.example/{i}", body="tide " * 300)
    said: list[subprocess.CompletedProcess[str]] = []

    def meanwhile(update: ProgressUpdate) -> None:
        if not said:  # the move is under way, paused while this runs
            said.append(_archiver(env, "--library", str(src), "info"))

    with small_drive(tmp_path / "disk2", 16 * 1024) as disk:
        dest = disk / "Library"
        move_library(src, dest, progress=meanwhile)
        assert said and said[0].returncode == 2, said
        assert f"the library at {src} is being moved to {dest} by " in said[0].stderr
        assert "open it there once the move is done" in said[0].stderr
        assert not src.exists()
        with Library.open(dest) as lib:
            assert lib.info().snapshots == 3
        assert not (dest / library_use.FOLDER).exists()


def test_a_library_closed_leaves_no_trace_and_open_in_this_process_is_not_moved(
    tmp_path: Path,
) -> None:
    root = tmp_path / "lib"
    lib = Library.open(root)
    assert (root / library_use.FOLDER).is_dir()  # held while open
    assert library_use.holders(root) == []  # (by this process: not another's)
    lib.close()
    assert sorted(p.name for p in root.iterdir()) == ["library.db", "library.json"]
    # open in this process too: that part of it would be left at the old path
    refused = pytest.raises(library_use.LibraryInUseError, match=f"pid {os.getpid()}")
    with Library.open(root), refused:
        move_library(root, tmp_path / "moved")
    assert move_library(root, tmp_path / "moved").renamed  # closed (as the app does first)
    assert not (tmp_path / "moved" / library_use.FOLDER).exists()


def test_a_look_never_opens_this_process_s_own_registration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A look at who has the library open opened every registration, this process's own
    too, to test its lock. Where ``flock`` is emulated by POSIX locks (NFS, SMB: a shared
    library's folder) the test succeeds for the process that holds the lock, and closing
    the descriptor lets go of it: the look removed the app's own registration (a second
    open of its library, as Check Setup does) and a move was then let through."""
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        own = sorted((root / library_use.FOLDER).iterdir())
        assert len(own) == 1
        opened: list[str] = []
        real_open = os.open

        def watched(path: object, *args: object, **kwargs: object) -> int:
            opened.append(str(path))
            return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(library_use.os, "open", watched)
        Library.open(root).close()  # another part of the process opens it again
        found = library_use.holders(root, own=True)
        assert [h.pid for h in found] == [os.getpid()]
        with pytest.raises(library_use.LibraryInUseError):
            library_use.refuse_if_open(root)
        assert str(own[0]) not in opened
        assert own[0].exists() and lib.root == root


def test_what_a_killed_process_left_goes_when_another_closes_the_library(
    tmp_path: Path,
) -> None:
    """Each process killed while it had the library open left its registration for good
    (a migration killed at random moments left one per kill)."""
    root = tmp_path / "lib"
    Library.open(root).close()
    holding = (
        "import sys, time; from pathlib import Path; from archiver_app.library import Library;"
        "lib = Library.open(Path(sys.argv[1])); print('open', flush=True); time.sleep(60)"
    )
    with subprocess.Popen(
        [sys.executable, "-c", holding, str(root)], stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "open"
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
    assert len(list((root / library_use.FOLDER).iterdir())) == 1  # left by the killed one
    Library.open(root).close()
    assert not (root / library_use.FOLDER).exists()
