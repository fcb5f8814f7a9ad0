"""The capture engine: one browser, several pages at once, each written to its own folder.

:class:`Capturer` keeps one Chromium process (restarted if it crashes) and captures pages
concurrently in fresh browser contexts. For each page it:

1. validates the URL and creates a ``pending`` snapshot row and its folder;
2. records the network (:mod:`.recorder`) while loading, waiting for quiet, running the
   ruleset's JS, scrolling and settling (:mod:`.behaviours`), all within the page limit;
3. saves the screenshot, rendered DOM and text as files and as ``resource`` records, and a
   ``metadata`` record listing the page's resources;
4. completes the row in one transaction (:mod:`.persist`).

A failed page returns ``ok=False`` with a readable ``error``; only setup problems (no
browser) raise. :func:`capture_urls` is the synchronous entry point for the CLI and GUI.

Threading contract: a ``Capturer`` lives on one asyncio event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import PurePosixPath
from types import TracebackType
from typing import Any
from urllib.parse import unquote, urlsplit

from archiver_app import __version__
from archiver_app.capture.behaviours import autoscroll, settle, wait_network_quiet
from archiver_app.capture.browser import BrowserInfo, launch_options, require_browser
from archiver_app.capture.extract import PageFacts, extract, make_snippet
from archiver_app.capture.persist import (
    SnapshotOutcome,
    create_pending,
    dedup_lookup,
    dump_sidecar,
    save_outcome,
    sidecar,
    write_file_atomic,
)
from archiver_app.capture.recorder import NetworkRecorder
from archiver_app.capture.results import CaptureResult, PageRules, ResourceInfo
from archiver_app.errors import ArchiverError, BrowserNotFoundError
from archiver_app.layout.current import snapshot_folder
from archiver_app.library import Library
from archiver_app.store.models import Fidelity, FileKind, SnapshotState
from archiver_app.tasks import CancelToken, Progress, ProgressUpdate, null_progress
from archiver_app.validation import validate_capture_url

__all__ = [
    "CaptureResult",
    "Capturer",
    "PageRules",
    "ResourceInfo",
    "capture_urls",
]

WARC_NAME = "capture.warc.gz"
DEFAULT_MAX_BODY = 256 << 20
VIEWPORT = {"width": 1280, "height": 800}
NO_SCREENSHOT_MIMES = {"application/pdf", "application/octet-stream"}


def describe_failure(message: str, url: str, timeout: float) -> str:
    """A readable sentence for a Playwright navigation error."""
    text = message.splitlines()[0] if message else "unknown error"
    host = urlsplit(url).hostname or url
    table = (
        ("ERR_NAME_NOT_RESOLVED", f"the host name {host!r} could not be resolved (DNS)"),
        ("ERR_CONNECTION_REFUSED", f"the connection to {host} was refused"),
        ("ERR_CONNECTION_RESET", f"the connection to {host} was reset"),
        ("ERR_CONNECTION_CLOSED", f"{host} closed the connection without an answer"),
        ("ERR_EMPTY_RESPONSE", f"{host} closed the connection without an answer"),
        ("ERR_CERT_", f"TLS error: the certificate of {host} is not trusted ({text})"),
        ("ERR_SSL_", f"TLS error talking to {host} ({text})"),
        ("ERR_INTERNET_DISCONNECTED", "there is no network connection"),
        ("ERR_ADDRESS_UNREACHABLE", f"{host} is unreachable"),
        ("ERR_TIMED_OUT", f"{host} did not answer in time"),
        ("Timeout", f"the page did not load within {timeout:g} s"),
        ("has been closed", "the browser crashed or closed while capturing"),
        ("Target crashed", "the page crashed the browser tab"),
    )
    for needle, sentence in table:
        if needle in message:
            return sentence
    return text


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

    async def __aenter__(self) -> Capturer:
        from playwright.async_api import async_playwright

        if self.browser_info is None:
            self.browser_info = require_browser()
        self._pw = await async_playwright().start()
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
            return self._browser

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
    ) -> CaptureResult:
        """Capture ``url``; never raises for a per-page failure (see ``CaptureResult``)."""
        started = time.monotonic()
        try:
            url = validate_capture_url(url)
        except ArchiverError as exc:
            return CaptureResult(url, url, None, False, None, None, exc.message)
        if cancel is not None and cancel.cancelled:
            return CaptureResult(url, url, None, False, None, None, "cancelled")
        async with self._sem:
            try:
                collection_id = self.library.ensure_collection(collection)
            except ArchiverError as exc:
                return CaptureResult(url, url, None, False, None, None, exc.message)
            browser = await self._ensure_browser()
            page_capture = _PageCapture(
                owner=self,
                browser=browser,
                url=url,
                collection=collection,
                collection_id=collection_id,
                tags=tags,
                rules=rules,
                job_id=job_id,
                cancel=cancel,
                started=started,
            )
            return await page_capture.run()


class _PageCapture:
    """The state of one page being captured (internal to :class:`Capturer`)."""

    def __init__(
        self,
        *,
        owner: Capturer,
        browser: Any,
        url: str,
        collection: str,
        collection_id: int,
        tags: Sequence[str],
        rules: PageRules,
        job_id: int | None,
        cancel: CancelToken | None,
        started: float,
    ) -> None:
        self.owner, self.browser, self.url = owner, browser, url
        self.collection, self.collection_id, self.tags = collection, collection_id, tags
        self.rules, self.job_id, self.cancel, self.started = rules, job_id, cancel, started
        self.deadline = started + rules.page_timeout
        self.lib = owner.library
        self.reasons: list[str] = []  # why fidelity is not high
        self.crashed = False
        self.oversize_main = False
        self._tasks: set[asyncio.Future[None]] = set()

    async def run(self) -> CaptureResult:
        from archiver_app.warc.writer import CaptureWarcWriter

        lib = self.lib
        captured_at = lib.clock()
        uid = lib.new_uid(captured_at)
        folder = snapshot_folder(self.collection, captured_at, uid).as_posix()
        path = lib.abspath(folder)
        path.mkdir(parents=True, exist_ok=True)
        snapshot_id = create_pending(
            lib,
            url=self.url,
            collection_id=self.collection_id,
            captured_at=captured_at,
            uid=uid,
            folder=folder,
            job_id=self.job_id,
        )
        writer = CaptureWarcWriter(
            path / WARC_NAME,
            info={
                "software": f"Archiver {__version__} (Playwright + Chromium)",
                "format": "WARC File Format 1.1",
                "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
                "browser": f"Chromium {self.owner.browser_version or ''}".strip(),
                "isPartOf": self.collection,
                "description": f"Capture of {self.url}",
            },
            clock=lib.clock,
        )
        context = page = None
        facts = PageFacts()
        shot: bytes | None = None
        dom: str | None = None
        final_url = self.url
        error: str | None = None
        recorder: NetworkRecorder | None = None
        try:
            context = await self.browser.new_context(
                user_agent=self.rules.user_agent,
                viewport=VIEWPORT,
                accept_downloads=False,
                service_workers="block",
            )
            page = await context.new_page()
            page.on("crash", lambda _p: self._on_crash())
            cdp = await context.new_cdp_session(page)
            recorder = NetworkRecorder(
                cdp,
                writer,
                dedup=dedup_lookup(lib),
                refetch=self._refetcher(context),
                max_body=self.owner.max_body,
                on_oversize=lambda rid: self._on_oversize(cdp, recorder, rid),
            )
            await recorder.start()
            error = await self._load_and_behave(page, recorder)
            if not self.crashed and recorder.main_record is not None:
                final_url = page.url if page.url.startswith("http") else final_url
                facts, dom, shot = await self._extract(page, recorder)
        except Exception as exc:
            error = describe_failure(str(exc), self.url, self.rules.page_timeout)
        if not self.browser.is_connected():
            error = "the browser crashed while capturing this page; it will be restarted"
            self.reasons.append("browser crashed")
        elif self.crashed:
            error = error or "the page crashed the browser tab"
        if recorder is not None:
            with contextlib.suppress(Exception):
                await recorder.finish(timeout=max(1.0, min(5.0, self.deadline - time.monotonic())))
        if context is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(context.close(), 10)
        return self._save(
            writer=writer,
            recorder=recorder,
            snapshot_id=snapshot_id,
            uid=uid,
            folder=folder,
            captured_at=captured_at,
            final_url=final_url,
            facts=facts,
            dom=dom,
            shot=shot,
            error=error,
        )

    # ------------------------------------------------------------------ steps

    def _on_crash(self) -> None:
        self.crashed = True

    def _on_oversize(self, cdp: Any, recorder: NetworkRecorder | None, rid: str) -> None:
        if recorder is not None and rid == recorder.main_request_id:
            self.oversize_main = True
        self.reasons.append("a response exceeded the body size limit")
        task = asyncio.ensure_future(_quiet(cdp.send("Page.stopLoading")))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _refetcher(self, context: Any) -> Any:
        async def refetch(url: str, headers: dict[str, str]) -> bytes | None:
            keep = {k: v for k, v in headers.items() if k.lower() in {"range", "accept"}}
            try:
                resp = await context.request.get(url, headers=keep, max_redirects=0, timeout=10_000)
                return bytes(await resp.body())
            except Exception:
                return None

        return refetch

    def _remaining_ms(self) -> float:
        return max(1.0, (self.deadline - time.monotonic()) * 1000)

    async def _load_and_behave(self, page: Any, recorder: NetworkRecorder) -> str | None:
        """Load, wait, run custom JS, scroll, settle. Returns a fatal error or None."""
        try:
            await page.goto(self.url, wait_until="load", timeout=self._remaining_ms())
        except Exception as exc:
            message = str(exc)
            if recorder.main_record is None and recorder.main_response is None:
                await recorder.drain(1.0)
            if self.oversize_main:
                return f"the response is larger than the {self.owner.max_body} byte limit"
            if recorder.main_request_id is None or not _main_answered(recorder):
                return describe_failure(message, self.url, self.rules.page_timeout)
            self.reasons.append(
                "the load event did not fire in time"
                if "Timeout" in message
                else f"loading stopped: {message.splitlines()[0]}"
            )
        if self.oversize_main:
            return f"the response is larger than the {self.owner.max_body} byte limit"
        if not await wait_network_quiet(recorder, deadline=self._step_deadline(0.5)):
            self.reasons.append("the network did not go quiet in time")
        try:
            if self.rules.custom_js:
                await asyncio.wait_for(page.evaluate(self.rules.custom_js), self._left())
            if self.rules.autoscroll:
                await autoscroll(page, deadline=self._step_deadline(0.4))
                await wait_network_quiet(recorder, deadline=self._step_deadline(0.3))
            await settle(self.rules.settle_seconds, deadline=self._step_deadline(0.2))
        except TimeoutError:
            self.reasons.append("page behaviours ran out of time")
        except Exception as exc:
            if self.crashed or not self.browser.is_connected():
                raise
            self.reasons.append(f"a page behaviour failed: {str(exc).splitlines()[0][:200]}")
        return None

    def _left(self) -> float:
        return max(0.1, self.deadline - time.monotonic())

    def _step_deadline(self, reserve_fraction: float) -> float:
        """A deadline that leaves ``reserve_fraction`` of the page limit for later steps."""
        return self.deadline - self.rules.page_timeout * reserve_fraction * 0.5

    async def _extract(
        self, page: Any, recorder: NetworkRecorder
    ) -> tuple[PageFacts, str | None, bytes | None]:
        mime = recorder.main_response.mime if recorder.main_response else None
        budget = max(2.0, self._left())
        facts, dom, shot = PageFacts(), None, None
        try:
            facts = await asyncio.wait_for(extract(page), budget)
            if mime not in NO_SCREENSHOT_MIMES:
                dom = await asyncio.wait_for(page.content(), budget)
        except Exception as exc:
            self.reasons.append(f"text extraction failed: {str(exc).splitlines()[0][:200]}")
        if self.owner.screenshots and mime not in NO_SCREENSHOT_MIMES:
            try:
                shot = await page.screenshot(
                    full_page=True, type="png", timeout=max(2000.0, self._remaining_ms())
                )
            except Exception as exc:
                self.reasons.append(f"screenshot failed: {str(exc).splitlines()[0][:200]}")
        if mime == "application/pdf":
            facts = PageFacts(title=_file_title(self.url), outlinks=[], text="")
        return facts, dom, shot

    # ------------------------------------------------------------------ saving

    def _save(
        self,
        *,
        writer: Any,
        recorder: NetworkRecorder | None,
        snapshot_id: int,
        uid: str,
        folder: str,
        captured_at: Any,
        final_url: str,
        facts: PageFacts,
        dom: str | None,
        shot: bytes | None,
        error: str | None,
    ) -> CaptureResult:
        lib = self.lib
        path = lib.abspath(folder)
        main = recorder.main_record if recorder else None
        response = recorder.main_response if recorder else None
        resources: list[ResourceInfo] = list(recorder.resources) if recorder else []
        ok = main is not None and error is None
        if main is None and error is None:
            error = "the page produced no response"
        concurrent = main.record_id if main else None
        files: list[tuple[str, str]] = []
        text = facts.text
        if ok:
            if shot:
                writer.write_resource(
                    f"urn:view:{final_url}", "image/png", shot, concurrent_to=concurrent
                )
                write_file_atomic(path / "screenshot.png", shot)
                files.append((f"{folder}/screenshot.png", FileKind.SCREENSHOT))
            if dom is not None:
                data = dom.encode("utf-8")
                writer.write_resource(
                    f"urn:dom:{final_url}",
                    "text/html; charset=utf-8",
                    data,
                    concurrent_to=concurrent,
                )
                write_file_atomic(path / "dom.html", data)
                files.append((f"{folder}/dom.html", FileKind.DOM))
            data = text.encode("utf-8")
            writer.write_resource(
                f"urn:text:{final_url}", "text/plain; charset=utf-8", data, concurrent_to=concurrent
            )
            write_file_atomic(path / "text.txt", data)
            files.append((f"{folder}/text.txt", FileKind.TEXT))
        fidelity: str | None = None
        if ok:
            failed = [r for r in resources if r.error and not r.error.startswith("truncated (time")]
            if failed:
                self.reasons.append(f"{len(failed)} resource(s) failed or were truncated")
            fidelity = Fidelity.FALLBACK if self.reasons else Fidelity.HIGH
        pageinfo = {
            "url": self.url,
            "final_url": final_url,
            "title": facts.title,
            "resources": [r.__dict__ for r in resources],
            "notes": recorder.notes if recorder else [],
        }
        writer.write_metadata(
            f"urn:pageinfo:{final_url}",
            "application/json",
            json.dumps(pageinfo, ensure_ascii=False).encode(),
            concurrent_to=concurrent,
        )
        writer.close()
        files.insert(0, (f"{folder}/{WARC_NAME}", FileKind.WARC))
        body = recorder.main_body if recorder else None
        revisit_sources = sorted(recorder.revisit_sources) if recorder else []
        provenance: dict[str, Any] = {
            "backend": "playwright",
            "browser": self.owner.browser_version,
            "user_agent": self.rules.user_agent,
            "fidelity_reasons": self.reasons,
            "notes": recorder.notes if recorder else [],
            "revisit_of_records": revisit_sources,
            "revisit_of_snapshots": _snapshots_of(lib, revisit_sources),
            "duration_seconds": round(time.monotonic() - self.started, 3),
        }
        if error:
            provenance["error"] = error
        outcome = SnapshotOutcome(
            snapshot_id=snapshot_id,
            url=self.url,
            state=SnapshotState.COMPLETE if ok else SnapshotState.FAILED,
            folder=folder,
            files=files,
            records=writer.records,
            main=main,
            http_status=response.status if response else None,
            mime=response.mime if response else None,
            title=facts.title or None,
            snippet=make_snippet(text) or None,
            language=facts.language,
            fidelity=fidelity,
            provenance=provenance,
            content_hash=f"sha256:{hashlib.sha256(body).hexdigest()}" if body is not None else None,
            text=text,
            tags=list(self.tags),
        )
        side = sidecar(
            out=outcome,
            uid=uid,
            collection=self.collection,
            captured_at=captured_at,
            final_url=final_url,
            job_id=self.job_id,
        )
        write_file_atomic(path / "index.json", dump_sidecar(side))
        outcome.files.append((f"{folder}/index.json", FileKind.SIDECAR))
        save_outcome(lib, outcome)
        return CaptureResult(
            url=self.url,
            final_url=final_url,
            snapshot_id=snapshot_id,
            ok=ok,
            http_status=outcome.http_status,
            fidelity=fidelity,
            error=error,
            outlinks=facts.outlinks,
            resources=resources,
            bytes_written=sum(lib.abspath(rel).stat().st_size for rel, _ in outcome.files),
            duration=time.monotonic() - self.started,
        )


def _main_answered(recorder: NetworkRecorder) -> bool:
    ex = recorder.exchanges.get(recorder.main_request_id or "")
    return bool(ex and ex.hops and ex.hops[-1].response is not None)


def _file_title(url: str) -> str:
    name = PurePosixPath(unquote(urlsplit(url).path)).name
    return name or url


def _snapshots_of(lib: Library, record_ids: list[int]) -> list[int]:
    if not record_ids:
        return []
    from sqlalchemy import select

    from archiver_app.store.models import Record

    with lib.session() as s:
        rows = s.scalars(
            select(Record.snapshot_id).where(Record.id.in_(record_ids)).distinct()
        ).all()
    return sorted(r for r in rows if r is not None)


async def _quiet(awaitable: Any) -> None:
    with contextlib.suppress(Exception):
        await awaitable


# ---------------------------------------------------------------------- sync entry point


def capture_urls(
    library: Library,
    urls: Sequence[str],
    *,
    collection: str = "default",
    tags: Sequence[str] = (),
    rules: PageRules = PageRules(),  # noqa: B008
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    concurrency: int = 2,
    browser: BrowserInfo | None = None,
) -> list[CaptureResult]:
    """Capture ``urls`` (in order of the returned list) with one browser; blocks."""
    from archiver_app.validation import validate_slug

    validate_slug(collection)  # fail before starting a browser

    async def run() -> list[CaptureResult]:
        done = 0
        async with Capturer(library, browser=browser, concurrency=concurrency) as cap:

            async def one(u: str) -> CaptureResult:
                nonlocal done
                if cancel is not None and cancel.cancelled:
                    result = CaptureResult(u, u, None, False, None, None, "cancelled")
                else:
                    result = await cap.capture(
                        u, collection=collection, tags=tags, rules=rules, cancel=cancel
                    )
                done += 1
                progress(ProgressUpdate(done, len(urls), _progress_line(result)))
                return result

            return list(await asyncio.gather(*(one(u) for u in urls)))

    return asyncio.run(run())


def _progress_line(result: CaptureResult) -> str:
    if result.ok:
        return f"ok {result.http_status} {result.fidelity} {result.final_url}"
    return f"failed {result.url}: {result.error}"
