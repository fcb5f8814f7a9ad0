"""The network recorder: Chrome DevTools Protocol ``Network`` events -> WARC records.

For every request the page makes (document, subresources, XHR/fetch, iframes on the same
session, media ranges) it writes a ``response`` (or ``revisit``) record and the ``request``
record concurrent to it, hop by hop through redirects:

- request headers as sent (``requestWillBeSentExtraInfo``, with cookies), else as scheduled;
- response header text as received (``responseReceivedExtraInfo.headersText``), so
  duplicate ``Set-Cookie`` headers and their order survive;
- the body from ``Network.getResponseBody`` once loading finished (bodies arrive decoded,
  see :mod:`archiver_app.warc.httpmsg` for how headers are fixed to match; text comes back
  as text, encoded again in the charset the browser decoded it with);
- ``WARC-IP-Address`` from the response's remote address.

Bodies above ``max_body`` are not fetched: the response is written with its headers and
``WARC-Truncated: length`` (a 2 GB download never fills memory; the page is stopped).
Requests still open when the page is done (a long-poll) are written with what arrived and
``WARC-Truncated: time``.

Threading contract: one recorder per page, used from the event loop that owns the page.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import contextlib
import re
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from archiver_app.capture.extract import first_line
from archiver_app.capture.results import ResourceInfo
from archiver_app.warc.digests import payload_digest
from archiver_app.warc.httpmsg import (
    ORIG_PREFIX,
    HttpRequest,
    HttpResponse,
    headers_from_map,
    is_http2,
    parse_header_text,
)
from archiver_app.warc.writer import CaptureWarcWriter, RevisitOf, WrittenRecord

#: Looks up a payload digest already in the library: returns what a revisit refers to.
DedupLookup = Callable[[str], RevisitOf | None]
#: Fetches a body again when the browser no longer holds it: (url, request headers, the
#: status the browser saw, byte limit) -> the body, or why it cannot stand in for the body
#: the browser had (another status, too large, a network error).
Refetch = Callable[[str, dict[str, str], int, int], Awaitable[bytes | str]]

Event = dict[str, Any]

#: Types a frame shows in a built-in viewer (its body is then refetched, not read back).
VIEWER_MIMES = frozenset({"application/pdf", "application/x-pdf"})


@dataclass
class _Hop:
    url: str
    method: str
    headers: dict[str, str]
    post_data: bytes = b""
    response: Event | None = None


@dataclass
class _Exchange:
    request_id: str
    hops: list[_Hop] = field(default_factory=list)
    request_extras: list[Event] = field(default_factory=list)
    response_extras: list[Event] = field(default_factory=list)
    resource_type: str | None = None
    frame_id: str | None = None
    started: float = field(default_factory=time.monotonic)
    last_activity: float = field(default_factory=time.monotonic)
    data_length: int = 0
    finished: bool = False
    failed: str | None = None
    written: bool = False
    writing: bool = False  # fetching its body; finish() may take it over
    oversize: bool = False
    stored_charset: str | None = None  # the body was stored in this charset, not as served


class NetworkRecorder:
    """Listens on a CDP session and writes what the page fetched; see the module docstring."""

    def __init__(
        self,
        cdp: Any,
        writer: CaptureWarcWriter,
        *,
        dedup: DedupLookup | None = None,
        refetch: Refetch | None = None,
        max_body: int = 256 << 20,
        on_oversize: Callable[[str], None] | None = None,
    ) -> None:
        self.cdp = cdp
        self.writer = writer
        self.dedup = dedup
        self.refetch = refetch
        self.max_body = max_body
        self.on_oversize = on_oversize
        self.exchanges: dict[str, _Exchange] = {}
        self.order: list[str] = []
        self.main_frame_id: str | None = None
        self.main_record: WrittenRecord | None = None
        self.main_response: HttpResponse | None = None
        self.main_request_id: str | None = None
        self.main_truncated: str | None = None  # WARC-Truncated of the main record, if any
        self.resources: list[ResourceInfo] = []
        self.notes: list[str] = []
        self.revisit_sources: set[int] = set()
        self._frame_charsets: dict[str, str] = {}  # frameId -> its document's charset
        self.last_activity = time.monotonic()
        self._tasks: set[asyncio.Task[None]] = set()
        self._task_of: dict[str, asyncio.Task[None]] = {}  # requestId -> its write task
        self._write_lock = asyncio.Lock()
        self._handlers: list[tuple[str, Callable[[Event], None]]] = []
        self.accepting = True  # False once finish() began: events are ignored from then on
        self.closed = False  # True once finish() ended: nothing is written any more

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        for name, handler in (
            ("Network.requestWillBeSent", self._on_request),
            ("Network.requestWillBeSentExtraInfo", self._on_request_extra),
            ("Network.responseReceived", self._on_response),
            ("Network.responseReceivedExtraInfo", self._on_response_extra),
            ("Network.dataReceived", self._on_data),
            ("Network.loadingFinished", self._on_finished),
            ("Network.loadingFailed", self._on_failed),
        ):
            self.cdp.on(name, handler)
            self._handlers.append((name, handler))
        buffer = max(self.max_body, 1 << 20)
        await self.cdp.send(
            "Network.enable",
            {
                "maxResourceBufferSize": min(buffer, 1 << 30),
                "maxTotalBufferSize": min(buffer * 4, 1 << 30),
            },
        )
        tree = await self.cdp.send("Page.getFrameTree")
        self.main_frame_id = tree["frameTree"]["frame"]["id"]

    @property
    def in_flight(self) -> list[_Exchange]:
        return [x for x in self.exchanges.values() if not (x.finished or x.failed)]

    def quiet_for(self) -> float:
        return time.monotonic() - self.last_activity

    async def drain(self, timeout: float) -> None:
        """Wait (up to ``timeout``) for bodies being fetched and written."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)

    async def wait_main(self, timeout: float) -> None:
        """Wait (up to ``timeout``) until the main document's record is written."""
        task = self._task_of.get(self.main_request_id or "")
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
        for name, handler in self._handlers:
            with contextlib.suppress(Exception):
                self.cdp.remove_listener(name, handler)
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

    # ------------------------------------------------------------------ events

    def _get(self, rid: str) -> _Exchange:
        ex = self.exchanges.get(rid)
        if ex is None:
            ex = self.exchanges[rid] = _Exchange(rid)
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
        post = req.get("postData") or ""
        if not post and req.get("postDataEntries"):
            post = "".join(
                base64.b64decode(e.get("bytes", "")).decode("latin-1")
                for e in req["postDataEntries"]
            )
        ex.hops.append(
            _Hop(url, req.get("method", "GET"), dict(req.get("headers") or {}), _latin(post))
        )
        ex.resource_type = ev.get("type")
        ex.frame_id = ev.get("frameId")
        if (
            self.main_request_id is None
            and ev.get("type") == "Document"
            and ev.get("frameId") == self.main_frame_id
        ):
            self.main_request_id = ev["requestId"]

    def _on_request_extra(self, ev: Event) -> None:
        if not self.accepting:
            return
        self._get(ev["requestId"]).request_extras.append(ev)

    def _on_response(self, ev: Event) -> None:
        if not self.accepting:
            return
        ex = self.exchanges.get(ev["requestId"])
        if ex is None or not ex.hops:
            return
        self._get(ev["requestId"])
        ex.hops[-1].response = ev["response"]

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
        ex.failed = ev.get("errorText") or "failed"
        if ev.get("canceled") and ex.failed == "failed":
            ex.failed = "canceled"
        if not ex.written:
            self._spawn(
                ex.request_id, self._write_exchange(ex, body_ok=False, truncated="disconnect")
            )

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
            self.notes.append(f"a record could not be written ({first_line(task.exception())})")

    # ------------------------------------------------------------------ writing

    async def _body(self, ex: _Exchange, hop: _Hop) -> tuple[bytes | None, str | None]:
        mime = str((hop.response or {}).get("mimeType") or "").lower()
        if mime in VIEWER_MIMES and ex.resource_type == "Document":
            # the built-in viewer takes over the stream: DevTools only has its wrapper page
            reason = "shown by the browser's built-in viewer"
        else:
            try:
                got = await self.cdp.send("Network.getResponseBody", {"requestId": ex.request_id})
            except Exception as exc:  # evicted, media stream, download, page gone
                reason = first_line(exc)
            else:
                if got.get("base64Encoded"):
                    return base64.b64decode(got.get("body", "")), None
                return self._encode_text(got.get("body", ""), hop, ex), None
        if self.refetch is not None and hop.method == "GET":
            response = hop.response or {}
            declared = _content_length(response)
            if declared is not None and declared > self.max_body:
                return None, f"{reason}; {declared} bytes, over the {self.max_body} byte limit"
            headers = _request_headers(ex, len(ex.hops) - 1, hop)
            got = await self.refetch(
                hop.url, headers, int(response.get("status") or 0), self.max_body
            )
            if isinstance(got, bytes):
                self.notes.append(f"{hop.url}: body refetched ({reason})")
                return got, "refetched"
            reason = f"{reason}; fetching it again: {got}"
        return None, reason

    def _encode_text(self, text: str, hop: _Hop, ex: _Exchange) -> bytes:
        """Text bodies come back decoded; encode them back as the browser decoded them.

        The charset is the header's, else (HTML, CSS) the one the body declares, else (a
        script or style sheet) its document's; labels are read as browsers read them
        (``iso-8859-1`` is windows-1252). When the text cannot be encoded in that charset
        it is stored as UTF-8 and the stored ``Content-Type`` says so (see
        :attr:`_Exchange.stored_charset`), with a note.
        """
        mime = str((hop.response or {}).get("mimeType") or "").lower()
        declared = _charset(hop.response) or _declared_charset(text, mime)
        if declared is None and ex.resource_type in ("Script", "Stylesheet"):
            declared = self._frame_charsets.get(ex.frame_id or "")
        codec = browser_codec(declared) if declared else "utf-8"
        if codec is not None:
            try:
                data = text.encode(codec, errors=_C1_ERRORS)
            except UnicodeEncodeError:
                pass
            else:
                if ex.resource_type == "Document" and ex.frame_id:
                    self._frame_charsets[ex.frame_id] = declared or "utf-8"
                return data
        self.notes.append(
            f"{hop.url}: body cannot be encoded as {declared!r}; stored as UTF-8 "
            "(Content-Type charset changed to utf-8)"
        )
        ex.stored_charset = "utf-8"
        return text.encode("utf-8", errors="replace")

    async def _write_exchange(
        self, ex: _Exchange, *, body_ok: bool, truncated: str | None = None
    ) -> None:
        if ex.written or self.closed:
            return
        ex.written = ex.writing = True
        final = ex.hops[-1] if ex.hops else None
        body: bytes | None = None
        body_note: str | None = None
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

    async def _wait_extras(self, ex: _Exchange, timeout: float = 0.5) -> None:
        """Header text can arrive just after the body finished; give it a moment."""
        wanted = sum(1 for h in ex.hops if h.response and _from_network(h.response))
        deadline = time.monotonic() + timeout
        while len(ex.response_extras) < wanted and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    def _write_hop(
        self,
        ex: _Exchange,
        *,
        index: int,
        hop: _Hop,
        body: bytes | None,
        truncated: str | None,
        is_final: bool,
    ) -> None:
        resp_event = hop.response
        if resp_event is None:
            self.resources.append(ResourceInfo(hop.url, None, None, 0, ex.failed or "no response"))
            return
        response = _response(resp_event, ex, index)
        if is_final and ex.stored_charset and body:
            response = _with_charset(response, ex.stored_charset)
        request = HttpRequest(
            method=hop.method,
            target=_target(hop.url),
            headers=_with_host(list(_request_headers(ex, index, hop).items()), hop.url),
            body=hop.post_data,
            protocol=response.protocol,
        )
        data = body or b""
        hop_truncated = truncated if is_final else None
        revisit = None
        if (
            self.dedup is not None
            and data
            and hop_truncated is None
            and response.status < 300
            and response.status != 206
        ):
            revisit = self.dedup(payload_digest(data))
        written, _ = self.writer.write_exchange(
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
        if is_final and ex.failed and ex.failed != "canceled":
            error = ex.failed
        elif hop_truncated:
            error = f"truncated ({hop_truncated})"
        self.resources.append(
            ResourceInfo(hop.url, response.status, response.mime, len(data), error)
        )
        if ex.request_id == self.main_request_id and is_final:
            self.main_record, self.main_response = written, response
            self.main_truncated = hop_truncated


# ---------------------------------------------------------------------- helpers


def _latin(text: str) -> bytes:
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text.encode("utf-8")


def _from_network(response: Event) -> bool:
    return not (
        response.get("fromDiskCache")
        or response.get("fromServiceWorker")
        or response.get("fromPrefetchCache")
    )


def _content_length(response: Event) -> int | None:
    """The ``Content-Length`` a response declared, if any (the bytes on the wire)."""
    for name, value in (response.get("headers") or {}).items():
        if name.lower() == "content-length":
            text = str(value).strip()
            return int(text) if text.isdigit() else None
    return None


def _charset(response: Event | None) -> str | None:
    if not response:
        return None
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    ctype = headers.get("content-type") or response.get("mimeType") or ""
    for part in str(ctype).split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            return value.strip().strip("'\"")
    return None


#: WHATWG Encoding Standard labels whose browser decoder is not Python's codec of the same
#: name (``iso-8859-1`` and ``us-ascii`` are windows-1252 in every browser, ``gb2312`` is
#: GB18030...), so bodies encode back to the bytes that were served.
_WHATWG_CODECS = {
    **dict.fromkeys(
        (
            "ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819",
            "iso-8859-1", "iso-ir-100", "iso8859-1", "iso88591", "iso_8859-1",
            "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252", "x-cp1252",
        ),
        "cp1252",
    ),
    **dict.fromkeys(
        (
            "cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599",
            "iso_8859-9", "iso_8859-9:1989", "l5", "latin5", "windows-1254", "x-cp1254",
        ),
        "cp1254",
    ),
    **dict.fromkeys(
        ("dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620", "windows-874"),
        "cp874",
    ),
    **dict.fromkeys(
        (
            "chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80",
            "gbk", "iso-ir-58", "x-gbk", "gb18030",
        ),
        "gb18030",
    ),
    **dict.fromkeys(
        (
            "csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis",
            "windows-31j", "x-sjis",
        ),
        "cp932",
    ),
    **dict.fromkeys(
        (
            "cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987",
            "ks_c_5601-1989", "ksc5601", "ksc_5601", "windows-949",
        ),
        "cp949",
    ),
    **dict.fromkeys(("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"), "big5hkscs"),
    **dict.fromkeys(("x-mac-cyrillic", "x-mac-ukrainian"), "mac_cyrillic"),
    **dict.fromkeys(("x-mac-roman", "csmacintosh", "mac", "macintosh"), "mac_roman"),
    **dict.fromkeys(("iso-8859-8-i", "csiso88598i", "logical"), "iso8859_8"),
    **dict.fromkeys(("koi8-ru", "koi8-u"), "koi8_u"),
}  # fmt: skip
_C1_ERRORS = "archiver-c1-bytes"


def _c1_bytes(exc: UnicodeError) -> tuple[bytes, int]:
    """Browsers decode the bytes windows-125x leaves undefined (0x81, 0x8D...) as the C1
    control of the same number; Python's codecs cannot encode those back: write the byte."""
    if isinstance(exc, UnicodeEncodeError):
        chunk = exc.object[exc.start : exc.end]
        if all(0x80 <= ord(c) <= 0x9F for c in chunk):
            return bytes(ord(c) for c in chunk), exc.end
    raise exc


codecs.register_error(_C1_ERRORS, _c1_bytes)


def browser_codec(label: str) -> str | None:
    """The Python codec that encodes as a browser decodes charset ``label``; None if unknown."""
    key = label.strip().strip("'\"").lower()
    if key in _WHATWG_CODECS:
        return _WHATWG_CODECS[key]
    try:
        return codecs.lookup(key).name
    except LookupError:
        return None


_META_CHARSET = re.compile(
    r"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9_.:+-]+)""", re.IGNORECASE
)
_CSS_CHARSET = re.compile(r"""^\ufeff?@charset\s+"([A-Za-z0-9_.:+-]+)"\s*;""")


def _declared_charset(text: str, mime: str) -> str | None:
    """The charset a body declares itself: ``<meta charset>`` or ``<meta http-equiv>`` near
    the start of HTML, ``@charset`` at the start of CSS."""
    if mime == "text/html":
        match = _META_CHARSET.search(text[:4096])
        return match.group(1) if match else None
    if mime == "text/css":
        match = _CSS_CHARSET.match(text)
        return match.group(1) if match else None
    return None


def _with_charset(response: HttpResponse, charset: str) -> HttpResponse:
    """``response`` whose ``Content-Type`` names ``charset``; the served one is kept as
    ``X-Archive-Orig-Content-Type``."""
    served = response.header("content-type")
    mime = (served or "text/html").split(";", 1)[0].strip() or "text/html"
    headers = [(k, v) for k, v in response.headers if k.lower() != "content-type"]
    if served is not None:
        headers.append((ORIG_PREFIX + "Content-Type", served))
    headers.append(("Content-Type", f"{mime}; charset={charset}"))
    return replace(response, headers=headers)


def _target(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _with_host(headers: list[tuple[str, str]], url: str) -> list[tuple[str, str]]:
    if any(k.lower() == "host" for k, _ in headers):
        return headers
    netloc = urlsplit(url).netloc
    return [("Host", netloc), *[(k, v) for k, v in headers if not k.startswith(":")]]


def _network_index(ex: _Exchange, index: int) -> int | None:
    """Which ``*ExtraInfo`` event belongs to hop ``index``: they come only for hops that
    went to the network, so hops served from the HTTP cache (a cached redirect) are not
    counted. None when hop ``index`` itself did not go to the network."""
    hop = ex.hops[index] if index < len(ex.hops) else None
    if hop is not None and hop.response is not None and not _from_network(hop.response):
        return None
    return sum(1 for h in ex.hops[:index] if h.response is None or _from_network(h.response))


def _request_headers(ex: _Exchange, index: int, hop: _Hop) -> dict[str, str]:
    at = _network_index(ex, index)
    if at is not None and at < len(ex.request_extras):
        headers = ex.request_extras[at].get("headers") or {}
        if headers:
            return {k: v for k, v in headers.items() if not k.startswith(":")}
    return hop.headers


def _response_extra(event: Event, ex: _Exchange, index: int) -> Event | None:
    """The ``responseReceivedExtraInfo`` of hop ``index``, if it has one and its status is
    the hop's (never another response's headers)."""
    at = _network_index(ex, index)
    if at is None or at >= len(ex.response_extras):
        return None
    extra = ex.response_extras[at]
    code = extra.get("statusCode")
    if code is not None and event.get("status") is not None and int(code) != int(event["status"]):
        return None
    return extra


def _response(event: Event, ex: _Exchange, index: int) -> HttpResponse:
    """The response of hop ``index``: real header text when we have it."""
    protocol = str(event.get("protocol") or "http/1.1")
    extra = _response_extra(event, ex, index)
    if extra is not None and extra.get("headersText"):
        parsed = parse_header_text(extra["headersText"])
        if parsed is not None:
            proto, status, reason, headers = parsed
            return HttpResponse(status, reason, headers, proto.upper())
    status = int(event.get("status") or 0)
    reason = str(event.get("statusText") or "")
    source = (extra or {}).get("headers") or event.get("headers") or {}
    headers = headers_from_map(source)
    proto = (
        "HTTP/1.1" if is_http2(protocol) or not protocol.lower().startswith("http/") else protocol
    )
    if not reason:
        from http import HTTPStatus

        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = ""
    return HttpResponse(status, reason, headers, proto.upper())
