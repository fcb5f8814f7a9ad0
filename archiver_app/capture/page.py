"""Capturing one page: load, behave, extract, save (used by :class:`.engine.Capturer`).

The steps and what each records are described in docs/ARCHITECTURE.md (Capture). Every step
is bounded by the page's deadline; a failure becomes an ``error`` on the result, never an
exception.

Threading contract: runs on the Capturer's event loop; database and file work at the end
is handed to a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from archiver_app import __version__
from archiver_app.capture.behaviours import autoscroll, settle, wait_network_quiet
from archiver_app.capture.extract import PageFacts, extract, first_line, make_snippet
from archiver_app.capture.persist import (
    SnapshotOutcome,
    create_pending,
    dedup_lookup,
    finish_snapshot,
)
from archiver_app.capture.recorder import NetworkRecorder
from archiver_app.capture.results import CaptureResult, PageRules, ResourceInfo
from archiver_app.durable import atomic_write
from archiver_app.layout.current import snapshot_folder
from archiver_app.library import Library
from archiver_app.store.models import Fidelity, FileKind, SnapshotState
from archiver_app.tasks import CancelToken

if TYPE_CHECKING:
    from archiver_app.capture.engine import Capturer

WARC_NAME = "capture.warc.gz"
VIEWPORT = {"width": 1280, "height": 800}
NO_SCREENSHOT_MIMES = {"application/pdf", "application/octet-stream"}


def describe_failure(message: str, url: str, timeout: float) -> str:
    """A readable sentence for a Playwright navigation error."""
    text = first_line(message)
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


class PageCapture:
    """The state of one page being captured for a :class:`~.engine.Capturer`."""

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
        self.extracted = False  # _extract ran (title, text, DOM, screenshot attempted)
        self._tasks: set[asyncio.Future[None]] = set()
        self.timings: dict[str, float] = {}
        self._last_mark = started

    async def run(self) -> CaptureResult:
        from archiver_app.warc.writer import CaptureWarcWriter

        lib = self.lib
        captured_at = lib.clock()
        uid = lib.new_uid(captured_at)
        folder = snapshot_folder(self.collection, captured_at, uid).as_posix()
        path = lib.abspath(folder)
        path.mkdir(parents=True, exist_ok=True)
        # database and file work runs in a thread: the event loop keeps serving other pages
        snapshot_id = await asyncio.to_thread(
            create_pending,
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
            self._mark("open")
            error = await self._load_and_behave(page, recorder)
            if not self.crashed and _main_answered(recorder):
                # the main record is written by a task of its own (body fetch, dedup lookup);
                # the page is extracted whether or not that task is done yet
                await recorder.wait_main(timeout=min(5.0, self._left()))
                final_url = page.url if page.url.startswith("http") else final_url
                facts, dom, shot = await self._extract(page, recorder)
        except Exception as exc:
            error = describe_failure(str(exc), self.url, self.rules.page_timeout)
        except BaseException:  # cancelled: stop recording before the WARC is left behind
            if recorder is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(recorder.finish(timeout=0))
            writer.abandon()
            if context is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(context.close())
            raise
        if not self.browser.is_connected():
            error = "the browser crashed while capturing this page; it will be restarted"
            self.reasons.append("browser crashed")
        elif self.crashed:
            error = error or "the page crashed the browser tab"
        if recorder is not None:
            with contextlib.suppress(Exception):
                await recorder.finish(timeout=max(1.0, min(5.0, self.deadline - time.monotonic())))
            self._mark("finish")
        if context is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(context.close(), 10)
            self._mark("close")
        return await asyncio.to_thread(
            self._save,
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

    def _mark(self, step: str) -> None:
        """Record how long ``step`` took (seconds since the previous mark)."""
        now = time.monotonic()
        self.timings[step] = round(now - self._last_mark, 3)
        self._last_mark = now

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
        """The recorder's :data:`Refetch`: the same request again through the page's own
        context (its cookies), accepted only with the status the browser saw (an expired
        link's 403 page is not the document) and within the byte limit."""

        async def refetch(
            url: str, headers: dict[str, str], status: int, limit: int
        ) -> bytes | str:
            keep = {k: v for k, v in headers.items() if k.lower() in {"range", "accept"}}
            try:
                resp = await context.request.get(
                    url, headers=keep, max_redirects=0, timeout=min(10_000, self._remaining_ms())
                )
            except Exception as exc:
                return first_line(exc)
            try:
                if resp.status != status:
                    return f"the server answered {resp.status}, not {status}"
                length = str(resp.headers.get("content-length", "")).strip()
                if length.isdigit() and int(length) > limit:
                    return f"{length} bytes, over the {limit} byte limit"
                body = bytes(await resp.body())
                if len(body) > limit:
                    return f"{len(body)} bytes, over the {limit} byte limit"
                return body
            except Exception as exc:
                return first_line(exc)
            finally:
                with contextlib.suppress(Exception):
                    await resp.dispose()

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
                else f"loading stopped: {first_line(message)}"
            )
        if self.oversize_main:
            return f"the response is larger than the {self.owner.max_body} byte limit"
        if self.cancel is not None and self.cancel.cancelled:
            self.reasons.append("cancelled before the page behaviours ran")
            return None
        self._mark("goto")
        if not await wait_network_quiet(recorder, deadline=self._step_deadline(0.5)):
            self.reasons.append("the network did not go quiet in time")
        self._mark("quiet")
        try:
            if self.rules.custom_js:
                await asyncio.wait_for(page.evaluate(self.rules.custom_js), self._left())
            if self.rules.autoscroll:
                await autoscroll(page, deadline=self._step_deadline(0.4))
                self._mark("scroll")
                await wait_network_quiet(recorder, deadline=self._step_deadline(0.3))
                self._mark("quiet_after_scroll")
            await settle(self.rules.settle_seconds, deadline=self._step_deadline(0.2))
        except TimeoutError:
            self.reasons.append("page behaviours ran out of time")
        except Exception as exc:
            if self.crashed or not self.browser.is_connected():
                raise
            self.reasons.append(f"a page behaviour failed: {first_line(exc)}")
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
        self.extracted = True
        try:
            facts = await asyncio.wait_for(extract(page), budget)
            if mime not in NO_SCREENSHOT_MIMES:
                dom = await asyncio.wait_for(page.content(), budget)
            self._mark("extract")
        except Exception as exc:
            self.reasons.append(f"text extraction failed: {first_line(exc)}")
        if self.owner.screenshots and mime not in NO_SCREENSHOT_MIMES:
            try:
                shot = await page.screenshot(
                    full_page=True, type="png", timeout=max(2000.0, self._remaining_ms())
                )
            except Exception as exc:
                self.reasons.append(f"screenshot failed: {first_line(exc)}")
            self._mark("screenshot")
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
                atomic_write(path / "screenshot.png", shot)
                files.append((f"{folder}/screenshot.png", FileKind.SCREENSHOT))
            if dom is not None:
                data = dom.encode("utf-8")
                writer.write_resource(
                    f"urn:dom:{final_url}",
                    "text/html; charset=utf-8",
                    data,
                    concurrent_to=concurrent,
                )
                atomic_write(path / "dom.html", data)
                files.append((f"{folder}/dom.html", FileKind.DOM))
            data = text.encode("utf-8")
            writer.write_resource(
                f"urn:text:{final_url}", "text/plain; charset=utf-8", data, concurrent_to=concurrent
            )
            atomic_write(path / "text.txt", data)
            files.append((f"{folder}/text.txt", FileKind.TEXT))
        fidelity: str | None = None
        if ok and not self.extracted:
            self.reasons.append("the page was not extracted (no title, text, DOM or screenshot)")
        if ok and recorder is not None and recorder.main_truncated:
            self.reasons.append(f"the main response is incomplete ({recorder.main_truncated})")
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
            "timings": self.timings,
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
            content_hash=main.digest if main is not None else None,  # as the indexer sets it
            text=text,
            tags=list(self.tags),
        )
        hashes = finish_snapshot(
            lib,
            outcome,
            uid=uid,
            collection=self.collection,
            captured_at=captured_at,
            final_url=final_url,
            job_id=self.job_id,
        )
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
            bytes_written=sum(size for size, _ in hashes.values()),
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
