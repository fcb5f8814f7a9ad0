"""The capture's own fetch again (capture.direct_fetch) is bounded in time as a whole: a
server that sends a byte now and then, each within the socket's timeout, cannot keep it
(and its thread) past the page's deadline."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator

import pytest

from archiver_app.capture import direct_fetch


@pytest.fixture
def dripping() -> Iterator[str]:
    """A server that answers 200 with 1,000 bytes declared and sends one every 0.2 s."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            for _ in range(1000):
                if stop.wait(0.2):
                    return
                try:
                    conn.sendall(b"x")
                except OSError:
                    return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/slow.bin"
    finally:
        stop.set()
        server.close()
        thread.join(timeout=5)


def test_a_dripping_body_stops_at_the_deadline(dripping: str) -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="did not arrive in time"):
        asyncio.run(direct_fetch.fetch(dripping, {}, 1 << 20, timeout=1.0))
    assert time.monotonic() - started < 3  # each byte came within the socket's timeout


def _serve_once(headers: bytes, body: bytes) -> tuple[str, threading.Thread, socket.socket]:
    """A server that answers one request with ``headers`` and ``body``, then closes."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            head = headers + b"Content-Length: %d\r\n\r\n" % len(body)
            with contextlib.suppress(OSError):  # the client may stop reading (over the limit)
                conn.sendall(b"HTTP/1.1 200 OK\r\n" + head + body)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{server.getsockname()[1]}/x", thread, server


def _fetched(encoding: str, body: bytes, limit: int = 1 << 20) -> bytes | direct_fetch.OverLimit:
    url, thread, server = _serve_once(b"Content-Encoding: " + encoding.encode() + b"\r\n", body)
    try:
        _, got = asyncio.run(direct_fetch.fetch(url, {}, limit, timeout=10))
    finally:
        server.close()
        thread.join(timeout=5)
    return got


def _brotli_compress(data: bytes) -> bytes:
    import brotli

    return bytes(brotli.compress(data))


TEXT = "Ünïcode text, said again and again. ".encode() * 200


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),  # with its zlib header
        ("deflate", lambda b: zlib.compress(b, wbits=-zlib.MAX_WBITS)),  # raw, no header
        ("br", _brotli_compress),
    ],
    ids=["gzip", "deflate-zlib", "deflate-raw", "br"],
)
def test_an_encoded_body_is_decoded_as_the_browser_decodes_it(
    encoding: str, encode: Callable[[bytes], bytes]
) -> None:
    # raw deflate failed ("incorrect header check"); br raised AttributeError where
    # brotlipy (pywb's dependency) shadows Google's brotli module, as in this venv
    assert _fetched(encoding, encode(TEXT)) == TEXT


def test_a_compression_bomb_is_not_expanded_past_the_limit() -> None:
    bomb = gzip.compress(bytes(64 << 20), compresslevel=9)  # 64 MiB of zeros in ~64 KB
    tracemalloc.start()
    try:
        got = _fetched("gzip", bomb, limit=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(got, direct_fetch.OverLimit) and not got.declared
    assert peak < 16 << 20, peak  # it expanded the whole 64 MiB before looking at the limit
