"""Workers of a shared library: the jobs view names their hosts, and a worker whose shared
folder goes away stops claiming and says why."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.api.jobs_view import job_rows
from archiver_app.crawl import api
from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.scope import Scope
from archiver_app.crawl.worker import CrawlWorker, FetcherFactory, WorkerOptions
from archiver_app.library import Library
from archiver_app.library_share import FolderCode
from archiver_app.store.models import Page, Worker
from tests.helpers.crawl_site import MemoryPage, MemorySiteFetcher, memory_factory

H = "http://share.test"


def test_the_jobs_view_names_the_hosts_of_live_workers(library: Library) -> None:
    job = create_job(library, [f"{H}/"], scope=Scope.PAGE)
    other = create_job(library, [f"{H}/o"], scope=Scope.PAGE)
    now = library.clock()
    with library.write() as s:
        for i, (host, beat) in enumerate(
            [("lab-2", now), ("lab-1", now), ("lab-2", now), ("gone", now - timedelta(hours=1))]
        ):
            s.add(
                Worker(
                    id=f"{host}:{i}",
                    pid=100 + i,
                    host=host,
                    version="t",
                    started_at=now,
                    heartbeat_at=beat,
                    state="working",
                    current_job_id=job,
                )
            )
    rows = {r.id: r for r in job_rows(library)}
    assert rows[job].hosts == ("lab-1", "lab-2", "lab-2")
    assert rows[job].hosts_text == "lab-1, lab-2 ×2"
    assert rows[other].hosts == () and rows[other].hosts_text == ""


def test_a_worker_whose_share_goes_away_stops_claiming(tmp_path: Path, postgres_url: str) -> None:
    root = tmp_path / "share"
    pages = {f"{H}/": MemoryPage(links=[f"{H}/{i}" for i in range(8)])}
    pages.update({f"{H}/{i}": MemoryPage() for i in range(8)})
    with Library.open(root, database_url=postgres_url) as lib:
        job = create_job(lib, [f"{H}/"], scope=Scope.HOST)

        def unmount_after_two(url: str) -> None:
            if len(fetcher.fetched) == 2:
                root.rename(tmp_path / "unmounted")

        fetcher = MemorySiteFetcher(lib, pages, on_fetch=unmount_after_two)
        opts = WorkerOptions(once=True, poll_seconds=0.01, heartbeat_seconds=0.05, concurrency=1)
        worker = CrawlWorker(lib, memory_factory(fetcher), opts)
        stats = worker.run()
        assert stats.folder_problem is not None
        assert stats.folder_problem.code is FolderCode.UNREADABLE
        # one page at a time (concurrency 1), and nothing claimed after the share went away
        assert len(fetcher.fetched) == 2
        with lib.session() as s:
            ready = s.scalars(select(Page.url).where(Page.job_id == job, Page.state == "ready"))
            assert len(list(ready)) >= 6
        log = [line.message for line in api.tail_log(lib, job)]
        assert any("stops claiming" in m and "is the share mounted?" in m for m in log)


def test_a_crawl_whose_share_goes_away_exits_with_status_2(
    tmp_path: Path,
    postgres_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`archiver crawl` runs a worker: it exits as `archiver worker` does (status 2, the
    reason in one line), not with the 1 of a crawl whose pages failed."""
    from archiver_app import cli
    from archiver_app.capture import browser
    from archiver_app.crawl import inline

    root = tmp_path / "share"
    Library.open(root, database_url=postgres_url).close()
    pages = {f"{H}/": MemoryPage(links=[f"{H}/{i}" for i in range(8)])}
    pages.update({f"{H}/{i}": MemoryPage() for i in range(8)})

    def unmounting(lib: Library) -> FetcherFactory:
        def unmount_after_two(_url: str) -> None:
            if len(fetcher.fetched) == 2:
                root.rename(tmp_path / "unmounted")

        fetcher = MemorySiteFetcher(lib, pages, on_fetch=unmount_after_two)
        return memory_factory(fetcher)

    monkeypatch.setattr(inline, "capturer_factory", unmounting)
    monkeypatch.setattr(browser, "require_browser", lambda: None)
    code = cli.main(["crawl", "--library", str(root), "--concurrency", "1", f"{H}/"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "archiver: error:" in err and "is the share mounted?" in err
    # `archiver capture` of a list runs the same worker, and says so the same way
    (tmp_path / "unmounted").rename(root)
    urls = [f"{H}/{i}" for i in range(8)]
    code = cli.main(["capture", "--library", str(root), *urls])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "archiver: error:" in err and "is the share mounted?" in err
