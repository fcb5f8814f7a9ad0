"""What a worker needs from the capture layer: fetch one page, say what happened.

:class:`PageFetcher` is the small protocol the worker is written against; production uses
:class:`CapturerFetcher`, a thin adapter over ``archiver_app.capture.engine.Capturer``
(one browser, several pages at once). The crawl layer never records anything itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from archiver_app.capture.results import browser_favicon
from archiver_app.crawl.rules import Rules
from archiver_app.tasks import CancelToken

if TYPE_CHECKING:
    from collections.abc import Sequence

    from archiver_app.capture.results import ResourceInfo
    from archiver_app.library import Library


@dataclass(frozen=True)
class FetchResult:
    """The outcome of one page capture, as the queue needs it."""

    url: str
    final_url: str
    ok: bool
    http_status: int | None
    error: str | None = None
    outlinks: list[str] = field(default_factory=list)
    resource_statuses: list[int | None] = field(default_factory=list)
    bytes_written: int = 0
    snapshot_id: int | None = None
    fidelity: str | None = None
    duration: float = 0.0
    login: str | None = None  # capture.login_check.LoginOutcome code: a login form came
    #: The capture's rows could not be saved ("database unreachable: …"): nothing about it
    #: is recorded yet (see :mod:`archiver_app.crawl.unrecorded`).
    unrecorded: str | None = None
    #: What happened besides (the page went on to an address that did not answer…).
    remark: str | None = None


class PageFetcher(Protocol):
    """Captures pages; an async context manager that may run several captures at once."""

    async def __aenter__(self) -> PageFetcher: ...

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None: ...

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
    ) -> FetchResult: ...


class CapturerFetcher:
    """:class:`PageFetcher` over the capture engine's ``Capturer``."""

    def __init__(
        self, library: Library, *, concurrency: int = 2, browser: Any = None, headless: bool = True
    ) -> None:
        from archiver_app.capture.engine import Capturer

        self._capturer = Capturer(
            library, browser=browser, concurrency=concurrency, headless=headless
        )

    async def __aenter__(self) -> CapturerFetcher:
        await self._capturer.__aenter__()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._capturer.__aexit__(et, ev, tb)

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
        from archiver_app.capture.engine import PageRules

        page_rules = PageRules(
            user_agent=rules.user_agent,
            custom_js=rules.custom_js,
            autoscroll=rules.autoscroll,
            login_check=rules.login_check,
            page_timeout=rules.page_timeout,
            settle_seconds=rules.settle_seconds,
        )
        r = await self._capturer.capture(
            url,
            collection=collection,
            tags=tags,
            rules=page_rules,
            job_id=job_id,
            cancel=cancel,
            profile=profile,
        )
        return FetchResult(
            url=r.url,
            final_url=r.final_url,
            ok=r.ok,
            http_status=r.http_status,
            error=r.error,
            outlinks=list(r.outlinks),
            resource_statuses=_besides_the_page(r.resources, r.final_url),
            bytes_written=r.bytes_written,
            snapshot_id=r.snapshot_id,
            fidelity=r.fidelity,
            duration=r.duration,
            login=r.login,
            unrecorded=r.unrecorded,
            remark=r.remark,
        )


def _besides_the_page(resources: Sequence[ResourceInfo], final_url: str) -> list[int | None]:
    """The statuses of what the page loaded, the page's own document left out: the
    capture lists it among its resources, and the job counts it by its own status (it
    counted twice: a crawl of 81 plain pages said "2xx 162"). The browser's own favicon
    request is left out too: a site without one made each page a "4xx" of the crawl."""
    main = next((i for i, res in enumerate(resources) if res.url == final_url), None)
    return [
        res.status for i, res in enumerate(resources) if i != main and not browser_favicon(res.url)
    ]
