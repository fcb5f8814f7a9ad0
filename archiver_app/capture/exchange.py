"""One request as DevTools reports it (hop by hop through redirects) and the HTTP messages
it becomes in the WARC.

The ``Network`` domain sends several events per request: ``requestWillBeSent`` per hop (the
previous hop's response rides on it as ``redirectResponse``), ``*ExtraInfo`` events with the
headers as they went over the wire (only for hops that reached the network), then
``responseReceived`` and ``loadingFinished`` or ``loadingFailed``. :class:`Exchange`
gathers them; :func:`build_response` and :func:`request_headers` turn a hop into the
messages :class:`~archiver_app.warc.writer.CaptureWarcWriter` writes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from archiver_app.capture.browser import shown_in_tab
from archiver_app.warc.httpmsg import HttpResponse, headers_from_map, is_http2, parse_header_text

Event = dict[str, Any]


@dataclass
class Hop:
    url: str
    method: str
    headers: dict[str, str]
    post_data: bytes = b""
    response: Event | None = None
    #: The request has a body DevTools did not send with it (a Blob, a file, a large
    #: one): ``Network.getRequestPostData``, asked for when the request was reported.
    post_data_asked: asyncio.Future[dict[str, Any]] | None = None


@dataclass
class Exchange:
    request_id: str
    hops: list[Hop] = field(default_factory=list)
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
    altered: str | None = None  # why the body is not stored byte for byte (a text body)
    from_cache: bool = False  # Network.requestServedFromCache: the final hop is a cache hit
    emptied: bool = False  # the browser kept the answer from the page (:func:`emptied`)
    declined: bool = False  # the browser did not read this error answer (:func:`declined`)
    #: the main frame showed a later document while this one's body came: the browser
    #: dropped it, no event ends it (its body is fetched again)
    superseded: bool = False
    replaced: bool = False  # superseded by a document of the same address: not written
    #: why the browser will never finish it (its body is fetched again), if it will not
    unfinished: str | None = None


def latin(text: str) -> bytes:
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text.encode("utf-8")


def from_network(response: Event) -> bool:
    return not (
        response.get("fromDiskCache")
        or response.get("fromServiceWorker")
        or response.get("fromPrefetchCache")
    )


def went_to_network(ex: Exchange, index: int) -> bool:
    """Whether hop ``index`` was a network fetch: not an answer from the browser's memory or
    disk cache, its prefetch cache or a service worker (whose own fetch, if any, is
    recorded from the worker's session). A hop with no response yet counts as a fetch."""
    hop = ex.hops[index]
    if hop.response is None:
        return True
    if index == len(ex.hops) - 1 and ex.from_cache:
        return False
    return from_network(hop.response)


def content_length(response: Event) -> int | None:
    """The ``Content-Length`` a response declared, if any (the bytes on the wire)."""
    for name, value in (response.get("headers") or {}).items():
        if name.lower() == "content-length":
            text = str(value).strip()
            return int(text) if text.isdigit() else None
    return None


def had_body(ex: Exchange, hop: Hop) -> bool:
    """Whether the answer to ``hop`` (a GET) had a body: bytes arrived or were declared."""
    declared = content_length(hop.response or {})
    return hop.method == "GET" and (ex.data_length > 0 or (declared or 0) > 0)


def emptied(ex: Exchange, error: str) -> bool:
    """Whether the browser answered the page with an empty response in place of the one
    that came (Opaque Response Blocking: JSON or HTML from another site fetched by a
    script with ``mode: 'no-cors'``): DevTools reports that response without any header
    (the real ones arrive as extra info) and no byte of its body, then the load aborted."""
    final = ex.hops[-1] if ex.hops else None
    return (
        final is not None
        and final.response is not None
        and final.method == "GET"
        and not final.response.get("headers")
        and ex.data_length == 0
        and error in {"net::ERR_ABORTED", "net::ERR_BLOCKED_BY_ORB"}
    )


def declined(ex: Exchange, error: str) -> bool:
    """Whether the browser stopped reading an error answer it did not want: a script or
    style sheet answered 4xx or 5xx is cancelled (``net::ERR_ABORTED``) as soon as its
    headers arrive, before any byte of its body (an image's error page is read whole). The
    server did not cut it off: its body is read again, not stored empty as cut."""
    final = ex.hops[-1] if ex.hops else None
    return (
        final is not None
        and final.response is not None
        and int(final.response.get("status") or 0) >= 400
        and ex.data_length == 0
        and error == "net::ERR_ABORTED"
    )


def target(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def with_host(headers: list[tuple[str, str]], url: str) -> list[tuple[str, str]]:
    if any(k.lower() == "host" for k, _ in headers):
        return headers
    netloc = urlsplit(url).netloc
    return [("Host", netloc), *[(k, v) for k, v in headers if not k.startswith(":")]]


def network_index(ex: Exchange, index: int) -> int | None:
    """Which ``*ExtraInfo`` event belongs to hop ``index``: they come only for hops that
    went to the network, so hops served from the HTTP cache (a cached redirect) are not
    counted. None when hop ``index`` itself did not go to the network."""
    hop = ex.hops[index] if index < len(ex.hops) else None
    if hop is not None and hop.response is not None and not from_network(hop.response):
        return None
    return sum(1 for h in ex.hops[:index] if h.response is None or from_network(h.response))


def request_headers(ex: Exchange, index: int, hop: Hop) -> dict[str, str]:
    at = network_index(ex, index)
    if at is not None and at < len(ex.request_extras):
        headers = ex.request_extras[at].get("headers") or {}
        if headers:
            return {k: v for k, v in headers.items() if not k.startswith(":")}
    return hop.headers


def response_extra(event: Event, ex: Exchange, index: int) -> Event | None:
    """The ``responseReceivedExtraInfo`` of hop ``index``, if it has one and its status is
    the hop's (never another response's headers)."""
    at = network_index(ex, index)
    if at is None or at >= len(ex.response_extras):
        return None
    extra = ex.response_extras[at]
    code = extra.get("statusCode")
    if code is not None and event.get("status") is not None and int(code) != int(event["status"]):
        return None
    return extra


def build_response(event: Event, ex: Exchange, index: int) -> HttpResponse:
    """The response of hop ``index``: real header text when we have it."""
    protocol = str(event.get("protocol") or "http/1.1")
    extra = response_extra(event, ex, index)
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


def is_download(ex: Exchange) -> bool:
    """Whether the document ``ex`` was answered (2xx) as a download: a type the browser does
    not show (a zip, a CSV) or ``Content-Disposition: attachment``. The browser turns it
    into a download as soon as the headers arrive, the capture refuses downloads, so the
    load "fails" and DevTools keeps no body. A refetch that fails too leaves the record
    marked incomplete."""
    final = ex.hops[-1] if ex.hops else None
    if final is None or final.response is None or ex.oversize:
        return False
    response = final.response
    headers = {str(k).lower(): str(v) for k, v in (response.get("headers") or {}).items()}
    attachment = headers.get("content-disposition", "").strip().lower().startswith("attachment")
    shown = shown_in_tab(str(response.get("mimeType") or ""))
    return 200 <= int(response.get("status") or 0) < 300 and (attachment or not shown)


def prefixed(handler: Callable[[Event], None], prefix: str) -> Callable[[Event], None]:
    """``handler`` for a worker's session: its request ids become ``prefix|requestId``."""

    def handle(ev: Event) -> None:
        if "requestId" in ev:
            ev = {**ev, "requestId": f"{prefix}|{ev['requestId']}"}
        handler(ev)

    return handle
