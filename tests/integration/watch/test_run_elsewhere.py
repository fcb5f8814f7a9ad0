"""A watch's capture run outside the watch runner (the Jobs panel's Run, Retry or Resume
run it through ``lib.jobs.run``; ``archiver worker`` takes due slots too) is compared with
the capture before it as its job ends, as the watch runner's runs are: the Changes view
and the timeline's marks list it."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from archiver_app.crawl.inline import run_job_inline
from archiver_app.library import Library
from archiver_app.store.models import Snapshot, SnapshotChange
from tests.helpers.webserver import LocalServer

pytestmark = pytest.mark.slow

PAGE = "<!doctype html><title>Notices</title><p>Notice number {n}.</p>"


def test_a_watch_run_from_the_jobs_panel_is_compared(
    library: Library, local_server: LocalServer
) -> None:
    url = local_server.url("/notices")
    local_server.add_static("/notices", PAGE.format(n=1))
    # the capture before, made here (as `archiver capture` makes it): only the watch's
    # run below needs the child process the Jobs panel starts
    run_job_inline(library, library.jobs.capture([url]))
    local_server.add_static("/notices", PAGE.format(n=2))
    watch = library.jobs.watch([url], schedule="daily")  # queued: its first capture waits

    library.jobs.run(watch)  # as the Jobs panel's Run does

    with library.session() as s:
        new = s.scalar(select(Snapshot.id).where(Snapshot.job_id == watch))
        change = s.get(SnapshotChange, new)
    assert change is not None and change.changed
    assert change.text_share is not None and change.text_share > 0
