"""Fetching a response again with the app's own HTTP client, in the page's name.

A body fetched again (:mod:`.refetch`: a download, a viewer's PDF, a whole video) can be
hundreds of megabytes. Playwright's ``APIRequestContext`` holds the whole body in its node
driver and hands it over base64-encoded in one message: a 250 MB file made the driver run
out of memory and the capture lost its body. Here the body is read a chunk at a time in a
worker thread, never past the byte limit, and never goes through the driver; the request
carries the browser context's cookies and the headers the browser sent.
"""

from __future__ import annotations

import asyncio
import http.client
import ssl
import time
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import brotli

from archiver_app.warc.httpmsg import HttpResponse

CHUNK = 1 << 20


@dataclass(frozen=True)
class OverLimit:
    """The body was not read: it declared (or grew to) more than the byte limit."""

    size: int  # bytes declared, or read before stopping
    limit: int
    declared: bool  # ``size`` is the Content-Length the server declared

    def __str__(self) -> str:
        more = "" if self.declared else "more than "
        return f"{more}{self.size} bytes, over the {self.limit} byte limit"


async def browser_cookies(context: Any, url: str) -> str:
    """The ``Cookie`` header the browser context would send to ``url`` ('' when none)."""
    try:
        cookies = await context.cookies([url])
    except Exception:
        return ""
    return "; ".join(f"{c['name']}={c['value']}" for c in cookies)


async def fetch(
    url: str, headers: dict[str, str], limit: int, timeout: float
) -> tuple[HttpResponse, bytes | OverLimit]:
    """``url`` with ``headers``, no redirect followed: the response and its decoded body,
    or :class:`OverLimit` when it is larger than ``limit`` bytes (the transfer is stopped).
    Raises ``OSError`` (or ``http.client.HTTPException``) when the server cannot be read,
    ``TimeoutError`` when the whole of it takes longer than ``timeout`` seconds (a server
    sending a byte now and then keeps no thread past the page's deadline)."""
    return await asyncio.to_thread(_fetch, url, headers, limit, timeout)


def _fetch(
    url: str, headers: dict[str, str], limit: int, timeout: float
) -> tuple[HttpResponse, bytes | OverLimit]:
    parts = urlsplit(url)
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(
            parts.netloc, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        conn = http.client.HTTPConnection(parts.netloc, timeout=timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    sent = {k: v for k, v in headers.items() if not k.startswith(":")}  # HTTP/2 pseudo-headers
    sent = {k: v for k, v in sent.items() if k.lower() not in {"host", "connection"}}
    sent["Accept-Encoding"] = "gzip, deflate, br"  # decoded below, as the browser would
    try:
        conn.request("GET", target, headers=sent)
        resp = conn.getresponse()
        response = HttpResponse(resp.status, resp.reason, list(resp.getheaders()))
        return response, _read(resp, response, limit, time.monotonic() + timeout)
    finally:
        conn.close()


def _read(
    resp: http.client.HTTPResponse, response: HttpResponse, limit: int, deadline: float
) -> bytes | OverLimit:
    length = (response.header("content-length") or "").strip()
    encoding = (response.header("content-encoding") or "").strip().lower()
    if length.isdigit() and int(length) > limit and encoding in ("", "identity"):
        return OverLimit(int(length), limit, declared=True)
    decode = _decoder(encoding)
    body = bytearray()
    while chunk := resp.read1(CHUNK):
        body += decode(chunk)
        if len(body) > limit:
            return OverLimit(len(body), limit, declared=False)
        if time.monotonic() > deadline:
            raise TimeoutError(f"the body did not arrive in time ({len(body)} bytes read)")
    return bytes(body)


def _decoder(encoding: str) -> Any:
    """A function from each chunk as sent to the chunk decoded (``Content-Encoding``)."""
    if encoding in ("gzip", "x-gzip", "deflate"):
        return zlib.decompressobj(zlib.MAX_WBITS | 32).decompress  # gzip or zlib header
    if encoding == "br":
        return brotli.Decompressor().process
    return bytes
