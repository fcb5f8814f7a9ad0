"""The capture's own fetch again (capture.direct_fetch) is bounded in time as a whole: a
server that sends a byte now and then, each within the socket's timeout, cannot keep it
(and its thread) past the page's deadline."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

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
