"""Capturing one page: load, behave, extract, save (used by :class:`.engine.Capturer`).

The steps and what each records are described in docs/ARCHITECTURE.md (Capture). Every step
is bounded by the page's deadline; a page's failure is an ``error`` on the result (what
raises, its attempt is discarded: :mod:`.failed_attempt`); a database gone before the rows
are saved is ``unrecorded`` there (its folder keeps all it wrote). Tabs come from a
:class:`~.contexts.TabSource` (a fresh context, or a profile's browser); :mod:`.login_check`
decides whether the page is a login form (the snapshot then fails, kept as evidence).

Threading contract: runs on the Capturer's event loop; database and file work at the end
is handed to a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archiver_app import __version__
from archiver_app.capture.behaviours import autofetch, autoscroll, settle, wait_network_quiet
from archiver_app.capture.contexts import Tab, TabSource
from archiver_app.capture.departed import Departure, departure, recorded_facts
from archiver_app.capture.exchange import is_download
from archiver_app.capture.extract import (
    PageFacts,
    extract,
    file_facts,
    first_line,
    make_snippet,
)
from archiver_app.capture.login_check import LoginCheck, check_login
from archiver_app.capture.oversize import (
    OVERSIZE_TEXT_SECONDS,
    load_unless_oversize,
    oversize_error,
)
from archiver_app.capture.pdf import PDF_MIMES, pdf_page_facts
from archiver_app.capture.persist import (
    SnapshotOutcome,
    create_pending,
    dedup_lookup,
    file_sizes,
    finish_snapshot,
    snapshots_of_records,
    write_views,
)
from archiver_app.capture.recorder import NetworkRecorder, Refetch
from archiver_app.capture.refetch import (
    record_missed,
    record_whole_media,
    refetch_in,
    stand_in_from,
)
from archiver_app.capture.results import CaptureResult, PageRules, ResourceInfo, describe_failure
from archiver_app.capture.screenshot import page_screenshot
from archiver_app.capture.stopping import record_unless_cancelled
from archiver_app.capture.targets import WorkerAttacher
from archiver_app.layout.current import snapshot_folder
from archiver_app.store.connection_loss import lost_connection, unreachable_message
from archiver_app.store.models import Fidelity, FileKind, SnapshotState
from archiver_app.tasks import CancelToken
from archiver_app.units import counted
from archiver_app.warc.writer import CaptureWarcWriter

if TYPE_CHECKING:
    from archiver_app.capture.engine import Capturer

WARC_NAME = "capture.warc.gz"
NO_SCREENSHOT_MIMES = {*PDF_MIMES, "application/octet-stream"}  # a PDF's comes from capture.pdf


class PageCapture:
    """The state of one page being captured for a :class:`~.engine.Capturer`."""

    def __init__(
        self,
        *,
        owner: Capturer,
        tabs: TabSource,
        url: str,
        collection: str,
        collection_id: int,
        tags: Sequence[str],
        rules: PageRules,
        job_id: int | None,
        cancel: CancelToken | None,
        started: float,
        profile: str | None = None,
    ) -> None:
        self.owner, self.tabs, self.url, self.profile = owner, tabs, url, profile
        self.collection, self.collection_id, self.tags = collection, collection_id, tags
        self.rules, self.job_id, self.cancel, self.started = rules, job_id, cancel, started
        self.deadline = started + rules.page_timeout
        self.lib = owner.library
        self.reasons: list[str] = []  # why fidelity is not high
        self.extras: set[str] = set()  # images asked for other screens: not the page's own
        self.crashed = False
        self.oversize_main = asyncio.Event()  # its own document passed the limit (.oversize)
        self.extracted = False  # _extract ran (title, text, DOM, screenshot attempted)
        self.downloaded = False  # the browser took the page for a download (a file)
        self.gone: Departure | None = None  # the tab left the page (.departed)
        self.behaviour_error: str | None = None  # a behaviour failed (as the tab left?)
        self._tasks: set[asyncio.Future[None]] = set()
        self._requested: list[str] = []  # GET URLs Playwright saw the page and workers ask
        self._media: tuple[str, ...] = ()  # the sources of its videos and sounds
        self.timings: dict[str, float] = {}
        self._last_mark = started
        self.pending: tuple[int, Path] | None = None  # its row and folder, once made

    async def run(self) -> CaptureResult:
        lib = self.lib
        captured_at = lib.clock()
        uid = lib.new_uid(captured_at)
        folder = snapshot_folder(self.collection, captured_at, uid).as_posix()
        path = lib.abspath(folder)
        path.mkdir(parents=True, exist_ok=True)
        snapshot_id = await asyncio.to_thread(  # in a thread: the loop serves other pages
            create_pending,
            lib,
            url=self.url,
            collection_id=self.collection_id,
            captured_at=captured_at,
            uid=uid,
            folder=folder,
            job_id=self.job_id,
            profile=self.profile,
        )
        self.pending = snapshot_id, path  # a failure past here: .failed_attempt
        writer = self._open_writer(path / WARC_NAME)
        loaded = await record_unless_cancelled(
            self._record(writer), self.cancel, lib=lib, snapshot_id=snapshot_id, folder=path
        )
        return await asyncio.to_thread(
            self._save,
            writer=writer,
            loaded=loaded,
            snapshot_id=snapshot_id,
            uid=uid,
            folder=folder,
            captured_at=captured_at,
        )

    def _open_writer(self, path: Path) -> CaptureWarcWriter:
        return CaptureWarcWriter(
            path,
            info={
                "software": f"Archiver {__version__} (Playwright + Chromium)",
                "format": "WARC File Format 1.1",
                "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
                "browser": self._browser_label(),
                "isPartOf": self.collection,
                "description": f"Capture of {self.url}",
            },
            clock=self.lib.clock,
        )

    def _browser_label(self) -> str:
        info = self.owner.browser_info
        name = "Chromium headless shell" if info is not None and info.headless_shell else "Chromium"
        return f"{name} {self.owner.browser_version or ''}".strip()

    async def _record(self, writer: CaptureWarcWriter) -> _Loaded:
        """Open a tab, record the page load and extract the page; the tab is closed and the
        recorder finished on return (a cancellation abandons the WARC and re-raises)."""
        loaded = _Loaded(final_url=self.url)
        tab: Tab | None = None
        try:
            tab = await self.tabs.open_tab(self.rules)
            context, page = tab.context, tab.page
            page.on("crash", lambda _p: self._on_crash())
            tab.on_request(self._on_request)  # the page, its workers, service workers
            cdp = await context.new_cdp_session(page)
            recorder = loaded.recorder = NetworkRecorder(
                cdp,
                writer,
                dedup=dedup_lookup(self.lib),
                refetch=self._refetcher(context),
                max_body=self.owner.max_body,
                on_oversize=lambda rid: self._on_oversize(cdp, recorder, rid),
            )
            await recorder.start()
            if not tab.owns_context:  # a profile's cache would answer instead of the site
                await cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
            loaded.workers = WorkerAttacher(recorder.add_session, recorder.notes)
            await loaded.workers.watch_page(cdp)
            self._mark("open")
            loaded.error = await self._load_and_behave(page, recorder)
            if not self.crashed and (_main_answered(recorder) or recorder.main.record):
                await self._after_load(page, recorder, loaded)
        except Exception as exc:
            loaded.error = describe_failure(str(exc), self.url, self.rules.page_timeout)
        except BaseException:  # cancelled: stop recording before the WARC is left behind
            if loaded.recorder is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(loaded.recorder.finish(timeout=0))
            if loaded.workers is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(loaded.workers.close())
            writer.abandon()
            if tab is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(tab.close())
            raise
        await self._close(loaded, tab)
        return loaded

    async def _after_load(self, page: Any, recorder: NetworkRecorder, loaded: _Loaded) -> None:
        """Extract the page; then whether it left its tab or is a login form, and its extras."""
        # the main record is written by a task of its own (body fetch, dedup lookup);
        # the page is extracted whether or not that task is done yet
        await recorder.wait_main(timeout=min(5.0, self._left()))
        if page.url.startswith("http"):
            loaded.final_url = page.url
        kept = len(self.reasons)
        loaded.facts, loaded.dom, loaded.shot = await self._extract(page, recorder)
        if self.oversize_main.is_set():  # failed already: nothing more is kept (.oversize)
            return
        gone = None if self.downloaded else departure(page.url, recorder)
        if gone is not None:  # it left its tab (.departed); a download never showed
            # what failed in a tab that left the page (a behaviour it cut short)
            self.reasons[:] = [r for r in self.reasons[:kept] if r != self.behaviour_error]
            self.gone, loaded.final_url = gone, gone.own_url
            loaded.facts, loaded.dom, loaded.shot = recorded_facts(recorder), None, None
            self.reasons.append(gone.remark)
            self.extras.add(gone.to or "")  # its failed request is no resource
        elif self.rules.login_check:
            loaded.login = await self._login_check(page, recorder, loaded.final_url)
        # Other screens' images after the screenshot: once cached, Chromium shows a
        # larger srcset candidate (the screenshot had the 2x image a 1x screen never
        # showed). Each loaded (or failed) on return; media are fetched at _close.
        with contextlib.suppress(Exception):  # extras: a page gone keeps its own
            fetched = await autofetch(page, deadline=self._step_deadline(0.15))
            self.extras.update(fetched.images)
            self._media = fetched.media
        self._mark("autofetch")

    async def _login_check(
        self, page: Any, recorder: NetworkRecorder, final: str
    ) -> LoginCheck | None:
        """Did the page end at a login form? (:mod:`.login_check`)"""
        status = recorder.main.response.status if recorder.main.response else None
        return await check_login(
            page, self.lib, self.url, final=final, status=status, profile=self.profile
        )

    async def _close(self, loaded: _Loaded, tab: Tab | None) -> None:
        context = tab.context if tab is not None else None
        if loaded.recorder is not None and context is not None and self.tabs.is_connected():
            scripts = [w.url for w in loaded.workers.sessions.values()] if loaded.workers else []
            stand_in = stand_in_from(context, self._remaining_ms, loaded.recorder)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    record_missed(loaded.recorder, self._requested, scripts, stand_in),
                    max(1.0, min(10.0, self.deadline - time.monotonic())),
                )
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    record_whole_media(loaded.recorder, stand_in, self._media),
                    max(1.0, min(30.0, self.deadline - time.monotonic())),
                )
        if not self.tabs.is_connected():
            loaded.error = "the browser crashed while capturing this page; it will be restarted"
            self.reasons.append("browser crashed")
        elif self.crashed:
            loaded.error = loaded.error or "the page crashed the browser tab"
        if loaded.recorder is not None:
            with contextlib.suppress(Exception):
                await loaded.recorder.finish(
                    timeout=max(1.0, min(5.0, self.deadline - time.monotonic()))
                )
            self._mark("finish")
        if loaded.workers is not None:
            await loaded.workers.close()
        if tab is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(tab.close(), 10)
            self._mark("close")

    # ------------------------------------------------------------------ steps

    def _mark(self, step: str) -> None:
        """Record how long ``step`` took (seconds since the previous mark)."""
        now = time.monotonic()
        self.timings[step] = round(now - self._last_mark, 3)
        self._last_mark = now

    def _on_request(self, request: Any) -> None:
        if request.method == "GET":
            self._requested.append(request.url)

    def _on_crash(self) -> None:
        self.crashed = True

    def _broken(self) -> bool:
        return self.crashed or not self.tabs.is_connected()

    def _on_oversize(self, cdp: Any, recorder: NetworkRecorder | None, rid: str) -> None:
        if recorder is not None and rid == recorder.main.request_id:
            self.oversize_main.set()
        self.reasons.append("a response exceeded the body size limit")
        task = asyncio.ensure_future(_quiet(cdp.send("Page.stopLoading")))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _refetcher(self, context: Any) -> Refetch:
        return refetch_in(context, self._remaining_ms)

    def _remaining_ms(self) -> float:
        return max(1.0, (self.deadline - time.monotonic()) * 1000)

    async def _load_and_behave(self, page: Any, recorder: NetworkRecorder) -> str | None:
        """Load, wait, run custom JS, scroll, settle. Returns a fatal error or None."""
        try:
            await load_unless_oversize(
                page, self.url, timeout_ms=self._remaining_ms(), oversize=self.oversize_main
            )
        except Exception as exc:
            message = str(exc)
            if recorder.main.record is None and recorder.main.response is None:
                await recorder.drain(1.0)
            if self.oversize_main.is_set():
                return oversize_error(self.owner.max_body)
            if recorder.main.request_id is None or not _main_answered(recorder):
                return describe_failure(message, self.url, self.rules.page_timeout)
            if _main_downloaded(recorder):  # a file the browser does not show
                self.downloaded = True
                self.reasons.append("a file the browser does not show: fetched again")
                return None
            self.reasons.append(
                "the load event did not fire in time"
                if "Timeout" in message
                else f"loading stopped: {first_line(message)}"
            )
        if self.oversize_main.is_set():
            return oversize_error(self.owner.max_body)
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
            self._mark("settle")  # not counted as extraction
        except TimeoutError:
            self.reasons.append("page behaviours ran out of time")
        except Exception as exc:
            if self.crashed or not self.tabs.is_connected():
                raise
            self.behaviour_error = f"a page behaviour failed: {first_line(exc)}"
            self.reasons.append(self.behaviour_error)
        return None

    def _left(self) -> float:
        return max(0.1, self.deadline - time.monotonic())

    def _step_deadline(self, reserve_fraction: float) -> float:
        """A deadline that leaves ``reserve_fraction`` of the page limit for later steps."""
        return self.deadline - self.rules.page_timeout * reserve_fraction * 0.5

    async def _extract(
        self, page: Any, recorder: NetworkRecorder
    ) -> tuple[PageFacts, str | None, bytes | None]:
        mime = recorder.main.response.mime if recorder.main.response else None
        views = not self.oversize_main.is_set()  # a failed capture keeps no DOM or screenshot
        budget = max(2.0, self._left())
        budget = budget if views else min(budget, OVERSIZE_TEXT_SECONDS)  # (for its snippet)
        facts, dom, shot = PageFacts(), None, None
        self.extracted = True
        disposition = (
            recorder.main.response.header("content-disposition") if recorder.main.response else None
        )
        if self.downloaded and mime not in PDF_MIMES:
            return file_facts(self.url, disposition), None, None  # the tab showed nothing
        try:
            facts = await asyncio.wait_for(extract(page), budget)
            if views and mime not in NO_SCREENSHOT_MIMES:
                dom = await asyncio.wait_for(page.content(), budget)
            self._mark("extract")
        except Exception as exc:
            self.reasons.append(f"text extraction failed: {first_line(exc)}")
        if views and self.owner.screenshots and mime not in NO_SCREENSHOT_MIMES:
            shot = await page_screenshot(page, self._remaining_ms(), self.reasons, self._broken)
            self._mark("screenshot")
        if mime in PDF_MIMES:
            # its own address: a PDF the browser downloads (an attachment, or any PDF in the
            # headless shell) leaves the tab at about:blank
            base = recorder.main.record.url if recorder.main.record else self.url
            document, notes = recorder.main.document, recorder.notes
            render = views and self.owner.screenshots
            read = partial(pdf_page_facts, render=render, reasons=self.reasons)
            facts, shot = await asyncio.to_thread(
                read, document, self.url, base, notes=notes, disposition=disposition
            )
            self._mark("pdf")
        return facts, dom, shot

    # ------------------------------------------------------------------ saving

    def _save(
        self,
        *,
        writer: CaptureWarcWriter,
        loaded: _Loaded,
        snapshot_id: int,
        uid: str,
        folder: str,
        captured_at: Any,
    ) -> CaptureResult:
        recorder, final_url, facts = loaded.recorder, loaded.final_url, loaded.facts
        main = recorder.main.record if recorder else None
        response = recorder.main.response if recorder else None
        resources: list[ResourceInfo] = list(recorder.resources) if recorder else []
        lost = recorder.main.lost if recorder else None  # the page's own answer, empty
        if lost and loaded.error is None:
            loaded.error = f"the page's body was not kept: {lost}"
        ok = main is not None and loaded.error is None and loaded.login is None
        error = loaded.error or (loaded.login.message if loaded.login else None)
        if main is None and error is None:
            error = _why_no_record(recorder)
        concurrent = main.record_id if main else None
        files: list[tuple[str, str]] = []
        fidelity: str | None = None
        if ok or (main is not None and loaded.login is not None):  # the login form: evidence
            views = (loaded.shot or None, loaded.dom, loaded.facts.text)
            files = write_views(
                self.lib, writer, folder, loaded.final_url, views, concurrent=concurrent
            )
        if ok:
            fidelity = self._fidelity(recorder, resources)
        self._write_pageinfo(writer, loaded, resources, concurrent)
        writer.close()
        files.insert(0, (f"{folder}/{WARC_NAME}", FileKind.WARC))
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
            snippet=make_snippet(facts.text) or None,
            language=facts.language,
            fidelity=fidelity,
            content_hash=main.digest if main is not None else None,  # as the indexer sets it
            text=facts.text,
            tags=list(self.tags),
        )
        outcome.provenance = self._provenance(recorder, error, loaded.login) | facts.provenance()
        hashes, unrecorded = self._store(outcome, uid, captured_at, final_url)
        return CaptureResult(
            url=self.url,
            final_url=final_url,
            snapshot_id=snapshot_id,
            ok=ok,
            http_status=outcome.http_status,
            fidelity=fidelity,
            error=error,
            outlinks=facts.outlinks if ok else [],
            login=loaded.login.outcome.value if loaded.login else None,
            resources=resources,
            bytes_written=sum(size for size, _ in hashes.values()),
            duration=time.monotonic() - self.started,
            unrecorded=unrecorded,
            remark=self.gone.remark if self.gone else None,
        )

    def _store(
        self, outcome: SnapshotOutcome, uid: str, captured_at: Any, final_url: str
    ) -> tuple[dict[str, tuple[int, str]], str | None]:
        """Save the snapshot: the size and digest of each file, and None; or, when the
        database went away, the size of each file and why (its row is completed later)."""
        try:
            return finish_snapshot(
                self.lib,
                outcome,
                uid=uid,
                collection=self.collection,
                captured_at=captured_at,
                final_url=final_url,
                job_id=self.job_id,
            ), None
        except Exception as exc:
            if not lost_connection(exc):
                raise
            return file_sizes(self.lib.root, outcome.files), unreachable_message(exc)

    def _write_pageinfo(
        self,
        writer: CaptureWarcWriter,
        loaded: _Loaded,
        resources: list[ResourceInfo],
        concurrent: str | None,
    ) -> None:
        pageinfo = {
            "url": self.url,
            "final_url": loaded.final_url,
            "title": loaded.facts.title,
            "resources": [r.__dict__ for r in resources],
            "notes": loaded.recorder.notes if loaded.recorder else [],
        }
        writer.write_metadata(
            f"urn:pageinfo:{loaded.final_url}",
            "application/json",
            json.dumps(pageinfo, ensure_ascii=False).encode(),
            concurrent_to=concurrent,
        )

    def _fidelity(self, recorder: NetworkRecorder | None, resources: list[ResourceInfo]) -> str:
        if not self.extracted:
            self.reasons.append("the page was not extracted (no title, text, DOM or screenshot)")
        if recorder is not None and recorder.main.truncated:
            self.reasons.append(f"the main response is incomplete ({recorder.main.truncated})")
        failed = [
            r for r in resources if r.outcome.counts_against_fidelity and r.url not in self.extras
        ]
        if failed:
            self.reasons.append(f"failed, truncated or altered: {counted(len(failed), 'resource')}")
        return Fidelity.FALLBACK if self.reasons else Fidelity.HIGH

    def _provenance(
        self, recorder: NetworkRecorder | None, error: str | None, login: LoginCheck | None
    ) -> dict[str, Any]:
        revisit_sources = sorted(recorder.revisit_sources) if recorder else []
        provenance: dict[str, Any] = {
            "backend": "playwright",
            "browser": self.owner.browser_version,
            "user_agent": self.rules.user_agent,
            "fidelity_reasons": self.reasons,
            "notes": recorder.notes if recorder else [],
            "revisit_of_records": revisit_sources,
            "revisit_of_snapshots": snapshots_of_records(self.lib, revisit_sources),
            "duration_seconds": round(time.monotonic() - self.started, 3),
            "timings": self.timings,
        }
        if self.owner.browser_info is not None and self.owner.browser_info.headless_shell:
            provenance["headless_shell"] = True  # pages saw a browser without Chrome's parts
        if error:
            provenance["error"] = error
        if self.profile:
            provenance["profile"] = self.profile
        if login is not None:
            provenance["login_check"] = login.to_json()
        return provenance


@dataclass
class _Loaded:
    """What recording a page produced, handed from the event loop to :meth:`PageCapture._save`."""

    final_url: str
    recorder: NetworkRecorder | None = None
    workers: WorkerAttacher | None = None
    facts: PageFacts = field(default_factory=PageFacts)
    dom: str | None = None
    shot: bytes | None = None
    error: str | None = None
    login: LoginCheck | None = None  # the page was a login form (.login_check)


def _main_answered(recorder: NetworkRecorder) -> bool:
    ex = recorder.exchanges.get(recorder.main.request_id or "")
    return bool(ex and ex.hops and ex.hops[-1].response is not None)


def _main_downloaded(recorder: NetworkRecorder) -> bool:
    ex = recorder.exchanges.get(recorder.main.request_id or "")
    return ex is not None and is_download(ex)


def _why_no_record(recorder: NetworkRecorder | None) -> str:
    """Why a page has no record: it never answered, or its answer could not be written."""
    if recorder is None or not _main_answered(recorder):
        return "the page produced no response"
    why = f" ({recorder.write_errors[-1]})" if recorder.write_errors else ""
    return f"the page answered, but its record could not be written{why}"


async def _quiet(awaitable: Any) -> None:
    with contextlib.suppress(Exception):
        await awaitable
