"""One browser tab of a browsing session: its recorder, its page boundaries, its snapshots.

Each tab has its own DevTools session, one :class:`~archiver_app.capture.recorder.
NetworkRecorder` (with its workers, :mod:`archiver_app.capture.targets`) and a sequence of
:class:`~.visit.Visit` s. The recorder writes every exchange into the WARC of the visit it
belongs to (its ``route`` hook), decided when the request is sent:

- a top-level document request starts a new visit (still loading): it, its redirects and
  every request its document makes (same DevTools ``loaderId``) belong to that visit;
- a subframe's document and what it loads belong to the visit shown when it was requested;
- what carries no loader (workers) belongs to the visit shown when it is written;
- a response that arrives for a visit already saved goes to the visit shown now, so every
  response is in exactly one WARC.

Page boundaries: the browser showing another document (``Page.frameNavigated`` of the main
frame) or another view of the same document whose address differs other than by a plain
anchor (``Page.navigatedWithinDocument``: ``pushState``, ``#/route``) closes the visit
shown until then. It is saved once the page's leave note arrived (:mod:`.inpage`), or
after :data:`LEAVE_WAIT` seconds without one. While a visit is shown, the tab takes a
snapshot (viewport screenshot, DOM, text) whenever the page changed and the network has
been quiet for a moment, so a page left without a note still has its last state.

Threading contract: every method runs on the session's event loop.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from archiver_app.capture.browse.early import write_early
from archiver_app.capture.browse.inpage import (
    NOTE_BINDING,
    TICK_JS,
    page_key,
    parse_note,
    parse_secret_fields,
)
from archiver_app.capture.browse.uploads import ChosenFiles
from archiver_app.capture.browse.visit import SessionFacts, Views, Visit, VisitState
from archiver_app.capture.exchange import Event, Exchange
from archiver_app.capture.extract import EXTRACT_JS, facts_from, first_line, frames_text
from archiver_app.capture.persist import dedup_lookup
from archiver_app.capture.recorder import NetworkRecorder
from archiver_app.capture.targets import WorkerAttacher
from archiver_app.jobs.pipeline import Pool
from archiver_app.library import Library
from archiver_app.warc.writer import CaptureWarcWriter

#: How long a left page may take to send its note before it is saved without one.
LEAVE_WAIT = 1.5
#: At Stop, how long requests already sent may take to be answered and recorded.
IN_FLIGHT_SECONDS = 3.0
#: At Stop, how long the page shown may take to become readable.
LAST_READ_SECONDS = 3.0
#: How often the tab looks for changes to snapshot, and the quiet it waits for first.
POLL_SECONDS = 0.5
QUIET_SECONDS = 0.4
#: A page that keeps changing (an animation) is snapshot at most this often.
MIN_SNAPSHOT_GAP = 2.0
#: Time limit of each step of a snapshot.
STEP_SECONDS = 5.0

#: Reads what :func:`archiver_app.capture.extract.extract` reads, with the DOM and address.
READ_JS = f"""(() => {{
  const facts = ({EXTRACT_JS})();
  const doc = document;
  const doctype = doc.doctype ? new XMLSerializer().serializeToString(doc.doctype) : '';
  facts.dom = doctype + (doc.documentElement ? doc.documentElement.outerHTML : '');
  facts.href = location.href;
  return facts;
}})()"""

#: Document requests are held (``Fetch``) until the page being left is read.
HOLD_PATTERN = {"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}
#: The longest a navigation waits for that.
HOLD_SECONDS = 5.0

#: Saves a visit the tab no longer routes to (the session serialises saves).
SaveVisit = Callable[[Visit], Awaitable[None]]


def is_web(url: str) -> bool:
    return url.startswith(("http://", "https://"))


class TabRecorder:
    """Records one tab; see the module docstring."""

    def __init__(
        self,
        lib: Library,
        facts: SessionFacts,
        page: Any,
        number: int,
        *,
        save: SaveVisit,
        max_body: int,
        rows: Pool,
        claim: Callable[[str], list[Any]] = lambda url: [],
    ) -> None:
        self.lib, self.facts, self.page, self.number = lib, facts, page, number
        self.save, self.max_body, self.claim, self.rows = save, max_body, claim, rows
        self.cdp: Any = None
        self.recorder: NetworkRecorder | None = None
        self.workers: WorkerAttacher | None = None
        self.main_frame: str | None = None
        self.current: Visit | None = None
        self.visits: list[Visit] = []  # not yet saved, oldest first
        self._of_request: dict[str, Visit] = {}
        self._of_loader: dict[str, Visit] = {}
        self._tasks: set[asyncio.Future[None]] = set()
        self._poller: asyncio.Task[None] | None = None
        self._held: set[str] = set()  # network ids of document requests held once
        self.stopped = False
        self.notes: list[str] = []
        #: Playwright requests of this tab seen before the recorder listened (.early)
        self.early: list[Any] = []
        self.listening = False
        #: names of the password inputs its pages showed: blanked in request bodies
        self.secret_fields: set[str] = set()
        #: files chosen in its pages' file inputs: put back in the requests that send them
        self.chosen_files = ChosenFiles()

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Listen before anything loads in the tab (the session starts tabs first)."""
        self.cdp = cdp = await self.page.context.new_cdp_session(self.page)
        cdp.on("Network.requestWillBeSent", self._on_request)
        cdp.on("Page.frameNavigated", self._on_navigated)
        cdp.on("Page.navigatedWithinDocument", self._on_same_document)
        cdp.on("Runtime.bindingCalled", self._on_binding)
        cdp.on("Fetch.requestPaused", self._on_paused)
        await cdp.send("Page.enable")
        # a popup's Runtime.enable can wait until its first document is in: not in the way
        self._spawn(self._enable_notes())
        await cdp.send("Fetch.enable", {"patterns": [HOLD_PATTERN]})
        self.recorder = NetworkRecorder(
            cdp,
            None,
            dedup=dedup_lookup(self.lib),
            max_body=self.max_body,
            route=self._route,
            secret_fields=self.secret_fields,
            fill_body=self.chosen_files.fill,
        )
        await self.recorder.start()
        self.listening = True
        self.main_frame = self.recorder.main_frame_id
        self.workers = WorkerAttacher(self.recorder.add_session, self.recorder.notes)
        await self.workers.watch_page(cdp)
        if is_web(self.page.url):  # a popup already showing its page when it reached us
            self._commit(self._open(self.page.url, nav_request=None, loader=None))
            self._adopt(self.page.url)
        elif self.early:
            self._spawn(self._write_early(list(self.early)))
        self._poller = asyncio.ensure_future(self._poll())

    async def _enable_notes(self) -> None:
        try:
            await self.cdp.send("Runtime.enable")  # bindingCalled is sent to enabled sessions
            await self.cdp.send("Runtime.addBinding", {"name": NOTE_BINDING})
        except Exception as exc:
            self.notes.append(f"tab {self.number}: pages cannot send leave notes ({exc!r})")

    async def stop(self, *, snapshot: bool) -> None:
        """End the tab: a last snapshot (``snapshot``: the page is still there), write what
        is pending, then save every visit left."""
        if self.stopped:
            return
        self.stopped = True
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)
        if snapshot and self.recorder is not None:
            # what the browser said before Stop is handled first (a reply comes after the
            # events sent before it), then answers already on their way belong to the page,
            # and a page asked for before Stop that shows meanwhile is the one read below
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    self.cdp.send("Runtime.evaluate", {"expression": "0"}), STEP_SECONDS
                )
            deadline = time.monotonic() + IN_FLIGHT_SECONDS
            while self.recorder.in_flight and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        if snapshot and self.current is not None:
            await self._last_read(self.current)
        if self.recorder is not None:
            with contextlib.suppress(Exception):
                await self.recorder.finish(timeout=5.0 if snapshot else 0.5)
        if self.workers is not None:
            await self.workers.close()
        for visit in list(self.visits):
            self._leave(visit, wait=0.0)
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self.cdp is not None:
            with contextlib.suppress(Exception):
                await self.cdp.detach()

    # ------------------------------------------------------------------ visits

    def _open(self, url: str, *, nav_request: str | None, loader: str | None) -> Visit:
        state = VisitState.LOADING if nav_request is not None else VisitState.CURRENT
        visit = Visit(
            self.lib,
            self.facts,
            url=url,
            tab=self.number,
            nav_request=nav_request,
            loader=loader,
            state=state,
            rows=self.rows,
        )
        self.visits.append(visit)
        if loader:
            self._of_loader[loader] = visit
        return visit

    def _commit(self, visit: Visit, url: str | None = None) -> None:
        """``visit`` is what the tab shows now; the one shown before is left, and so are
        document requests older than it that never showed (downloads, empty answers)."""
        if url is not None:
            visit.url = url
        visit.state = VisitState.CURRENT
        visit.shown = True
        previous, self.current = self.current, visit
        for other in list(self.visits):
            if other is visit:
                break
            if other.state is VisitState.LOADING:
                self._leave(other, wait=0.0)
        if previous is not None and previous is not visit:
            self._leave(previous, wait=LEAVE_WAIT)

    def _leave(self, visit: Visit, *, wait: float) -> None:
        if visit.state in (VisitState.LEAVING, VisitState.SAVED):
            if wait == 0.0:
                visit.noted.set()  # stop waiting: the session is ending
            return
        visit.state = VisitState.LEAVING
        if visit is self.current:
            self.current = None
        self._spawn(self._retire(visit, wait))

    async def _retire(self, visit: Visit, wait: float) -> None:
        if wait > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(visit.noted.wait(), wait)
        visit.open = False  # from here on its late responses go to the visit shown
        if visit.nav_request is not None and self.recorder is not None and not visit.document_url:
            ex = self.recorder.exchanges.get(visit.nav_request)
            if ex is not None and ex.hops:
                visit.document_url = ex.hops[-1].url
        with contextlib.suppress(ValueError):
            self.visits.remove(visit)
        await self.save(visit)
        visit.state = VisitState.SAVED

    def _adopt(self, url: str) -> None:
        """The tab shows ``url`` without a request the recorder saw: write what Playwright
        saw of it (a popup's document) into the visit shown."""
        early = [*self.early, *self.claim(url)]
        self.early.clear()
        document = next((r for r in early if r.is_navigation_request() and r.url == url), None)
        if document is not None and self.current is not None:
            self.current.document_url = url
        if early:
            self._spawn(self._write_early(early))

    async def _write_early(self, early: list[Any]) -> None:
        assert self.recorder is not None
        seen = {hop.url for ex in self.recorder.exchanges.values() for hop in ex.hops}
        await write_early(
            early,
            seen,
            lambda url: self._shown_or_newest().writer,
            self.notes,
            self.max_body,
        )

    def _route(self, ex: Exchange) -> CaptureWarcWriter:
        visit = self._of_request.get(ex.request_id)
        if visit is None or not visit.open:
            visit = self._shown_or_newest()
            self._of_request.setdefault(ex.request_id, visit)
        return visit.writer

    def _shown_or_newest(self) -> Visit:
        if self.current is not None and self.current.open:
            return self.current
        for visit in reversed(self.visits):
            if visit.open:
                return visit
        # nothing is shown (a worker answered after the last page was left): a visit of
        # its own keeps the response rather than losing it
        stray = self._open(
            self.page.url if is_web(self.page.url) else "about:blank", nav_request=None, loader=None
        )
        stray.state = VisitState.LEAVING
        self._spawn(self._retire(stray, 0.0))
        return stray

    # ------------------------------------------------------------------ events

    def _on_request(self, ev: Event) -> None:
        rid = str(ev.get("requestId"))
        url = str((ev.get("request") or {}).get("url") or "")
        if rid in self._of_request or not is_web(url) or self.stopped:
            return  # a redirect hop keeps the visit of its request
        loader = str(ev.get("loaderId") or "")
        if ev.get("type") == "Document" and ev.get("frameId") == self.main_frame:
            self._of_request[rid] = self._open(url, nav_request=rid, loader=loader or rid)
            return
        visit = self._of_loader.get(loader) if loader else None
        if visit is None or not visit.open:
            visit = self.current
        if visit is None:
            return  # decided when written (_route)
        if ev.get("type") == "Document" and loader:
            self._of_loader[loader] = visit  # a subframe's document: its loads follow it
        self._of_request[rid] = visit

    def _on_navigated(self, ev: Event) -> None:
        frame = ev.get("frame") or {}
        if frame.get("parentId"):
            return
        url = str(frame.get("url") or "") + str(frame.get("urlFragment") or "")
        loader = str(frame.get("loaderId") or "")
        visit = self._of_loader.get(loader)
        if self.stopped and (visit is None or visit.state is not VisitState.LOADING):
            return  # after Stop only a page asked for before it may still show (stop())
        current = self.current
        if visit is not None and visit is current:
            return
        if current is not None and current.loader is None and current.url == url:
            current.loader = loader  # the page a popup showed when it reached us
            self._of_loader[loader] = current
            return
        if visit is not None and visit.state is VisitState.LOADING:
            self._commit(visit, url)
        elif is_web(url):  # shown without a request we saw (history, memory cache, popup)
            self._commit(self._open(url, nav_request=None, loader=loader), url)
            self._adopt(url)
        elif current is not None:  # about:blank, an error page: nothing to keep
            self._leave(current, wait=LEAVE_WAIT)

    def _on_same_document(self, ev: Event) -> None:
        if ev.get("frameId") != self.main_frame or self.stopped:
            return
        url = str(ev.get("url") or "")
        current = self.current
        if current is None or not is_web(url) or page_key(url) == page_key(current.url):
            return
        view = self._open(url, nav_request=None, loader=current.loader)
        self._commit(view, url)

    def _on_paused(self, ev: Event) -> None:
        self._spawn(self._hold(ev))

    async def _hold(self, ev: Event) -> None:
        """Take the screenshot of the page shown before the request for the next document
        in the main frame leaves (its DOM and text came with its leave note: the page's
        scripts do not run while a navigation is held); other documents go on at once."""
        visit, network_id = self.current, str(ev.get("networkId") or ev.get("requestId"))
        try:
            if (
                ev.get("frameId") == self.main_frame
                and visit is not None
                and not self.stopped
                and network_id not in self._held  # a redirect of a request already held
            ):
                self._held.add(network_id)
                image = await asyncio.wait_for(
                    self.cdp.send("Page.captureScreenshot", {"format": "png"}), HOLD_SECONDS
                )
                visit.take_leave_shot(base64.b64decode(image.get("data", "")))
        except Exception as exc:
            self.notes.append(
                f"{visit.url if visit else '?'}: no screenshot as it was left ({exc!r})"
            )
        finally:
            with contextlib.suppress(Exception):
                await self.cdp.send("Fetch.continueRequest", {"requestId": ev["requestId"]})

    def _on_binding(self, ev: Event) -> None:
        if ev.get("name") != NOTE_BINDING:
            return
        payload = str(ev.get("payload") or "")
        if len(self.secret_fields) < 500:
            self.secret_fields.update(parse_secret_fields(payload))
        self.chosen_files.take(payload)
        note = parse_note(payload)
        if note is None:
            return
        key = page_key(note.url)
        leaving = [
            v
            for v in self.visits
            if v.state is VisitState.LEAVING and v.note is None and page_key(v.url) == key
        ]
        if leaving:
            leaving[0].take_note(note)
        elif self.current is not None and page_key(self.current.url) == key:
            self.current.take_note(note)  # sent just before the tab reports the move

    # ------------------------------------------------------------------ snapshots

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            visit = self.current
            if visit is None or self.recorder is None or self.page.is_closed():
                continue
            if self.recorder.quiet_for() < QUIET_SECONDS:
                continue
            try:
                got = await asyncio.wait_for(
                    self.cdp.send(
                        "Runtime.evaluate", {"expression": TICK_JS, "returnByValue": True}
                    ),
                    STEP_SECONDS,
                )
                tick = got.get("result", {}).get("value")
            except Exception:  # navigating: the next round sees the next page
                tick = None
            if tick is None:
                continue
            changed = tick != visit.tick or self.recorder.last_activity != visit.activity
            recent = (
                visit.views is not None and time.monotonic() - visit.views.at < MIN_SNAPSHOT_GAP
            )
            if visit.views is None or (changed and not recent):
                activity = self.recorder.last_activity
                if await self.snapshot(visit):
                    visit.tick, visit.activity = tick, activity

    async def snapshot(self, visit: Visit, *, leaving: bool = False) -> bool:
        """Read the page shown as ``visit`` (text with its frames', DOM, viewport
        screenshot); False when the tab moved on meanwhile or the page could not be read.
        ``leaving``: read at Stop.

        Straight through DevTools, not Playwright (which would wait for a navigation under
        way); the frames' text through Playwright's frames, bounded by
        :data:`~archiver_app.capture.extract.FRAME_SECONDS`."""
        key = page_key(visit.url)
        if self.page.is_closed() or self.cdp is None:
            return False
        try:
            got = await asyncio.wait_for(
                self.cdp.send("Runtime.evaluate", {"expression": READ_JS, "returnByValue": True}),
                STEP_SECONDS,
            )
            raw = got.get("result", {}).get("value")
            if not isinstance(raw, dict) or page_key(str(raw.get("href"))) != key:
                return False  # another page by now
            facts, dom = facts_from(raw), str(raw.get("dom") or "")
            facts = facts.with_frames("\n\n".join(await frames_text(self.page)))
        except Exception as exc:
            self.notes.append(f"{visit.url}: could not be read ({first_line(exc)})")
            return False
        shot: bytes | None = visit.views.shot if visit.views is not None else None
        try:
            image = await asyncio.wait_for(
                self.cdp.send("Page.captureScreenshot", {"format": "png"}), STEP_SECONDS
            )
            shot = base64.b64decode(image.get("data", ""))
        except Exception as exc:  # while browsing, the next round tries again; at Stop, say so
            if leaving:
                why = first_line(exc) or type(exc).__name__
                self.notes.append(f"{visit.url}: no screenshot as it was left ({why})")
        if self.current is not visit:
            return False  # left while it was read: the leave note or hold has it
        visit.views = Views(str(raw["href"]), dom, facts, shot, leaving=leaving)
        return True

    async def _last_read(self, visit: Visit) -> None:
        """The snapshot at Stop, tried again for up to :data:`LAST_READ_SECONDS`: a page
        stopped just after its document came is read in the blank document before it until
        its own takes over (the read then sees another address)."""
        deadline = time.monotonic() + LAST_READ_SECONDS
        while not await self.snapshot(visit, leaving=True):
            if self.current is not visit or self.page.is_closed():
                return
            if time.monotonic() >= deadline:
                self.notes.append(f"{visit.url}: could not be read as it was left")
                return
            await asyncio.sleep(0.25)

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
