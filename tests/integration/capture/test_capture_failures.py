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
from tests.helpers.testsite import LocalSite, pdf
from tests.helpers.warcs import Rec, read_warc, warcio_check
from tests.helpers.webserver import Response

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
                "slow": test_site.url("/slow.html"),
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
    # a page whose load event never fires is kept, as a fallback capture saying why
    slow = results["slow"]
    assert slow.ok and slow.fidelity == "fallback" and slow.http_status == 200, slow.error
    assert any(r.url.endswith("/img/a.png") and r.status == 200 for r in slow.resources)
    assert cap.launches == 2

    with library.session() as s:
        snaps = {snap.id: snap for snap in s.scalars(select(Snapshot)).all()}
    for key in ("dns", "refused", "tls", "hang", "huge", "crash"):
        snap = snaps[results[key].snapshot_id or -1]
        assert snap.state == "failed", key
        assert expected[key] in snap.provenance["error"], key
    slow_row = snaps[slow.snapshot_id or -1]
    assert slow_row.state == "complete" and slow_row.capture_fidelity == "fallback"
    assert "the load event did not fire in time" in slow_row.provenance["fidelity_reasons"]
    # every WARC written, even for failed pages, is valid
    warcs = list(library.root.rglob("*.warc.gz*"))
    assert len(warcs) == 8
    for warc in warcs:
        check = warcio_check(warc)
        assert check.returncode == 0, (warc, check.stdout)
    huge = library.abspath(snaps[results["huge"].snapshot_id or -1].warc_file or "")
    truncated = [r for r in read_warc(huge) if r.type == "response"]
    assert truncated[0].warc["WARC-Truncated"] == "length"
    assert huge.stat().st_size < 1 << 20


def test_a_page_over_the_size_limit_fails_as_the_limit_is_passed(
    library: Library, test_site: LocalSite
) -> None:
    """/huge streams its document past the body limit: the capture fails with the same error,
    row and WARC as before, without waiting out the page's time limit and then screenshots
    that a failed capture never keeps (with this 20 s limit it took 27 s; now 1-4 s)."""
    rules = PageRules(page_timeout=20, settle_seconds=0.1)

    async def run() -> CaptureResult:
        async with Capturer(library, max_body_bytes=1 << 20) as cap:
            return await cap.capture(test_site.url("/huge"), rules=rules)

    res = asyncio.run(run())
    assert not res.ok and res.error == "the response is larger than the 1048576 byte limit"
    assert res.duration < 10, res.duration  # it took 27 s (the load ran to the 20 s limit)
    with library.session() as s:
        snap = s.get(Snapshot, res.snapshot_id)
        assert snap is not None and snap.warc_file
        state, provenance, snippet = snap.state, snap.provenance, snap.snippet
        warc = library.abspath(snap.warc_file)
    assert state == "failed" and provenance["error"] == res.error
    reasons = provenance["fidelity_reasons"]
    assert not any("screenshot" in reason for reason in reasons), reasons
    # the row keeps the text the tab showed (its snippet), unless it took over 5 s to read
    unread = "text extraction failed: TimeoutError" in reasons
    assert unread or (snippet and snippet.startswith("xxx")), (snippet, reasons)
    assert sorted(p.name for p in warc.parent.iterdir()) == ["capture.warc.gz", "index.json"]
    assert warcio_check(warc).returncode == 0
    responses = [r for r in read_warc(warc) if r.type == "response"]
    assert [(r.uri, r.warc["WARC-Truncated"], r.payload) for r in responses] == [
        (res.url, "length", b"")
    ]


def test_a_viewer_document_is_fetched_again_only_when_that_can_stand_in(
    library: Library, test_site: LocalSite
) -> None:
    """A PDF shown by the browser's viewer is fetched a second time for its bytes: not when
    it declared more bytes than the limit, and its second answer is kept only with the
    status the browser saw (an expired link's error page is not the document)."""
    big = pdf("Big") + b"%" * 300_000  # bytes after %%EOF: still a PDF to the viewer
    test_site.main.routes["/big.pdf"] = lambda _r: Response(200, big, [], "application/pdf")
    answers = iter([Response(200, pdf("Once"), [], "application/pdf")])
    expired = Response(403, b"<h1>this link has expired</h1>", [], "text/html")
    test_site.main.routes["/once.pdf"] = lambda _r: next(answers, expired)
    small = pdf("Small")
    test_site.main.routes["/small.pdf"] = lambda _r: Response(200, small, [], "application/pdf")
    rules = PageRules(page_timeout=15, settle_seconds=0.1)

    async def run() -> list[CaptureResult]:
        async with Capturer(library, concurrency=1, max_body_bytes=100_000) as cap:
            return [
                await cap.capture(test_site.url(p), rules=rules)
                for p in ("/big.pdf", "/once.pdf", "/small.pdf")
            ]

    results = asyncio.run(run())

    def main_record(res: CaptureResult) -> Rec:
        with library.session() as s:
            snap = s.get(Snapshot, res.snapshot_id)
            assert snap is not None and snap.warc_file
            warc = library.abspath(snap.warc_file)
        assert warcio_check(warc).returncode == 0
        return next(r for r in read_warc(warc) if r.uri == res.url and r.type == "response")

    big_res, once_res, small_res = results
    assert len(test_site.main.requested("/big.pdf")) == 1  # never downloaded twice
    big_rec = main_record(big_res)
    assert big_rec.payload == b"" and big_rec.warc["WARC-Truncated"]
    assert len(test_site.main.requested("/once.pdf")) == 2  # asked again, got the 403
    once_rec = main_record(once_res)
    assert once_rec.http_status == 200 and once_rec.payload == b""
    assert once_rec.warc["WARC-Truncated"]
    assert small_res.ok, small_res.error
    assert main_record(small_res).payload == small  # the ordinary case still works
