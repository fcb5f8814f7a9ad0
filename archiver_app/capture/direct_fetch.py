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
    decode = _Decoder(encoding)
    body = bytearray()
    while chunk := resp.read1(CHUNK):
        body += decode(chunk, limit + 1 - len(body))
        if len(body) > limit:
            return OverLimit(len(body), limit, declared=False)
        if time.monotonic() > deadline:
            raise TimeoutError(f"the body did not arrive in time ({len(body)} bytes read)")
    return bytes(body)


class _Decoder:
    """Each chunk as sent -> the chunk decoded (``Content-Encoding``), at most ``room``
    bytes of it: a small compressed chunk that would expand past the byte limit (a
    compression bomb) is not expanded further. ``deflate`` is read with or without its
    zlib header, as browsers read it (servers send both)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self.head = b""  # a deflate body's first bytes, until its header can be told
        self.inflate: Any = None
        self.unbrotli: Any = None
        if encoding in ("gzip", "x-gzip"):
            self.inflate = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header
        elif encoding == "br":
            # ``brotli`` is Google's module (``process``) or, where pywb's dependency
            # brotlipy shadows it, brotlipy's (``decompress``): both read a chunk at a time
            decompressor = brotli.Decompressor()
            self.unbrotli = getattr(decompressor, "process", None) or decompressor.decompress

    def __call__(self, chunk: bytes, room: int) -> bytes:
        if self.encoding == "deflate" and self.inflate is None:
            self.head += chunk
            if len(self.head) < 2:
                return b""
            chunk, self.head = self.head, b""
            wbits = zlib.MAX_WBITS if _zlib_header(chunk) else -zlib.MAX_WBITS
            self.inflate = zlib.decompressobj(wbits)
        if self.inflate is not None:
            return bytes(self.inflate.decompress(chunk, max(room, 1)))
        if self.unbrotli is not None:
            return bytes(self.unbrotli(chunk))
        return chunk


def _zlib_header(start: bytes) -> bool:
    """Whether a deflate body begins with a zlib header (RFC 1950: method 8, check bits)."""
    return start[0] & 0x0F == 8 and (start[0] << 8 | start[1]) % 31 == 0
