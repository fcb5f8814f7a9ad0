"""A worker or command whose PostgreSQL server stops mid-run: one line, a documented exit
status, and a job the next run finishes with every page once.

These tests stop and start a throwaway server of their own (the suite's shared server
stays up for the other tests)."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from archiver_app.cli import main
from archiver_app.crawl.fetcher import FetchResult
from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.scope import Scope
from archiver_app.crawl.worker import CrawlWorker, WorkerOptions
from archiver_app.library import Library
from archiver_app.search import reindex as reindex_mod
from archiver_app.store.connection_loss import EXIT_UNREACHABLE, lost_connection
from archiver_app.store.models import Job, JobLog, Page, PageAttempt, Snapshot, SnapshotState
from tests.helpers.crawl_site import MemoryPage, MemorySiteFetcher, memory_factory
from tests.helpers.postgres import StoppableServer

H = "http://lost.test"
PAGES = 8


Server = StoppableServer  # a server of these tests' own, which they stop and start


@pytest.fixture
def server(stoppable_server: StoppableServer) -> StoppableServer:
    """The session's stoppable server, running as the test starts."""
    return stoppable_server


def _new_database(server: Server, name: str) -> str:
    return server.new_database(name)


def test_a_worker_that_loses_the_database_says_so_and_the_next_run_finishes(
    tmp_path: Path, server: Server
) -> None:
    url = _new_database(server, "lost")
    root = tmp_path / "lib"
    pages = {f"{H}/": MemoryPage(links=[f"{H}/{i}" for i in range(PAGES)])}
    pages.update({f"{H}/{i}": MemoryPage() for i in range(PAGES)})
    with Library.open(root, create=True, database_url=url) as lib:
        job = create_job(lib, [f"{H}/"], scope=Scope.HOST, lease_seconds=2)

        def stop_after_three(_url: str) -> None:
            if len(fetcher.fetched) == 3:
                server.stop()

        fetcher = MemorySiteFetcher(lib, pages, on_fetch=stop_after_three)
        opts = WorkerOptions(
            once=True, poll_seconds=0.05, heartbeat_seconds=0.2, concurrency=1,
            reconnect_seconds=2.0,
        )  # fmt: skip
        started = time.monotonic()
        stats = CrawlWorker(lib, memory_factory(fetcher), opts).run()
        assert stats.database_problem is not None
        assert stats.database_problem.startswith("database unreachable: ")
        assert "\n" not in stats.database_problem
        assert time.monotonic() - started < 60  # bounded: it gave up
        assert len(fetcher.fetched) == 3  # nothing claimed while the database was away

    server.start()
    with Library.open(root, database_url=url) as lib:
        fetcher = MemorySiteFetcher(lib, pages)
        opts = WorkerOptions(once=True, poll_seconds=0.05, heartbeat_seconds=0.2)
        stats = CrawlWorker(lib, memory_factory(fetcher), opts).run()
        assert stats.database_problem is None
        with lib.session() as s:
            assert s.get(Job, job).status in ("completed", "indexed")  # type: ignore[union-attr]
            urls = Counter(s.scalars(select(Snapshot.url).where(Snapshot.job_id == job)))
    assert set(urls) == set(pages) and set(urls.values()) == {1}, urls


def test_a_worker_gets_over_a_short_outage(
    tmp_path: Path, server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    url = _new_database(server, "blip")
    root = tmp_path / "lib"
    pages = {f"{H}/": MemoryPage(links=[f"{H}/{i}" for i in range(PAGES)])}
    pages.update({f"{H}/{i}": MemoryPage() for i in range(PAGES)})
    with Library.open(root, create=True, database_url=url) as lib:
        job = create_job(lib, [f"{H}/"], scope=Scope.HOST, lease_seconds=2)

        def blip(_url: str) -> None:
            if len(fetcher.fetched) == 3:
                server.stop()
                restart.start()  # back in 1 s, long before the worker gives up

        restart = threading.Timer(1.0, server.start)
        fetcher = MemorySiteFetcher(lib, pages, on_fetch=blip)
        opts = WorkerOptions(
            once=True, poll_seconds=0.05, heartbeat_seconds=0.2, concurrency=1,
            reconnect_seconds=60.0,
        )  # fmt: skip
        said: list[str] = []
        worker = CrawlWorker(
            lib, memory_factory(fetcher), opts, progress=lambda u: said.append(u.message)
        )
        stats = worker.run()
        restart.join()
        assert stats.database_problem is None
        assert any(m.startswith("database unreachable: ") for m in said), said
        # said once, by the progress line: not again on stderr as a logged warning
        loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert not [r for r in loud if "trying again" in r.getMessage()], loud
        with lib.session() as s:
            assert s.get(Job, job).status in ("completed", "indexed")  # type: ignore[union-attr]
            urls = Counter(s.scalars(select(Snapshot.url).where(Snapshot.job_id == job)))
    assert set(urls) == set(pages) and set(urls.values()) == {1}, urls


def test_a_command_that_loses_the_database_prints_one_line(
    tmp_path: Path,
    server: Server,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = _new_database(server, "cmd")
    root = tmp_path / "lib"
    with Library.open(root, create=True, database_url=url):
        pass
    calls = []
    real = reindex_mod._remaining

    def stop_the_server(*args: object, **kwargs: object) -> int:
        calls.append(1)
        n = real(*args, **kwargs)  # type: ignore[arg-type]
        server.stop()
        return n

    monkeypatch.setattr(reindex_mod, "_remaining", stop_the_server)
    code = main(["--library", str(root), "index", "rebuild"])
    _out, err = capsys.readouterr()
    assert calls and code == EXIT_UNREACHABLE
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("archiver: error: database unreachable: ")
    assert "Traceback" not in err


def test_a_live_servers_errors_are_not_a_lost_connection(postgres_url: str) -> None:
    """A statement the server refuses is a bug or bad input, not an outage."""
    from sqlalchemy import create_engine, text

    engine = create_engine(postgres_url)
    try:
        with pytest.raises(OperationalError) as refused, engine.connect() as conn:
            conn.execute(text("SET statement_timeout = 1; SELECT pg_sleep(1)"))
        assert not lost_connection(refused.value)
    finally:
        engine.dispose()


class _StopsAfterCapture(MemorySiteFetcher):
    """Stops the server just after capturing ``when``: its rows are in, its outcome not."""

    def __init__(self, lib: Library, pages: dict[str, MemoryPage], stop: Callable[[], None],
                 when: str) -> None:  # fmt: skip
        super().__init__(lib, pages)
        self.stop, self.when = stop, when

    async def fetch(self, url: str, **kwargs: Any) -> FetchResult:
        result = await super().fetch(url, **kwargs)
        if url == self.when:
            self.stop()
        return result


@pytest.mark.parametrize("stopped", ["while capturing", "as the page is recorded"])
def test_a_page_the_outage_kept_from_being_recorded_is_no_failed_attempt(
    tmp_path: Path, server: Server, stopped: str
) -> None:
    """One attempt per page and no retry (as ``archiver capture`` makes its job); the
    server stops for 2.5 s (longer than the page's 2 s lease, so the worker's first retry
    after 1 s fails too) while the second page is captured, or just as it is recorded.
    That page is no failed attempt: the worker holds it through the outage and, once the
    server is back, captures it again (its capture could not be written) or records the
    capture it made; the same run ends with every page captured, and no attempt is said
    lost to a stopped worker."""
    url = _new_database(server, "held")
    root = tmp_path / "lib"
    pages = {f"{H}/{i}": MemoryPage() for i in range(4)}
    second = f"{H}/1"
    restart = threading.Timer(2.5, server.start)

    def stop() -> None:
        if not restart.is_alive() and not restart.finished.is_set():  # once
            server.stop()
            restart.start()

    with Library.open(root, create=True, database_url=url) as lib:
        job = create_job(
            lib, list(pages), scope=Scope.PAGE, rules=Rules(attempts=1, concurrency=1),
            max_retries=0, lease_seconds=2,
        )  # fmt: skip
        if stopped == "while capturing":
            fetcher = MemorySiteFetcher(lib, pages, on_fetch=lambda u: u == second and stop())
        else:
            fetcher = _StopsAfterCapture(lib, pages, stop, second)
        opts = WorkerOptions(once=True, poll_seconds=0.05, heartbeat_seconds=0.2, concurrency=1)
        said: list[str] = []
        worker = CrawlWorker(
            lib, memory_factory(fetcher), opts, progress=lambda u: said.append(u.message)
        )
        stats = worker.run()
        restart.join()
        assert stats.database_problem is None
        assert (stats.pages_done, stats.pages_failed) == (4, 0), said
        with lib.session() as s:
            assert s.get(Job, job).status in ("completed", "indexed")  # type: ignore[union-attr]
            states = dict(s.execute(select(Page.url, Page.state).where(Page.job_id == job)).all())
            attempts = s.execute(
                select(Page.url, PageAttempt.outcome, PageAttempt.error)
                .join(Page, Page.id == PageAttempt.page_id)
                .where(PageAttempt.job_id == job)
                .order_by(PageAttempt.id)
            ).all()
            log = s.scalars(select(JobLog.message).where(JobLog.job_id == job)).all()
            snapshots = Counter(
                s.scalars(
                    select(Snapshot.url).where(
                        Snapshot.job_id == job, Snapshot.state == SnapshotState.COMPLETE
                    )
                )
            )
    assert set(states.values()) == {"done"}, states
    assert set(snapshots) == set(pages) and set(snapshots.values()) == {1}, snapshots
    assert "lost" not in [a.outcome for a in attempts], attempts
    assert not [line for line in [*log, *said] if "stopped" in line], (log, said)
    if stopped == "while capturing":  # its capture wrote nothing: captured again
        assert fetcher.fetched.count(second) == 2
        held = [a for a in attempts if a.url == second]
        assert [a.outcome for a in held] == ["unrecorded", "done"]
        assert held[0].error.startswith("database unreachable: ")
        assert any(m.startswith(f"{second}: not recorded (database unreachable: ") for m in said)
    else:  # its capture was saved: recorded once the server is back, not made again
        assert fetcher.fetched.count(second) == 1
        assert [a.outcome for a in attempts if a.url == second] == ["done"]


@pytest.mark.parametrize("stopped", ["while capturing", "as the page is recorded"])
def test_a_worker_that_gives_up_holding_a_page_costs_it_no_attempt(
    tmp_path: Path, server: Server, stopped: str
) -> None:
    """One attempt per page; the server stops while the second page is captured (or just
    as it is recorded) and stays away until the worker gives up. The page it held was no
    failed attempt: once the server is back and its lease has run out, the next worker
    gives it back (captured again) or records the capture it made; it is not lost."""
    url = _new_database(server, "gaveup")
    root = tmp_path / "lib"
    pages = {f"{H}/{i}": MemoryPage() for i in range(4)}
    second = f"{H}/1"
    with Library.open(root, create=True, database_url=url) as lib:
        job = create_job(
            lib, list(pages), scope=Scope.PAGE, rules=Rules(attempts=1, concurrency=1),
            max_retries=0, lease_seconds=1,
        )  # fmt: skip
        if stopped == "while capturing":
            fetcher = MemorySiteFetcher(
                lib, pages, on_fetch=lambda u: u == second and server.stop()
            )
        else:
            fetcher = _StopsAfterCapture(lib, pages, server.stop, second)
        opts = WorkerOptions(
            once=True, poll_seconds=0.05, heartbeat_seconds=0.2, concurrency=1,
            reconnect_seconds=1.0,
        )  # fmt: skip
        stats = CrawlWorker(lib, memory_factory(fetcher), opts).run()
        assert stats.database_problem is not None
    server.start()
    time.sleep(1.5)  # its lease has run out: another worker's heartbeat would count it lost
    with Library.open(root, database_url=url) as lib:
        again = MemorySiteFetcher(lib, pages)
        opts = WorkerOptions(once=True, poll_seconds=0.05, heartbeat_seconds=0.2)
        stats = CrawlWorker(lib, memory_factory(again), opts).run()
        assert stats.database_problem is None and stats.pages_failed == 0
        with lib.session() as s:
            assert s.get(Job, job).status in ("completed", "indexed")  # type: ignore[union-attr]
            states = dict(s.execute(select(Page.url, Page.state).where(Page.job_id == job)).all())
            held = s.scalars(
                select(PageAttempt.outcome)
                .join(Page, Page.id == PageAttempt.page_id)
                .where(Page.url == second)
                .order_by(PageAttempt.id)
            ).all()
            pending = s.scalars(
                select(Snapshot.id).where(Snapshot.state == SnapshotState.PENDING)
            ).all()
    assert set(states.values()) == {"done"}, states
    assert not pending
    if stopped == "while capturing":  # nothing of it was written: captured again
        assert held == ["unrecorded", "done"], held
        assert again.fetched.count(second) == 1
    else:  # its capture was saved: recorded, not made again
        assert held == ["done"], held
        assert second not in again.fetched
