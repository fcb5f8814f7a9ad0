"""A small collection crawled from an in-memory site, for the edition tests (unit, GUI).

``build`` makes collection ``rivers`` from two jobs: a host crawl of ``/`` with the rule
``ignore /private/`` and two attempts per page (``/dead`` fails on every one), and a
capture of ``/other``. ``index_everything`` puts every capture in the full-text index (the
memory fetcher writes rows, not text); ``files_on_disk`` puts a file where each of its file
rows says (a release checks its members' files before it writes anything).
"""

from __future__ import annotations

from sqlalchemy import select

from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.spec import Limits
from archiver_app.crawl.worker import CrawlWorker, WorkerOptions
from archiver_app.library import Library
from archiver_app.store.fulltext import upsert_snapshot_text
from archiver_app.store.models import File, Snapshot
from tests.helpers.crawl_site import MemoryPage, MemorySiteFetcher, memory_factory

H = "http://site.test"


def site() -> dict[str, MemoryPage]:
    return {
        f"{H}/": MemoryPage(links=[f"{H}/a", f"{H}/b", f"{H}/private/x", f"{H}/dead"]),
        f"{H}/a": MemoryPage(),
        f"{H}/b": MemoryPage(),
        f"{H}/dead": MemoryPage(fail_times=99),
        f"{H}/other": MemoryPage(),
    }


def crawl(lib: Library, fetcher: MemorySiteFetcher) -> None:
    opts = WorkerOptions(once=True, poll_seconds=0.01, heartbeat_seconds=0.05)
    CrawlWorker(lib, memory_factory(fetcher), opts).run()


def index_everything(lib: Library) -> None:
    with lib.write() as s:
        for sid, url in s.execute(select(Snapshot.id, Snapshot.url)):
            upsert_snapshot_text(s.connection(), sid, title=url, url=url, body="text")


def files_on_disk(lib: Library) -> None:
    """A placeholder file (not a WARC) at each file row's path, recorded as it came in."""
    with lib.session() as s:
        paths = list(s.scalars(select(File.path)))
    for rel in paths:
        path = lib.abspath(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"placeholder for {rel}".encode())


def build(lib: Library) -> None:
    lib.ensure_collection("rivers")
    create_job(lib, [f"{H}/"], scope="host", collection="rivers", limits=Limits(max_depth=1),
               rules=Rules(ignore=("/private/",), attempts=2))  # fmt: skip
    create_job(lib, [f"{H}/other"], scope="page", collection="rivers")
    crawl(lib, MemorySiteFetcher(lib, site()))
