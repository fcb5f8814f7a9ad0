"""A crawl worker killed outright on this computer: its pages, job and pending captures come
back at once, not when its leases run out; a worker waiting for a live one says so."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from archiver_app.capture.persist import create_pending
from archiver_app.crawl import api, queue
from archiver_app.crawl.jobs import create_job, load_context
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.worker import CrawlWorker, WorkerOptions
from archiver_app.library import Library
from archiver_app.store.models import Page, PageAttempt, Snapshot, Worker
from archiver_app.tasks import ProgressUpdate
from tests.helpers.crawl_site import MemoryPage, MemorySiteFetcher, memory_factory

H = "http://gone.test"


def dead_pid() -> int:
    """The pid of a process of this computer that has ended (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def live_pid() -> Iterator[int]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def worker_row(lib: Library, pid: int, job_id: int) -> str:
    """A worker's heartbeat row as ``archiver crawl`` writes it, for process ``pid`` here."""
    worker_id = f"{socket.gethostname()}:{pid}:abc123"
    now = lib.clock()
    with lib.write() as s:
        s.add(
            Worker(
                id=worker_id,
                pid=pid,
                host=socket.gethostname(),
                version="test",
                state="working",
                current_job_id=job_id,
                started_at=now,
                heartbeat_at=now,
            )
        )
    return worker_id


def claim(lib: Library, job_id: int, worker_id: str, n: int) -> list[queue.ClaimedPage]:
    with lib.write() as s:
        ctx = load_context(s, job_id)
        return queue.claim_pages(s, ctx, worker_id, n, now=lib.clock())


def started_crawl(lib: Library, worker_id_of: int) -> tuple[int, str, list[queue.ClaimedPage]]:
    """A crawl its worker (process ``worker_id_of``) runs, two pages claimed, one of them
    with a pending capture holding only a ``.part`` WARC, as a kill leaves them."""
    job = create_job(lib, [f"{H}/", f"{H}/a", f"{H}/b"], rules=Rules(attempts=2))
    from archiver_app.crawl.results import start_job

    assert start_job(lib, job)
    worker = worker_row(lib, worker_id_of, job)
    held = claim(lib, job, worker, 2)
    folder = "collections/default/2026/01/killed"
    (lib.root / folder).mkdir(parents=True)
    (lib.root / folder / "capture.warc.gz.part").write_bytes(b"WARC/1.1\r\ncut")
    create_pending(
        lib,
        url=held[0].url,
        collection_id=lib.ensure_collection("default"),
        captured_at=lib.clock(),
        uid="killed",
        folder=folder,
        job_id=job,
    )
    return job, worker, held


def test_a_dead_workers_pages_job_and_pending_capture_come_back_at_once(
    library: Library,
) -> None:
    job, worker, held = started_crawl(library, dead_pid())
    library.jobs.rows()  # what `archiver jobs` and the Jobs panel do as they list jobs
    summary = api.job_detail(library, job).summary
    assert summary.status == "queued"  # interrupted: waits for a worker, not "running"
    log = [line.message for line in api.tail_log(library, job)]
    assert any(m.startswith(f"interrupted: the process of worker {worker} is gone") for m in log)
    with library.session() as s:
        pages = {p.url: (p.state, p.claimed_by) for p in s.scalars(select(Page))}
        attempts = s.scalars(select(PageAttempt.outcome)).all()
        snap = s.scalars(select(Snapshot)).one()
        state = s.scalar(select(Worker.state).where(Worker.id == worker))
    assert all(pages[page.url] == ("ready", None) for page in held)
    assert list(attempts) == ["lost", "lost"]  # counted, as a lapsed lease is
    assert snap.state == "failed" and (snap.provenance or {})["provenance"] == "interrupted"
    assert state == "stopped"
    # the next worker takes the job up at once and captures every page
    fetcher = MemorySiteFetcher(library, {f"{H}/": MemoryPage(), f"{H}/a": MemoryPage()})
    opts = WorkerOptions(once=True, poll_seconds=0.01, heartbeat_seconds=0.05)
    CrawlWorker(library, memory_factory(fetcher), opts).run()
    assert sorted(fetcher.fetched) == [f"{H}/", f"{H}/a", f"{H}/b"]
    assert api.job_detail(library, job).summary.status == "indexed"


def test_a_worker_waiting_for_a_live_workers_pages_says_what_it_waits_for(
    library: Library, live_pid: int
) -> None:
    job = create_job(library, [f"{H}/", f"{H}/a"], rules=Rules(attempts=2), lease_seconds=1)
    from archiver_app.crawl.results import start_job

    assert start_job(library, job)
    other = worker_row(library, live_pid, job)
    claim(library, job, other, 1)
    said: list[str] = []

    def show(update: ProgressUpdate) -> None:
        said.append(update.message or "")

    fetcher = MemorySiteFetcher(library, {f"{H}/": MemoryPage(), f"{H}/a": MemoryPage()})
    opts = WorkerOptions(once=True, poll_seconds=0.01, heartbeat_seconds=0.05)
    CrawlWorker(library, memory_factory(fetcher), opts, progress=show).run()
    waits = [m for m in said if m.startswith("waiting for")]
    assert len(waits) == 1, said  # said once, not at every poll
    assert waits[0].startswith(f"waiting for 1 page held by worker {other} (last heard ")
    assert "back in the queue within 1 s if it has stopped" in waits[0]
    # its process still runs: its page came back only when its lease ran out
    with library.session() as s:
        assert s.scalar(select(Worker.state).where(Worker.id == other)) == "working"
    assert sorted(fetcher.fetched) == [f"{H}/", f"{H}/a"]


def test_archiver_jobs_shows_a_killed_crawl_as_waiting_for_a_worker(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app.cli import main

    job, _, _ = started_crawl(library, dead_pid())
    assert main(["--library", str(library.root), "jobs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:3] == [str(job), "crawl", "queued"]
    assert lines[-1] == (
        f"started, then interrupted or paused, waiting for a worker: {job}; run one here "
        f"with: archiver worker --once --job {job} (or Run in the app's Jobs panel)"
    )
