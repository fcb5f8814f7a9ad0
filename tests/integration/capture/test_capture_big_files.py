"""A large file as the page: its body is fetched again by the app's own client (never whole
through Playwright's driver, which ran out of memory on 250 MB), and one over the byte
limit is a failed capture that says so, not an ``ok`` with an empty record."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from archiver_app.capture.engine import Capturer, CaptureResult, PageRules
from archiver_app.library import Library
from archiver_app.store.models import Snapshot, SnapshotState
from tests.helpers.warcs import read_warc, warcio_check

pytestmark = pytest.mark.slow

RULES = PageRules(page_timeout=30, settle_seconds=0.1)
CHUNK = b"archiver" * (1 << 17)  # 1 MiB


@pytest.fixture
def files() -> Iterator[str]:
    """A server of ``/<n>.bin``: ``n`` bytes of a repeated pattern, streamed."""

    class Files(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            size = int(self.path.strip("/").removesuffix(".bin"))
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            try:
                for at in range(0, size, len(CHUNK)):
                    self.wfile.write(CHUNK[: size - at])
            except OSError:
                pass  # the browser let go of a download

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Files)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _capture(library: Library, url: str, max_body: int) -> CaptureResult:
    async def run() -> CaptureResult:
        async with Capturer(library, concurrency=1, max_body_bytes=max_body) as cap:
            return await cap.capture(url, rules=RULES)

    return asyncio.run(run())


def test_a_250_mb_file_is_kept_whole(library: Library, files: str) -> None:
    size = 250_000_000
    res = _capture(library, f"{files}/{size}.bin", 256 << 20)
    assert res.ok, res.error
    with library.session() as s:
        snap = s.get(Snapshot, res.snapshot_id)
        assert snap is not None and snap.warc_file
        warc = library.abspath(snap.warc_file)
    assert warcio_check(warc).returncode == 0
    main = next(r for r in read_warc(warc) if r.uri == res.url and r.type == "response")
    assert len(main.payload) == size and "WARC-Truncated" not in main.warc
    expected = hashlib.sha256()
    for at in range(0, size, len(CHUNK)):
        expected.update(CHUNK[: size - at])
    assert hashlib.sha256(main.payload).digest() == expected.digest()


def test_a_file_over_the_limit_fails_and_says_why(library: Library, files: str) -> None:
    res = _capture(library, f"{files}/3000000.bin", 1_000_000)
    assert not res.ok
    assert res.error == "the page's body was not kept: 3000000 bytes, over the 1000000 byte limit"
    with library.session() as s:
        snap = s.get(Snapshot, res.snapshot_id)
        assert snap is not None and snap.state == SnapshotState.FAILED
        assert snap.provenance["error"] == res.error
