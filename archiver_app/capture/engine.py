"""The capture engine: one browser, several pages at once, each written to its own folder.

:class:`Capturer` keeps one Chromium process (restarted if it crashes) and captures pages
concurrently in fresh browser contexts; a page captured with a named profile runs instead
in a Chromium started on that profile's folder (:class:`.contexts.ProfileBrowser`, one per
profile, started when first needed and closed once idle for :data:`PROFILE_IDLE_SECONDS`, so
a long-running worker does not keep a profile from a new login). For each page it:

1. validates the URL and creates a ``pending`` snapshot row and its folder;
2. records the network (:mod:`.recorder`) while loading, waiting for quiet, running the
   ruleset's JS, scrolling and settling (:mod:`.behaviours`), all within the page limit;
3. saves the screenshot, rendered DOM and text as files and as ``resource`` records, and a
   ``metadata`` record listing the page's resources;
4. completes the row in one transaction (:mod:`.persist`).

A failed page returns ``ok=False`` with a readable ``error``; only setup problems (no
browser) and unexpected failures raise, the latter after removing the attempt's pending row
and folder (:mod:`.failed_attempt`). :func:`capture_urls` captures a list at once,
synchronously (the CLI and the GUI capture through jobs, :mod:`archiver_app.jobs`).

Threading contract: a ``Capturer`` lives on one asyncio event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from archiver_app.capture.browser import (
    BrowserInfo,
    launch_options,
    require_browser,
    start_async_driver,
)
from archiver_app.capture.contexts import FreshContexts, ProfileBrowser, TabSource
from archiver_app.capture.failed_attempt import discard_failed_attempt, leaves_nothing
from archiver_app.capture.page import PageCapture
from archiver_app.capture.results import (
    CaptureResult,
    PageRules,
    ResourceInfo,
    describe_failure,
)
from archiver_app.errors import ArchiverError, BrowserNotFoundError
from archiver_app.library import Library
from archiver_app.tasks import CancelToken
from archiver_app.tasks.priority import keep_started_sessions_at_my_priority
from archiver_app.urls import normalize_url
from archiver_app.validation import validate_capture_url

__all__ = [
    "CaptureResult",
    "Capturer",
    "PageRules",
    "ResourceInfo",
    "capture_urls",
    "describe_failure",
]

DEFAULT_MAX_BODY = 256 << 20
#: A profile's browser unused this long is closed (its lock let go): a worker that captured
#: one watched page does not keep the profile from ``archiver login`` for the rest of its life.
PROFILE_IDLE_SECONDS = 20.0


class Capturer:
    """One browser process capturing several pages at once; see the module docstring."""

    def __init__(
        self,
        library: Library,
        *,
        browser: BrowserInfo | None = None,
        concurrency: int = 2,
        headless: bool = True,
        max_body_bytes: int = DEFAULT_MAX_BODY,
        screenshots: bool = True,
    ) -> None:
        self.library = library
        self.browser_info = browser
        self.concurrency = max(1, concurrency)
        self.headless = headless
        self.max_body = max_body_bytes
        self.screenshots = screenshots
        self._pw: Any = None
        self._browser: Any = None
        self._sem = asyncio.Semaphore(self.concurrency)
        self._launch_lock = asyncio.Lock()
        self.launches = 0
        self._collections: dict[str, int] = {}  # slug -> id, created once per Capturer
        self._profiles: dict[str, ProfileBrowser] = {}  # started on first use
        self._profile_locks: dict[str, asyncio.Lock] = {}
        self._profile_users: dict[str, int] = {}  # pages using each profile's browser now
        self._profile_idle: dict[str, asyncio.TimerHandle] = {}
        self._closing: set[asyncio.Future[None]] = set()

    async def __aenter__(self) -> Capturer:
        if self.browser_info is None:
            self.browser_info = require_browser()
        from archiver_app.capture.persist import mark_interrupted

        await asyncio.to_thread(mark_interrupted, self.library)  # killed earlier runs
        self._pw = await start_async_driver()
        try:
            await self._ensure_browser()
        except BaseException:
            await self._pw.stop()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for handle in self._profile_idle.values():
            handle.cancel()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
        for profile in self._profiles.values():
            await profile.close()  # keeps the session cookies, lets go of the profile
        if self._browser is not None:
            with contextlib.suppress(Exception):
                await self._browser.close()
        if self._pw is not None:
            await self._pw.stop()

    async def _ensure_browser(self) -> Any:
        async with self._launch_lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            if self._browser is not None:
                with contextlib.suppress(Exception):
                    await self._browser.close()
            assert self.browser_info is not None
            try:
                self._browser = await self._pw.chromium.launch(
                    **launch_options(self.browser_info, headless=self.headless)
                )
            except Exception as exc:
                raise BrowserNotFoundError(
                    f"could not start the browser at {self.browser_info.path}",
                    details=str(exc),
                ) from exc
            self.launches += 1
            # Playwright gives the browser a session of its own, which drops the priority
            # a background worker passed on to it (tasks.priority explains).
            keep_started_sessions_at_my_priority()
            return self._browser

    async def _ensure_profile(self, name: str, cancel: CancelToken | None) -> ProfileBrowser:
        # a lock per profile: waiting for one profile never holds up other captures
        async with self._profile_locks.setdefault(name, asyncio.Lock()):
            running = self._profiles.get(name)
            if running is not None and running.is_connected():
                return running
            if running is not None:
                await running.close()
            assert self.browser_info is not None
            started = await ProfileBrowser.start(
                self._pw,
                self.library.root,
                name,
                self.browser_info,
                headless=self.headless,
                cancelled=lambda: cancel is not None and cancel.cancelled,
            )
            self._profiles[name] = started
            self.launches += 1
            keep_started_sessions_at_my_priority()
            return started

    def _use_profile(self, name: str) -> None:
        self._profile_users[name] = self._profile_users.get(name, 0) + 1
        handle = self._profile_idle.pop(name, None)
        if handle is not None:
            handle.cancel()

    def _done_with_profile(self, name: str) -> None:
        self._profile_users[name] -= 1
        if self._profile_users[name] == 0:
            loop = asyncio.get_running_loop()
            self._profile_idle[name] = loop.call_later(
                PROFILE_IDLE_SECONDS, self._start_close, name
            )

    def _start_close(self, name: str) -> None:
        task = asyncio.ensure_future(self._close_idle(name))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _close_idle(self, name: str) -> None:
        async with self._profile_locks.setdefault(name, asyncio.Lock()):
            self._profile_idle.pop(name, None)
            if self._profile_users.get(name, 0) == 0 and name in self._profiles:
                await self._profiles.pop(name).close()

    @property
    def browser_version(self) -> str | None:
        return str(self._browser.version) if self._browser is not None else None

    # ------------------------------------------------------------------ capture

    async def capture(
        self,
        url: str,
        *,
        collection: str = "default",
        tags: Sequence[str] = (),
        rules: PageRules = PageRules(),  # noqa: B008 (frozen dataclass)
        job_id: int | None = None,
        cancel: CancelToken | None = None,
        profile: str | None = None,
    ) -> CaptureResult:
        """Capture ``url`` (in profile ``profile``'s browser, if given); never raises for a
        per-page failure (see ``CaptureResult``)."""
        try:  # stored as the browser sends it, as a queued page is (urls.normalize_url)
            url = normalize_url(validate_capture_url(url)) or url
        except ArchiverError as exc:
            return CaptureResult(url, url, None, False, None, None, exc.message)
        if cancel is not None and cancel.cancelled:
            return CaptureResult(url, url, None, False, None, None, "cancelled")
        if not profile:
            return await self._capture(url, collection, tags, rules, job_id, cancel, None)
        self._use_profile(profile)
        try:
            return await self._capture(url, collection, tags, rules, job_id, cancel, profile)
        finally:
            self._done_with_profile(profile)

    async def _capture(  # noqa: PLR0917 - the private half of capture()
        self,
        url: str,
        collection: str,
        tags: Sequence[str],
        rules: PageRules,
        job_id: int | None,
        cancel: CancelToken | None,
        profile: str | None,
    ) -> CaptureResult:
        async with self._sem:
            try:
                collection_id = self._collections.get(collection)
                if collection_id is None:
                    collection_id = await asyncio.to_thread(
                        self.library.ensure_collection, collection
                    )
                    self._collections[collection] = collection_id
                tabs: TabSource | None = (
                    await self._ensure_profile(profile, cancel)  # may wait for the profile
                    if profile
                    else None
                )
            except ArchiverError as exc:
                return CaptureResult(url, url, None, False, None, None, exc.message)
            if tabs is None:
                tabs = FreshContexts(await self._ensure_browser())
            started = time.monotonic()  # the page limit starts when the page does
            page_capture = PageCapture(
                owner=self,
                tabs=tabs,
                profile=profile,
                url=url,
                collection=collection,
                collection_id=collection_id,
                tags=tags,
                rules=rules,
                job_id=job_id,
                cancel=cancel,
                started=started,
            )
            try:
                return await page_capture.run()
            except BaseException as exc:  # the page is tried again: no pending row left
                if page_capture.pending is not None and leaves_nothing(exc):
                    await asyncio.to_thread(
                        discard_failed_attempt, self.library, *page_capture.pending
                    )
                raise


# ---------------------------------------------------------------------- sync entry point


def capture_urls(
    library: Library,
    urls: Sequence[str],
    *,
    collection: str = "default",
    rules: PageRules = PageRules(),  # noqa: B008
    concurrency: int = 2,
    profile: str | None = None,
) -> list[CaptureResult]:
    """Capture ``urls`` (in order of the returned list) with one browser, in browser profile
    ``profile`` if given; blocks."""
    from archiver_app.validation import validate_slug

    validate_slug(collection)  # fail before starting a browser

    async def run() -> list[CaptureResult]:
        async with Capturer(library, concurrency=concurrency) as cap:
            captures = (
                cap.capture(u, collection=collection, rules=rules, profile=profile) for u in urls
            )
            return list(await asyncio.gather(*captures))

    return asyncio.run(run())
