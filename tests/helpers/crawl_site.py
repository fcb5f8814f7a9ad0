"""Sites for crawl tests: an in-memory fetcher for unit tests and a generated HTTP site.

:class:`MemorySiteFetcher` answers a :class:`~archiver_app.crawl.fetcher.PageFetcher` call
from a dict of pages (links, redirects, statuses, failures) and writes the snapshot, file
and record rows a real capture writes, so the queue, counters, coverage and indexing steps
run for real without a browser. The integration tests use the real capture engine on
:func:`generated_site` served by ``LocalServer``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType

from archiver_app.crawl.fetcher import FetchResult
from archiver_app.crawl.rules import Rules
from archiver_app.library import Library
from archiver_app.store.models import File, Record, Snapshot, SnapshotState
from archiver_app.tasks import CancelToken
from archiver_app.warc.surt import url_group, url_key


@dataclass
class MemoryPage:
    links: list[str] = field(default_factory=list)
    status: int = 200
    redirect_to: str | None = None
    fail_times: int = 0  # the first N fetches fail (network error)
    size: int = 1000


class MemorySiteFetcher:
    """Serves ``pages``; unknown URLs are 404s. Records every fetch in ``fetched``."""

    def __init__(
        self,
        lib: Library,
        pages: dict[str, MemoryPage],
        *,
        delay: float = 0.0,
        on_fetch: Callable[[str], None] | None = None,
    ) -> None:
        self.lib = lib
        self.pages = pages
        self.delay = delay
        self.fetched: list[str] = []
        self.active = 0
        self.max_active = 0
        self.on_fetch = on_fetch
        self._failures: dict[str, int] = {}

    async def __aenter__(self) -> MemorySiteFetcher:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None

    async def fetch(
        self,
        url: str,
        *,
        job_id: int,
        collection: str,
        tags: tuple[str, ...],
        rules: Rules,
        cancel: CancelToken,
    ) -> FetchResult:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            self.fetched.append(url)
            if self.on_fetch:
                self.on_fetch(url)
            await asyncio.sleep(self.delay)
            page = self.pages.get(url)
            final = url
            if page and page.redirect_to:
                final = page.redirect_to
                page = self.pages.get(final)
            if page and page.fail_times > self._failures.get(url, 0):
                self._failures[url] = self._failures.get(url, 0) + 1
                return FetchResult(url, final, False, None, error="net::ERR_CONNECTION_RESET")
            status = page.status if page else 404
            links = list(page.links) if page else []
            size = page.size if page else 100
            snap = self._store(url, final, status, size, job_id, collection)
            return FetchResult(
                url=url,
                final_url=final,
                ok=True,
                http_status=status,
                outlinks=links,
                resource_statuses=[200],
                bytes_written=size,
                snapshot_id=snap,
            )
        finally:
            self.active -= 1

    def _store(self, url: str, final: str, status: int, size: int, job_id: int, coll: str) -> int:
        cid = self.lib.ensure_collection(coll)
        now = self.lib.clock()
        uid = self.lib.new_uid(now)
        with self.lib.write() as s:
            snap = Snapshot(
                uid=uid,
                collection_id=cid,
                job_id=job_id,
                url=url,
                url_key=url_key(url),
                url_group=url_group(url),
                captured_at=now,
                state=SnapshotState.COMPLETE,
                http_status=status,
                fs_version="archiver-2",
                size_bytes=size,
            )
            s.add(snap)
            s.flush()
            f = File(path=f"mem/{uid}.warc.gz", size=size, kind="warc", snapshot_id=snap.id)
            s.add(f)
            s.flush()
            s.add(
                Record(
                    url_key=url_key(final),
                    ts="20260101000000000",
                    url=final,
                    record_type="response",
                    status=status,
                    file_id=f.id,
                    offset=0,
                    length=size,
                    snapshot_id=snap.id,
                )
            )
            return snap.id


def memory_factory(fetcher: MemorySiteFetcher) -> Callable[[int], MemorySiteFetcher]:
    return lambda _concurrency: fetcher
