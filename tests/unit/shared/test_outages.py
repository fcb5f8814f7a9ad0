"""Loops that retry on their own through an outage of the library's database: one line as
it goes, one as it comes back, nothing at each retry in between (a job's heartbeat printed
a traceback twice a second for as long as the server was down).

These tests stop and start a throwaway server of their own."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pytest

from archiver_app.jobs import JobKind, KindSpec, Registry, RunningJob, enqueue, run_job
from archiver_app.library import Library
from archiver_app.outages import OutageKind, Outages
from archiver_app.tasks import CancelToken, Progress
from tests.helpers.postgres import StoppableServer


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What reached the log at WARNING or above (what the app's stderr shows)."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.exc_info]


def test_a_job_whose_database_goes_away_says_it_once_each_way(
    tmp_path: Path, stoppable_server: StoppableServer, caplog: pytest.LogCaptureFixture
) -> None:
    server = stoppable_server

    def run(lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken) -> Any:
        # long work of its own (hashing a big file, say) while the server is down: the
        # heartbeat alone tries the database, every 0.05 s
        server.stop()
        time.sleep(1.5)
        server.start()
        deadline = time.monotonic() + 20
        while lib.outages.current is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        return {"done": 1}

    caplog.set_level(logging.WARNING)
    url = server.new_database("beat")
    with Library.open(tmp_path / "lib", create=True, database_url=url) as lib:
        job_id = enqueue(lib, JobKind.MIRROR, {}, name="mirror")
        registry = Registry([KindSpec(JobKind.MIRROR, run, resumable=True)])
        run_job(lib, job_id, registry, heartbeat_seconds=0.1, progress_seconds=0.05)
        assert lib.outages.current is None
    lines = said(caplog)
    assert not tracebacks(caplog), tracebacks(caplog)
    assert len(lines) == 2, lines
    assert lines[0].startswith("the library's database is unreachable: "), lines
    assert f"renewing job {job_id}'s lease" in lines[0] and "\n" not in lines[0]
    assert lines[1].startswith("the library's database answers again (unreachable for "), lines


class _Fake(Exception):
    pass


def test_an_unexpected_error_keeps_its_traceback_once_per_distinct_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outages = Outages()
    caplog.set_level(logging.WARNING)
    for _ in range(5):
        assert outages.failed("reading the jobs", _Fake("no such column")) is None
    outages.failed("reading the jobs", _Fake("another thing"))
    assert [r.getMessage() for r in caplog.records] == ["reading the jobs failed"] * 2
    assert all(r.exc_info for r in caplog.records)
    assert outages.current is None


def test_a_try_begun_before_the_outage_does_not_end_it(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    outages = Outages(clock=lambda: now[0])
    caplog.set_level(logging.WARNING)
    tried = outages.clock()
    now[0] = 101.0
    outages.lost("reading the status", OutageKind.DATABASE, "connection refused")
    outages.lost("reading the jobs", OutageKind.DATABASE, "connection refused")
    outages.reached(tried_at=tried)  # it finished as the server stopped
    assert outages.current is not None
    now[0] = 163.0
    outages.reached(tried_at=162.0)
    assert outages.current is None
    assert [r.getMessage() for r in caplog.records] == [
        "the library's database is unreachable: connection refused (while reading the"
        " status); trying again until it is back",
        "the library's database answers again (unreachable for 1:02)",
    ]
