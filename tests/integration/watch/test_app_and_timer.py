"""The app and a system timer look for due watches at the same moment: every slot is
captured once, never twice.

The app's scheduler (its real runner: :func:`run_due` in a child process) and
``archiver watch run`` (as cron or a systemd timer starts it) are started together, first
for a watch's first capture, then for a due slot. Real Chromium, a real local page.

The first capture is run by both at once (each claims pages from the same job's queue);
for the due slot, which of the two queues the run depends on who gets there first: the
moment both read the same due date at once is pinned down by
``tests/integration/capture/test_watch.py::test_two_processes_never_queue_the_same_slot``
(four processes on one injected time).
"""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot
from sqlalchemy import func, select

from archiver_app.gui.ops import OpRunner
from archiver_app.gui.watch_scheduler import WatchScheduler
from archiver_app.library import Library
from archiver_app.store.models import Job, Snapshot
from archiver_app.watch.runner import add_watch
from tests.helpers.webserver import LocalServer

pytestmark = pytest.mark.slow

ARCHIVER = Path(sys.executable).with_name("archiver")
PAGE = "<!doctype html><title>Notices</title><p>Notice number {n}.</p>"


def _race(
    qtbot: QtBot, scheduler: WatchScheduler, root: Path
) -> tuple[subprocess.CompletedProcess[str], object]:
    """Start the timer's run and the app's tick together; wait for both."""
    timer = subprocess.Popen(
        [str(ARCHIVER), "--library", str(root), "watch", "run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    ended: list[object] = []
    scheduler.ran.connect(ended.append)
    scheduler.failed.connect(lambda why: ended.append(AssertionError(why)))
    try:
        assert scheduler.tick() is not None, "the app saw nothing due"
        qtbot.waitUntil(lambda: bool(ended), timeout=240_000)
    finally:
        scheduler.ran.disconnect(ended.append)
        scheduler.failed.disconnect()
    out, _ = timer.communicate(timeout=240)
    assert not isinstance(ended[0], AssertionError), ended[0]
    return subprocess.CompletedProcess(timer.args, timer.returncode, out), ended[0]


def _captures(library: Library, url: str) -> int:
    with library.session() as s:
        return int(s.scalar(select(func.count()).where(Snapshot.url == url)) or 0)


def test_the_app_and_a_timer_never_capture_the_same_slot_twice(
    qtbot: QtBot,
    library: Library,
    library_root: Path,
    op_runner: OpRunner,
    local_server: LocalServer,
) -> None:
    url = local_server.url("/notices")
    local_server.add_static("/notices", PAGE.format(n=1))
    job_id = add_watch(library, [url], schedule="hourly", page_timeout=40)
    scheduler = WatchScheduler(library, op_runner)

    timer, _report = _race(qtbot, scheduler, library_root)  # the watch's first capture
    assert timer.returncode == 0, timer.stdout
    assert _captures(library, url) == 1

    local_server.add_static("/notices", PAGE.format(n=2))
    with library.write() as s:  # the next slot has come
        job = s.get(Job, job_id)
        assert job is not None
        job.next_run_at = library.clock() - timedelta(minutes=1)
    timer, _report = _race(qtbot, scheduler, library_root)
    assert timer.returncode == 0, timer.stdout
    assert _captures(library, url) == 2
    with library.session() as s:
        runs = s.scalars(select(Job.name).where(Job.name.like("% (run %)"))).all()
    assert len(runs) == 1, runs  # one run for the slot, queued by whichever came first
    fetched = [r for r in local_server.requests if r.path == "/notices"]
    assert len(fetched) == 2, fetched
    scheduler.stop()
