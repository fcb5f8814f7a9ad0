"""Bad input and bad sites: each page fails alone with a clear error; WARCs stay valid."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.capture.engine import Capturer, CaptureResult, PageRules
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.testsite import LocalSite
from tests.helpers.warcs import read_warc, warcio_check

pytestmark = pytest.mark.slow


@pytest.fixture
def tls_url(tmp_path: Path) -> Iterator[str]:
    """An HTTPS server with a self-signed certificate (the browser must refuse it)."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip

    class Hello(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Hello)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _browser_pids() -> list[int]:
    """Chromium main processes started (through Playwright's driver) by this process."""
    parents: dict[int, int] = {}
    cmdlines: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        cmdlines[int(entry.name)] = cmd

    def descends(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return [
        pid
        for pid, cmd in cmdlines.items()
        if "chrom" in cmd.split(" ")[0] and "--type=" not in cmd and descends(pid)
    ]


def test_each_bad_page_fails_alone_with_a_clear_error(
    library: Library, test_site: LocalSite, tls_url: str
) -> None:
    rules = PageRules(page_timeout=6, settle_seconds=0.1)
    results: dict[str, CaptureResult] = {}

    async def run() -> Capturer:
        async with Capturer(library, concurrency=2, max_body_bytes=1 << 20) as cap:
            cases = {
                "malformed": "http://exa mple.com/",
                "no_scheme": "example.com/page",
                "javascript": "javascript:alert(1)",
                "file": "file:///etc/passwd",
                "dns": "http://no-such-host.invalid/",
                "refused": f"http://127.0.0.1:{_closed_port()}/",
                "tls": tls_url,
                "hang": test_site.url("/hang"),
                "huge": test_site.url("/huge"),
            }
            done = await asyncio.gather(*(cap.capture(u, rules=rules) for u in cases.values()))
            results.update(zip(cases, done, strict=True))

            # the browser dies in the middle of a page ...
            crash = asyncio.ensure_future(
                cap.capture(test_site.url("/hang"), rules=PageRules(page_timeout=60))
            )
            deadline = time.monotonic() + 30
            while len(test_site.main.requested("/hang")) < 2 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            pids = _browser_pids()
            assert pids, "no browser process found"
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            results["crash"] = await crash
            # ... and the next page is captured by a new one
            results["after"] = await cap.capture(test_site.url("/plain.txt"), rules=rules)
            return cap

    cap = asyncio.run(run())
    errors = {k: (r.ok, r.error) for k, r in results.items()}
    expected = {
        "malformed": "white space",
        "no_scheme": "no scheme",
        "javascript": "unsupported URL scheme 'javascript'",
        "file": "unsupported URL scheme 'file'",
        "dns": "could not be resolved",
        "refused": "refused",
        "tls": "TLS error",
        "hang": "did not load within 6 s",
        "huge": "larger than the 1048576 byte limit",
        "crash": "browser crashed",
    }
    for key, needle in expected.items():
        ok, error = errors[key]
        assert not ok and error and needle in error, (key, error)
    for key in ("malformed", "no_scheme", "javascript", "file"):
        assert results[key].snapshot_id is None  # refused before anything was written
    assert results["after"].ok, results["after"].error
    assert cap.launches == 2

    with library.session() as s:
        snaps = {snap.id: snap for snap in s.scalars(select(Snapshot)).all()}
    for key in ("dns", "refused", "tls", "hang", "huge", "crash"):
        snap = snaps[results[key].snapshot_id or -1]
        assert snap.state == "failed", key
        assert expected[key] in snap.provenance["error"], key
    # every WARC written, even for failed pages, is valid
    warcs = list(library.root.rglob("*.warc.gz*"))
    assert len(warcs) == 7
    for warc in warcs:
        check = warcio_check(warc)
        assert check.returncode == 0, (warc, check.stdout)
    huge = library.abspath(snaps[results["huge"].snapshot_id or -1].warc_file or "")
    truncated = [r for r in read_warc(huge) if r.type == "response"]
    assert truncated[0].warc["WARC-Truncated"] == "length"
    assert huge.stat().st_size < 1 << 20
