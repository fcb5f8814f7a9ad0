"""The network recorder: Chrome DevTools Protocol ``Network`` events -> WARC records.

For every network fetch of the page (document, subresources, XHR/fetch, iframes on the
same session, media ranges) and of its workers (sessions added by
:mod:`archiver_app.capture.targets`) it writes a ``response`` (or ``revisit``) record and
the ``request`` record concurrent to it, hop by hop through redirects (a payload the
library cannot be asked about, its database away, is written whole: no revisit). An answer from the
browser's caches or a service worker is not a fetch and is not written again
(:func:`~archiver_app.capture.exchange.went_to_network`). Each record has:

- request headers as sent (``requestWillBeSentExtraInfo``, with cookies), else as scheduled;
- response header text as received (``responseReceivedExtraInfo.headersText``), so
  duplicate ``Set-Cookie`` headers and their order survive;
- the body from ``Network.getResponseBody`` once loading finished (bodies arrive decoded,
  see :mod:`archiver_app.warc.httpmsg` for how headers are fixed to match; text comes back
  as text, encoded again in the charset the browser decoded it with);
- ``WARC-IP-Address`` from the response's remote address.

Bodies above ``max_body`` are not fetched: the response is written with its headers and
``WARC-Truncated: length`` (a 2 GB download never fills memory; the page is stopped);
requests open when the page is done (a long-poll), with what came and ``WARC-Truncated:
time``. A body DevTools cannot give (a viewer's; one the browser emptied for the page,
:func:`.exchange.emptied`; an error page it did not read, :func:`.exchange.declined`) is
fetched again, as at the end is what the browser reported requested but no session saw
(:mod:`.refetch`). A document the tab stopped showing while its body came (the page loaded
itself again) ends with no event: it is written when the next one shows;
:mod:`.main_document` picks which document's record is the page's.

Capture while browsing (:mod:`archiver_app.capture.browse`) gives a ``route`` instead of
one writer: the WARC each exchange goes to (one per page visited) is picked at its write.

Threading contract: one recorder per page (per tab when routed), used from its page's loop.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any

from archiver_app.capture import text_bodies
from archiver_app.capture.charsets import FrameCharsets, with_charset
from archiver_app.capture.exchange import (
    Event,
    Exchange,
    Hop,
    build_response,
    content_length,
    declined,
    emptied,
    from_network,
    had_body,
    is_download,
    prefixed,
    request_headers,
    target,
    went_to_network,
    with_host,
)
from archiver_app.capture.extract import first_line
from archiver_app.capture.main_document import DocumentRecord, MainDocument
from archiver_app.capture.post_bodies import PostBodies, sent_body
from archiver_app.capture.results import ResourceInfo, ResourceOutcome, answered_once
from archiver_app.capture.targets import TargetSession
from archiver_app.capture.text_bodies import TextBodies
from archiver_app.warc.digests import payload_digest
from archiver_app.warc.form_secrets import blank_request_body
from archiver_app.warc.httpmsg import HttpRequest, HttpResponse
from archiver_app.warc.writer import CaptureWarcWriter, RevisitOf

#: Looks up a payload digest already in the library: returns what a revisit refers to.
DedupLookup = Callable[[str], RevisitOf | None]
#: Fetches a body again when the browser no longer holds it (:data:`.text_bodies.Refetch`).
Refetch = text_bodies.Refetch
#: Fetches a response the recorder never saw (a worker's own script, reported to no session
#: we listen on; what a dedicated worker requested before its session was recorded):
#: (url, byte limit) -> the response and its body, or why it could not be fetched.
StandIn = Callable[[str, int], Awaitable[tuple[HttpResponse, bytes] | str]]

#: Puts back what DevTools never had into a request body: (request headers, body) -> the
#: body (browsing: the files a person chose, :mod:`archiver_app.capture.browse.uploads`).
FillBody = Callable[[Iterable[tuple[str, str]], bytes], bytes]

#: Picks the WARC an exchange is written to (capture while browsing: one file per page
#: visited, see :mod:`archiver_app.capture.browse`); called just before each write.
Route = Callable[[Exchange], CaptureWarcWriter]

#: Types a frame shows in a built-in viewer (its body is then refetched, not read back).
VIEWER_MIMES = frozenset({"application/pdf", "application/x-pdf"})


class NetworkRecorder:
    """Listens on a CDP session and writes what the page fetched; see the module docstring."""

    def __init__(
        self,
        cdp: Any,
        writer: CaptureWarcWriter | None,
        *,
        dedup: DedupLookup | None = None,
        refetch: Refetch | None = None,
        max_body: int = 256 << 20,
        on_oversize: Callable[[str], None] | None = None,
        route: Route | None = None,
        secret_fields: set[str] | None = None,
        fill_body: FillBody | None = None,
    ) -> None:
        self.cdp = cdp
        self.secret_fields = secret_fields  # set (browsing): blanked in request bodies
        self.fill_body = fill_body
        if writer is None and route is None:
            raise ValueError("a recorder needs a writer or a route")
        self.writer = writer
        self.route = route
        self.dedup = dedup
        self.refetch = refetch
        self.max_body = max_body
        self.on_oversize = on_oversize
        self.exchanges: dict[str, Exchange] = {}
        self.order: list[str] = []
        self.main_frame_id: str | None = None
        self.main = MainDocument()  # the page's request and record (.main_document)
        self.resources: list[ResourceInfo] = []
        self.notes: list[str] = []
        self.write_errors: list[str] = []  # why write tasks failed (each also in notes)
        self.revisit_sources: set[int] = set()
        self._text = TextBodies(FrameCharsets(), self.notes, refetch, max_body)
        self.last_activity = time.monotonic()
        self._tasks: set[asyncio.Task[None]] = set()
        self._task_of: dict[str, asyncio.Task[None]] = {}  # requestId -> its write task
        self._write_lock = asyncio.Lock()
        self._handlers: list[tuple[Any, str, Callable[[Event], None]]] = []
        self._sessions: dict[str, Any] = {"": cdp}  # requestId prefix -> its session
        self._bodies = PostBodies(self._sessions, self.notes)  # left out of the events
        self.accepting = True  # False once finish() began: events are ignored from then on
        self.closed = False  # True once finish() ended: nothing is written any more

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await self._listen(self.cdp, "")
        self.cdp.on("Page.frameNavigated", self._on_navigated)
        self._handlers.append((self.cdp, "Page.frameNavigated", self._on_navigated))
        await self.cdp.send("Page.enable")
        tree = await self.cdp.send("Page.getFrameTree")
        self.main_frame_id = tree["frameTree"]["frame"]["id"]

    async def add_session(self, session: TargetSession) -> None:
        """Record a worker's requests too (see :mod:`archiver_app.capture.targets`)."""
        if self.accepting:
            await self._listen(session, session.session_id)

    async def _listen(self, session: Any, prefix: str) -> None:
        """Handle ``session``'s Network events; its request ids get ``prefix`` (ids are
        only unique within a session)."""
        self._sessions[prefix] = session
        for name, handler in (
            ("Network.requestWillBeSent", self._on_request),
            ("Network.requestWillBeSentExtraInfo", self._on_request_extra),
            ("Network.requestServedFromCache", self._on_cache_hit),
            ("Network.responseReceived", self._on_response),
            ("Network.responseReceivedExtraInfo", self._on_response_extra),
            ("Network.dataReceived", self._on_data),
            ("Network.loadingFinished", self._on_finished),
            ("Network.loadingFailed", self._on_failed),
        ):
            listener = handler if not prefix else prefixed(handler, prefix)
            session.on(name, listener)
            self._handlers.append((session, name, listener))
        buffer = max(self.max_body, 1 << 20)
        await session.send(
            "Network.enable",
            {
                "maxResourceBufferSize": min(buffer, 1 << 30),
                "maxTotalBufferSize": min(buffer * 4, 1 << 30),
            },
        )

    async def write_stand_in(self, url: str, response: HttpResponse, body: bytes) -> bool:
        """Write a response fetched outside the recorded sessions (False: closed); see
        :mod:`archiver_app.capture.refetch`."""
        assert self.writer is not None  # callers check: a routed recorder has no file
        request = HttpRequest("GET", target(url), with_host([], url), b"", "HTTP/1.1")
        revisit = None  # a payload the library has (the same video, captured again)
        if body and response.status < 300:
            revisit = self._revisit_of(url, body)
        async with self._write_lock:
            if self._is_closed():
                return False
            self.writer.write_exchange(url, request, response, body, revisit_of=revisit)
        if revisit is not None:
            self.revisit_sources.add(revisit.record_id)
        self.resources.append(ResourceInfo(url, response.status, response.mime, len(body)))
        return True

    async def write_unfinished(self, ex: Exchange, why: str) -> None:
        """Write ``ex``, which the browser will never finish, with its body fetched again
        for ``why`` (a sound or video the tab's player read itself: :mod:`.media_document`)."""
        ex.finished, ex.unfinished = True, why
        await self._write_exchange(ex, body_ok=True)

    @property
    def in_flight(self) -> list[Exchange]:
        return [x for x in self.exchanges.values() if not (x.finished or x.failed)]

    def quiet_for(self) -> float:
        return time.monotonic() - self.last_activity

    async def drain(self, timeout: float) -> None:
        """Wait (up to ``timeout``) for bodies being fetched and written."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)

    async def wait_main(self, timeout: float) -> None:
        """Wait (up to ``timeout``) until the main document's record is written."""
        task = self._task_of.get(self.main.request_id or "")
        if task is not None and not task.done():
            await asyncio.wait([task], timeout=timeout)

    async def finish(self, timeout: float = 5.0) -> None:
        """Shut down in order; after this the recorder writes nothing more.

        1. stop accepting events (late ones, e.g. from an unload handler, are ignored);
        2. wait up to ``timeout`` for body fetches under way, then cancel the rest and
           await them, so no task outlives the recorder;
        3. write what is pending: exchanges never written or whose body never came back,
           open ones as ``WARC-Truncated: time``;
        4. mark the recorder closed (the caller may then close the WARC).
        """
        self.accepting = False
        for session, name, handler in self._handlers:
            with contextlib.suppress(Exception):
                session.remove_listener(name, handler)
        await self.drain(timeout)
        pending = list(self._tasks)
        for task in pending:
            task.cancel()  # a body that never came back
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        try:
            for rid in list(self.order):
                ex = self.exchanges[rid]
                if not ex.written or ex.writing:
                    ex.written, ex.writing = False, False
                    try:
                        await self._write_exchange(ex, body_ok=False, truncated="time")
                    except Exception as exc:
                        self.notes.append(f"{rid}: could not be written ({first_line(exc)})")
        finally:
            self.closed = True
            self.resources[:] = answered_once(self.resources)
            await self._bodies.close()

    # ------------------------------------------------------------------ events

    def _get(self, rid: str) -> Exchange:
        ex = self.exchanges.get(rid)
        if ex is None:
            ex = self.exchanges[rid] = Exchange(rid)
            self.order.append(rid)
        now = time.monotonic()
        ex.last_activity = self.last_activity = now
        return ex

    def _on_request(self, ev: Event) -> None:
        if not self.accepting:
            return
        req = ev["request"]
        url = req["url"]
        if not url.startswith(("http://", "https://")):
            return
        ex = self._get(ev["requestId"])
        redirect = ev.get("redirectResponse")
        if redirect is not None and ex.hops:
            ex.hops[-1].response = redirect
        post, left_out = sent_body(req)
        headers = dict(req.get("headers") or {})
        hop = Hop(url, req.get("method", "GET"), headers, self._kept_body(headers, post))
        if left_out:  # asked now, while the request is alive (a closed tab has no body)
            hop.post_data_asked = self._bodies.ask(ev["requestId"])
        ex.hops.append(hop)
        ex.resource_type = ev.get("type")
        ex.frame_id = ev.get("frameId")
        if ev.get("type") == "Document" and ev.get("frameId") == self.main_frame_id:
            self.main.requested(ev["requestId"])

    def _kept_body(self, headers: dict[str, str], body: bytes) -> bytes:
        if self.fill_body is not None:
            body = self.fill_body(headers.items(), body)
        if self.secret_fields is not None:  # a person types there: no password is kept
            return blank_request_body(headers.items(), body, self.secret_fields)
        return body

    def _on_request_extra(self, ev: Event) -> None:
        if not self.accepting:
            return
        self._get(ev["requestId"]).request_extras.append(ev)

    def _on_cache_hit(self, ev: Event) -> None:
        if not self.accepting:
            return
        self._get(ev["requestId"]).from_cache = True

    def _on_response(self, ev: Event) -> None:
        if not self.accepting:
            return
        ex = self.exchanges.get(ev["requestId"])
        response = ev["response"]
        url = str(response.get("url"))
        if ex is None and "|" in ev["requestId"] and url.startswith(("http://", "https://")):
            # a service or shared worker's own script: fetched before its session existed,
            # so only its response is reported (a blob: or data: script was never fetched)
            ex = self._get(ev["requestId"])
            headers = dict(response.get("requestHeaders") or {})
            ex.hops.append(Hop(url, "GET", headers))
            ex.resource_type = ev.get("type")
        if ex is None or not ex.hops:
            return
        self._get(ev["requestId"])
        ex.hops[-1].response = response

    def _on_response_extra(self, ev: Event) -> None:
        if not self.accepting:
            return
        self._get(ev["requestId"]).response_extras.append(ev)

    def _on_data(self, ev: Event) -> None:
        if not self.accepting:
            return
        ex = self.exchanges.get(ev["requestId"])
        if ex is None:
            return
        self._get(ev["requestId"])
        ex.data_length += int(ev.get("dataLength") or 0)
        if ex.data_length > self.max_body and not ex.oversize:
            ex.oversize = True
            url = ex.hops[-1].url if ex.hops else "?"
            self.notes.append(f"{url}: body larger than {self.max_body} bytes, truncated")
            self._spawn(ex.request_id, self._write_exchange(ex, body_ok=False, truncated="length"))
            if self.on_oversize is not None:
                self.on_oversize(ev["requestId"])

    def _on_finished(self, ev: Event) -> None:
        if not self.accepting:
            return
        ex = self.exchanges.get(ev["requestId"])
        if ex is None:
            return
        self._get(ev["requestId"])
        ex.finished = True
        if not ex.written:
            self._spawn(ex.request_id, self._write_exchange(ex, body_ok=not ex.oversize))

    def _on_failed(self, ev: Event) -> None:
        if not self.accepting:
            return
        ex = self.exchanges.get(ev["requestId"])
        if ex is None:
            return
        self._get(ev["requestId"])
        downloaded = ex.request_id == self.main.request_id and is_download(ex)
        error = str(ev.get("errorText"))
        ex.emptied = emptied(ex, error)
        ex.declined = not ex.emptied and declined(ex, error)
        ex.finished = ex.emptied or ex.declined  # the answer came: its body is read again
        again = downloaded or ex.emptied or ex.declined
        if not again:
            ex.failed = ev.get("errorText") or "failed"
            if ev.get("canceled") and ex.failed == "failed":
                ex.failed = "canceled"
        if not ex.written:  # a download's, an emptied or a declined body is read again
            cut = None if again else "disconnect"
            self._spawn(ex.request_id, self._write_exchange(ex, body_ok=again, truncated=cut))

    def _on_navigated(self, ev: Event) -> None:
        """The main frame shows another document (a navigation's requestId is its loaderId):
        its answer is the page's from now on (:mod:`.main_document`)."""
        frame = ev.get("frame") or {}
        if not self.accepting or frame.get("parentId") or frame.get("id") != self.main_frame_id:
            return
        shown = self.exchanges.get(str(frame.get("loaderId")))
        if shown is None or not shown.hops:
            return
        before = self.exchanges.get(self.main.shown(shown.request_id) or "")
        if before is None or before.finished or before.failed or before.written:
            return
        # the document shown before was still loading: the browser dropped it and no event
        # will end it. Its body is fetched again, unless the same address answered again
        # (a page that reloads itself): two answers, the empty one first, would replay blank
        before.finished = before.superseded = True
        before.replaced = before.hops[-1].url == shown.hops[-1].url
        if before.replaced:
            self.notes.append(
                f"{before.hops[-1].url}: the page loaded itself again before this answer's "
                "body came; the later answer is kept"
            )
        self._spawn(before.request_id, self._write_exchange(before, body_ok=not before.replaced))

    def _is_closed(self) -> bool:
        return self.closed

    def _spawn(self, rid: str, coro: Coroutine[Any, Any, None]) -> None:
        if not self.accepting:
            coro.close()
            return
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        self._task_of[rid] = task
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        """Forget a finished write task; its error (never expected) becomes a note."""
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.write_errors.append(first_line(task.exception()))
            self.notes.append(f"a record could not be written ({self.write_errors[-1]})")

    # ------------------------------------------------------------------ writing

    async def _body(self, ex: Exchange, hop: Hop) -> tuple[bytes | None, str | None]:
        mime = str((hop.response or {}).get("mimeType") or "").lower()
        if ex.emptied:  # its body never reached DevTools
            reason = "the browser kept it from the page"
        elif ex.superseded:
            reason = "the page showed another document before this one's body came"
        elif ex.unfinished:  # the browser will never finish it (:mod:`.media_document`)
            reason = ex.unfinished
        elif mime in VIEWER_MIMES and ex.resource_type == "Document":
            # the built-in viewer takes over the stream: DevTools only has its wrapper page
            reason = "shown by the browser's built-in viewer"
        else:
            try:
                session_key, _, request_id = ex.request_id.rpartition("|")
                got = await self._sessions[session_key].send(
                    "Network.getResponseBody", {"requestId": request_id}
                )
            except Exception:  # evicted, media stream, download, page gone (the driver's
                reason = "the browser no longer held it"  # error text is no note for people)
            else:
                if got.get("base64Encoded"):
                    data = base64.b64decode(got.get("body", ""))
                else:
                    text = str(got.get("body", ""))
                    data = await self._text.to_bytes(text, ex, hop, self.exchanges.values())
                if data or not (had_body(ex, hop) or ex.declined):
                    return data, None
                if ex.declined:  # an error page it had no use for: none of it was read
                    reason = "the browser did not read this error answer"
                else:  # a service worker's fetch into its cache: the stream went to the cache
                    reason = "the browser gave back an empty body"
        if self.refetch is not None and hop.method == "GET":
            response = hop.response or {}
            declared = content_length(response)
            if declared is not None and declared > self.max_body:
                return None, f"{declared} bytes, over the {self.max_body} byte limit"
            headers = request_headers(ex, len(ex.hops) - 1, hop)
            got = await self.refetch(
                hop.url, headers, int(response.get("status") or 0), self.max_body
            )
            if isinstance(got, bytes):
                self.notes.append(f"{hop.url}: body refetched ({reason})")
                return got, "refetched"
            reason = f"{reason}; fetching it again: {got}"
        return None, reason

    async def _write_exchange(
        self, ex: Exchange, *, body_ok: bool, truncated: str | None = None
    ) -> None:
        if ex.written or self.closed:
            return
        ex.written = ex.writing = True
        final = ex.hops[-1] if ex.hops else None
        body: bytes | None = None
        body_note: str | None = None
        if final is not None and not went_to_network(ex, len(ex.hops) - 1):
            body_ok = False  # a cache hit: its body was recorded when it was fetched
        await self._bodies.fill(ex, self._kept_body)
        if body_ok and final is not None and final.response is not None:
            await self._wait_extras(ex)
            body, body_note = await self._body(ex, final)
            if body is None:
                truncated = "unspecified"
        if self.closed or not ex.writing:
            return  # finish() took over this exchange while its body was awaited
        ex.writing = False
        async with self._write_lock:
            if self._is_closed():  # closed while this task waited for the lock
                return
            for index, hop in enumerate(ex.hops):
                is_final = index == len(ex.hops) - 1
                if not went_to_network(ex, index) or (is_final and ex.replaced):
                    continue  # one record per network fetch: cache hits are not fetches
                self._write_hop(
                    ex,
                    index=index,
                    hop=hop,
                    body=body if is_final else b"",
                    truncated=truncated,
                    is_final=is_final,
                )
                if is_final and body_note and body is None:
                    self.notes.append(f"{hop.url}: body not available ({body_note})")
                    self.main.body_lost(ex.request_id, body_note)

    async def _wait_extras(self, ex: Exchange, timeout: float = 0.5) -> None:
        """Header text can arrive just after the body finished; give it a moment."""
        wanted = sum(1 for h in ex.hops if h.response and from_network(h.response))
        deadline = time.monotonic() + timeout
        while len(ex.response_extras) < wanted and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    def _revisit_of(self, url: str, data: bytes) -> RevisitOf | None:
        """What a payload the library holds already is a revisit of (None: a new payload).
        A lookup that fails (the library's database went away) costs the page nothing: the
        payload is written whole, as a new one is."""
        if self.dedup is None:
            return None
        try:
            return self.dedup(payload_digest(data))
        except Exception as exc:
            why = first_line(exc)
            self.notes.append(f"{url}: written whole: is it in the library already? ({why})")
            return None

    def _write_hop(
        self,
        ex: Exchange,
        *,
        index: int,
        hop: Hop,
        body: bytes | None,
        truncated: str | None,
        is_final: bool,
    ) -> None:
        resp_event = hop.response
        if resp_event is None:
            self.resources.append(
                ResourceInfo(
                    hop.url, None, None, 0, ex.failed or "no response", ResourceOutcome.NO_RESPONSE
                )
            )
            return
        response = build_response(resp_event, ex, index)
        if is_final and ex.stored_charset and body:
            response = with_charset(response, ex.stored_charset)
        request = HttpRequest(
            method=hop.method,
            target=target(hop.url),
            headers=with_host(list(request_headers(ex, index, hop).items()), hop.url),
            body=hop.post_data,
            protocol=response.protocol,
        )
        data = body or b""
        hop_truncated = truncated if is_final else None
        revisit = None
        if data and hop_truncated is None and response.status < 300 and response.status != 206:
            revisit = self._revisit_of(hop.url, data)
        writer = self.route(ex) if self.route is not None else self.writer
        assert writer is not None  # __init__ refuses a recorder with neither
        written, _ = writer.write_exchange(
            hop.url,
            request,
            response,
            data,
            ip_address=resp_event.get("remoteIPAddress"),
            truncated=hop_truncated,
            revisit_of=revisit,
        )
        if revisit is not None:
            self.revisit_sources.add(revisit.record_id)
        error: str | None = None
        outcome = ResourceOutcome.COMPLETE
        if is_final and ex.failed and ex.failed != "canceled":
            error, outcome = ex.failed, ResourceOutcome.FAILED
        elif hop_truncated:
            error = f"truncated ({hop_truncated})"
            outcome = ResourceOutcome.truncated(hop_truncated)
        elif is_final and ex.altered and data:
            error, outcome = ex.altered, ResourceOutcome.ALTERED
        self.resources.append(
            ResourceInfo(hop.url, response.status, response.mime, len(data), error, outcome)
        )
        if is_final and ex.resource_type == "Document" and ex.frame_id == self.main_frame_id:
            viewed = response.mime in VIEWER_MIMES and data and hop_truncated is None
            document = data if viewed else None  # a PDF, read by capture.pdf: no DOM
            self.main.written(
                ex.request_id, DocumentRecord(written, response, hop_truncated, document, data)
            )
