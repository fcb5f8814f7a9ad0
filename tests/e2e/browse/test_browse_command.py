"""``archiver browse`` as a user runs it: a real process, a headed Chromium under Xvfb.

Ctrl+C ends the session with the page still open saved; a kill leaves only ``.part``
files and ``pending`` rows, never a file under its final name, and a temporary profile
the next session removes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app.capture.browse.session import TEMP_PROFILE_PREFIX
from archiver_app.tasks.liveness import process_gone
from tests.helpers.warcs import read_warc, warcio_check
from tests.helpers.webserver import LocalServer, Request, Response

ARCHIVER = Path(sys.executable).with_name("archiver")

pytestmark = pytest.mark.slow


@pytest.fixture
def temp() -> Iterator[Path]:
    """The sessions' temporary folder (their profiles), removed after the test. Short:
    Chromium's socket in it must fit a Unix socket's path (108 bytes), which the test's
    ``tmp_path`` may not."""
    folder = Path(tempfile.mkdtemp(prefix="archiver-t-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def start(lib: Path, url: str, temp: Path, *, output: bool = True) -> subprocess.Popen[str]:
    """``archiver browse``, its temporary files (the session's profile) in ``temp``."""
    pipe = subprocess.PIPE if output else subprocess.DEVNULL
    return subprocess.Popen(
        [str(ARCHIVER), "--library", str(lib), "browse", url, "--collection", "web"],
        stdout=pipe, stderr=pipe, text=True, start_new_session=True,
        env={**os.environ, "TMPDIR": str(temp)},
    )  # fmt: skip


def wait_for(condition: object, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_ctrl_c_ends_the_session_with_the_open_page_saved(
    tmp_path: Path, temp: Path, browse_site: LocalServer, xvfb_display: str
) -> None:
    lib = tmp_path / "lib"
    url = browse_site.url("/more")
    proc = start(lib, url, temp)
    try:
        wait_for(
            lambda: any(r.path == "/style.css" for r in browse_site.requests), "the page to load"
        )
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    assert proc.returncode == 0, out + err
    assert "browsing: each page is saved when you leave it" in out
    # Ctrl+C comes as soon as the style sheet is asked for: the page has parsed its title
    # by then, and the session reads it at Stop once that answer is in
    assert f"saved {url} — Load more (2 responses)" in out.splitlines(), out + err
    assert "saved 1 page into collection 'web' (stopped)" in out
    with sqlite3.connect(lib / "library.db") as db:
        jobs = db.execute("SELECT kind, status, progress_done FROM jobs").fetchall()
        snaps = db.execute("SELECT url, state, folder FROM snapshots").fetchall()
    assert jobs == [("browse", "completed", 1)]
    assert [(u, s) for u, s, _ in snaps] == [(url, "complete")]
    folder = lib / snaps[0][2]
    assert "Load more" in (folder / "dom.html").read_text("utf-8")
    shot = folder / "screenshot.png"
    assert shot.is_file() and shot.read_bytes().startswith(b"\x89PNG"), out + err
    assert warcio_check(folder / "capture.warc.gz").returncode == 0


def _pending_rows(lib: Path) -> list[tuple[str]]:
    with sqlite3.connect(f"file:{lib / 'library.db'}?mode=ro", uri=True, timeout=5) as db:
        return db.execute("SELECT state FROM snapshots").fetchall()


def test_a_killed_session_leaves_part_files_and_pending_rows_only(
    tmp_path: Path,
    temp: Path,
    browse_site: LocalServer,
    xvfb_display: str,
) -> None:
    lib = tmp_path / "lib"
    proc = start(lib, browse_site.url("/more"), temp, output=False)
    try:
        parts: list[Path] = []

        def recorded() -> bool:
            parts[:] = list(lib.glob("collections/web/*/*/*/capture.warc.gz.part"))
            try:
                on_disk = bool(parts) and any(
                    r.type == "response" and r.uri.endswith("/style.css")
                    for r in read_warc(parts[0])
                )
                # and its pending row, which the session writes in a thread as the page
                # shows: under load it came after the responses (one CI run)
                return on_disk and bool(_pending_rows(lib))
            except Exception:  # a record being written right now, or the database busy
                return False

        wait_for(recorded, "the first page's responses and its pending row on disk")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the app and its browser, as a power cut would
        proc.wait(30)
    assert warcio_check(parts[0]).returncode == 0
    finals = [
        p for p in lib.glob("collections/**/*") if p.is_file() and not p.name.endswith(".part")
    ]
    assert finals == []
    with sqlite3.connect(lib / "library.db") as db:
        assert db.execute("SELECT state FROM snapshots").fetchall() == [("pending",)]
        assert db.execute("SELECT kind, status FROM jobs").fetchall() == [("browse", "running")]
    # its temporary profile (the sites' cookies) is left: the next session removes it
    left = list(temp.glob(f"{TEMP_PROFILE_PREFIX}*"))
    assert len(left) == 1, left
    with contextlib.suppress(OSError):  # host-pid of its browser, which ends a moment
        lock = os.readlink(left[0] / "SingletonLock")  # after the app (its pipe closed)
        browser = int(lock.rpartition("-")[2])  # and may have removed its lock already
        wait_for(lambda: process_gone(browser), "the killed app's browser to end", timeout=60)
    again = start(lib, browse_site.url("/more"), temp, output=False)  # the next session
    try:
        wait_for(lambda: not left[0].exists(), "the next session to remove it", timeout=60)
    finally:
        os.killpg(again.pid, signal.SIGKILL)
        again.wait(30)


def test_a_session_killed_while_a_page_loads_leaves_its_pending_row(
    tmp_path: Path, temp: Path, browse_site: LocalServer, xvfb_display: str
) -> None:
    """The page's row is written as its request leaves, before any file of it: a kill at
    any moment leaves no ``.part`` that no row names (the next start reports it)."""
    release = threading.Event()

    def stalled(_request: Request) -> Response:  # no answer yet: the page is loading
        release.wait(60)
        return Response(body=b"<title>Slow</title>")

    browse_site.routes["/slow"] = stalled
    lib = tmp_path / "lib"
    url = browse_site.url("/slow")
    proc = start(lib, url, temp, output=False)
    try:
        wait_for(lambda: browse_site.requested("/slow"), "the page's request")

        def pending() -> bool:
            try:
                return ("pending",) in _pending_rows(lib)
            except sqlite3.Error:  # not created yet, or busy
                return False

        wait_for(pending, "the loading page's pending row", timeout=30)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        release.set()
    with sqlite3.connect(lib / "library.db") as db:
        rows = db.execute("SELECT url, state, folder FROM snapshots").fetchall()
    assert [(u, s) for u, s, _ in rows] == [(url, "pending")]
    folders = {f for _, _, f in rows}
    for part in lib.glob("collections/**/*.part"):
        assert part.parent.relative_to(lib).as_posix() in folders, part
