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
from tests.helpers.webserver import LocalServer, Response


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
        gate: int | None = None,
    ) -> None:
        self.lib = lib
        self.pages = pages
        self.delay = delay
        self.fetched: list[str] = []
        self.active = 0
        self.max_active = 0
        self.on_fetch = on_fetch
        self.gate = gate  # hold fetches (after the first) until this many ran at once
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
        profile: str | None = None,
    ) -> FetchResult:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            self.fetched.append(url)
            if self.on_fetch:
                self.on_fetch(url)
            if self.gate is not None and len(self.fetched) > 1:  # the seed comes alone
                for _ in range(1000):
                    if self.max_active >= self.gate:
                        break
                    await asyncio.sleep(0.01)
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


# --------------------------------------------------------------------------- generated HTTP site


@dataclass
class GeneratedSite:
    """A crawlable site on a :class:`LocalServer` and what a correct crawl of it yields.

    Crawled with ``--scope host --depth 2 --ignore /private/`` (and the default ignore
    sets), from :attr:`seed`. ``expected_done`` are the URLs to capture, ``expected_failed``
    the ones that fail on every attempt and ``expected_skipped`` maps each excluded URL to
    the reason the job must record.
    """

    server: LocalServer
    sections: int
    per_section: int
    expected_done: set[str] = field(default_factory=set)
    expected_failed: set[str] = field(default_factory=set)
    expected_skipped: dict[str, str] = field(default_factory=dict)

    @property
    def seed(self) -> str:
        return self.server.url("/")

    def url(self, path: str) -> str:
        return self.server.url(path)

    def other_host(self, path: str) -> str:
        return self.server.url(path, host="localhost")


def _html(title: str, links: list[str], extra: str = "") -> bytes:
    items = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
        f"<link rel='stylesheet' href='/style.css'></head><body><h1>{title}</h1>"
        f"<p>Generated page for crawl tests.</p><ul>{items}</ul>{extra}</body></html>"
    ).encode()


def generated_site(
    server: LocalServer, *, sections: int = 10, per_section: int = 30
) -> GeneratedSite:
    """Register the routes of the generated site on ``server`` and compute the expectations.

    Depth 0: ``/``; depth 1: sections, a relative-link loop, infinite pagination, redirects;
    depth 2: ``sections * per_section`` article pages, each linking to its neighbour, to a
    depth-3 page (past the limit), and some to traps (calendar, session id, private area,
    another host, a redirect leaving the host, a 404 and a page that always answers 500).
    """
    from tests.helpers.webserver import Response

    site = GeneratedSite(server, sections, per_section)
    routes = server.routes
    done, skipped = site.expected_done, site.expected_skipped
    depth3 = "limit: depth 3 > 2"

    routes["/style.css"] = lambda _r: Response(200, b"body{font-family:sans-serif}", [], "text/css")

    def static(path: str, body: bytes, status: int = 200) -> None:
        routes[path] = lambda _r: Response(status, body)

    def redirect(path: str, target: str) -> None:
        routes[path] = lambda _r: Response(302, b"", [("Location", target)])

    root_links = [f"/s/{i}/" for i in range(sections)]
    root_links += ["/loop/", "/list?page=1", "/r/0", "/away/0", "/missing", "/broken"]
    root_links += ["/cal?month=2026-01", "/login?sid=abcdef0123", "/private/a"]
    root_links += [site.other_host("/elsewhere")]
    static("/", _html("Home", root_links))
    done.add(site.url("/"))

    # A relative-link loop: /loop/ -> /loop/loop/ -> /loop/loop/loop/ (a repeated segment).
    static("/loop/", _html("Loop 1", ["loop/"]))
    static("/loop/loop/", _html("Loop 2", ["loop/"]))
    done |= {site.url("/loop/"), site.url("/loop/loop/")}
    skipped[site.url("/loop/loop/loop/")] = "ignore set repeated-segments " + repr(
        _repeated_pattern()
    )

    # Infinite pagination, bounded by the depth limit.
    def listing(req: object) -> Response:
        from urllib.parse import parse_qs, urlsplit

        n = int(parse_qs(urlsplit(req.path).query)["page"][0])  # type: ignore[attr-defined]
        return Response(200, _html(f"List {n}", [f"/list?page={n + 1}"]))

    routes["/list"] = listing
    done |= {site.url("/list?page=1"), site.url("/list?page=2")}
    skipped[site.url("/list?page=3")] = depth3
    # Redirects: one inside the host (followed), one leaving it (recorded, not followed).
    # A redirect is not a link hop: what /r/0 shows (article 0.0) has its links at depth 2,
    # so /deep/0/0 (a 404, archived as it is) is within the limit through this path.
    redirect("/r/0", "/s/0/p/0")
    done |= {site.url("/r/0"), site.url("/deep/0/0")}
    redirect("/away/0", site.other_host("/landing"))
    done.add(site.url("/away/0"))
    skipped[site.other_host("/landing")] = (
        f"scope: outside host scope (redirect target of {site.url('/away/0')})"
    )
    static("/missing", _html("Not here", []), status=404)  # archived as it is: a 404
    done.add(site.url("/missing"))
    static("/broken", _html("Broken", []), status=500)
    site.expected_failed.add(site.url("/broken"))
    skipped[site.url("/cal?month=2026-01")] = "calendars"
    skipped[site.url("/login?sid=abcdef0123")] = "session-ids"
    skipped[site.url("/private/a")] = "ignore '/private/'"
    skipped[site.other_host("/elsewhere")] = "scope: outside host scope"

    for i in range(sections):
        links = [f"/s/{i}/p/{j}" for j in range(per_section)]
        static(f"/s/{i}/", _html(f"Section {i}", links))
        done.add(site.url(f"/s/{i}/"))
        for j in range(per_section):
            nxt = (j + 1) % per_section
            page_links = [f"/s/{i}/p/{nxt}", f"/deep/{i}/{j}"]
            if j == 0:
                page_links += [f"/private/{i}", f"/cal?month={i}", site.other_host(f"/x/{i}")]
                skipped[site.url(f"/private/{i}")] = "ignore '/private/'"
                skipped[site.url(f"/cal?month={i}")] = "calendars"
                skipped[site.other_host(f"/x/{i}")] = "scope: outside host scope"
            static(f"/s/{i}/p/{j}", _html(f"Article {i}.{j}", page_links))
            done.add(site.url(f"/s/{i}/p/{j}"))
            if (i, j) != (0, 0):
                skipped[site.url(f"/deep/{i}/{j}")] = depth3
    return site


def _repeated_pattern() -> str:
    from archiver_app.crawl.rules import BUILTIN_IGNORE_SETS

    return BUILTIN_IGNORE_SETS["repeated-segments"][0]


def reason_matches(expected: str, actual: str | None) -> bool:
    """Built-in sets are named by set only in the expectations (``calendars``)."""
    if actual is None:
        return False
    if expected in ("calendars", "session-ids", "pagination"):
        return actual.startswith(f"ignore set {expected} ")
    return actual == expected
