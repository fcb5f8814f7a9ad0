"""Other tools replaying our exports in tests: the real ReplayWeb.page, and pywb.

``packaging/linux/install-system-deps.sh replaywebpage`` puts the pinned npm package in
``.tools/replaywebpage/package`` of the checkout (``test`` mode does it too). The
``replaywebpage`` fixture runs that step (quick when already done), skips with the reason
when npm is missing outside CI, and fails in CI (``CI=true``), where it must be there.

:class:`ReplayWebPage` serves, on 127.0.0.1 (a secure context: service workers run there),
an embedding page with ``<replay-web-page source=...>``, the package's ``ui.js`` and its
service worker at ``/replay/sw.js``, and the WACZ with byte ranges, as a web server would.

:func:`pywb` runs pywb's ``wayback`` on 127.0.0.1 over a collection made from a WACZ.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from html import escape
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.helpers.webserver import LocalServer, Request, Response

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "packaging" / "linux" / "install-system-deps.sh"
PACKAGE = ROOT / ".tools" / "replaywebpage" / "package"

EMBED = """<!doctype html><html><head><meta charset="utf-8">
<script src="/ui.js"></script></head>
<body style="margin:0"><replay-web-page source="/archive.wacz" url="{url}"{ts} embed="replayonly"
 replayBase="/replay/" style="display:block;width:100vw;height:100vh"></replay-web-page>
</body></html>"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium for a module's tests (they open ReplayWeb.page, pywb, serve in it)."""
    from archiver_app.capture.browser import launch_options, require_browser

    with sync_playwright() as pw:
        b = pw.chromium.launch(**launch_options(require_browser()))  # type: ignore[arg-type]
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="session")
def replaywebpage() -> Path:
    """The installed ReplayWeb.page package folder (``index.html``, ``sw.js``, ``ui.js``)."""
    done = subprocess.run(
        ["bash", str(SCRIPT), "replaywebpage"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode == 0 and (PACKAGE / "sw.js").is_file():
        return PACKAGE
    why = f"ReplayWeb.page is not installed ({SCRIPT} replaywebpage: {done.stderr.strip()})"
    if shutil.which("npm") is None and os.environ.get("CI", "").lower() != "true":
        pytest.skip(f"npm is missing, so ReplayWeb.page cannot be installed ({SCRIPT} test)")
    pytest.fail(why)


def serve_ranges(data: bytes, content_type: str, req: Request) -> Response:
    """``data`` whole, or the one byte range ``req`` asks for (``a-b``, ``a-`` or ``-n``)."""
    base = [("Accept-Ranges", "bytes")]
    header = req.headers.get("Range") or req.headers.get("range") or ""
    if not header.startswith("bytes="):
        return Response(200, data, base, content_type)
    first, _, last = header[6:].split(",")[0].strip().partition("-")
    size = len(data)
    if first:
        start, end = int(first), min(int(last) if last else size - 1, size - 1)
    else:
        start, end = max(size - int(last), 0), size - 1
    if start > end:
        return Response(416, b"", [*base, ("Content-Range", f"bytes */{size}")], content_type)
    part = data[start : end + 1]
    headers = [*base, ("Content-Range", f"bytes {start}-{end}/{size}")]
    return Response(206, part, headers, content_type)


class ReplayWebPage:
    """Serve ReplayWeb.page from ``package`` and ``wacz`` at ``/archive.wacz``."""

    def __init__(self, package: Path, wacz: Path) -> None:
        ui = (package / "ui.js").read_bytes()
        sw = (package / "sw.js").read_bytes()
        archive = wacz.read_bytes()
        js = "application/javascript"
        self.server = LocalServer(
            {
                "/": self._embed,
                "/ui.js": lambda _r: Response(200, ui, [], js),
                "/replay/sw.js": lambda _r: Response(200, sw, [], js),
                "/archive.wacz": lambda r: serve_ranges(archive, "application/wacz", r),
            }
        ).start()

    @staticmethod
    def _embed(req: Request) -> Response:
        query = parse_qs(urlsplit(req.path).query)
        url = query.get("url", [""])[0]
        ts = "".join(f' ts="{escape(t, quote=True)}"' for t in query.get("ts", [])[:1])
        return Response(200, EMBED.format(url=escape(url, quote=True), ts=ts).encode())

    def page_url(self, archived_url: str, ts: str | None = None) -> str:
        """The address that shows ``archived_url`` replayed from the WACZ (at ``ts``, 14
        digits, as from the pages list; else its latest capture)."""
        at = "" if ts is None else "&ts=" + quote(ts, safe="")
        return self.server.url("/?url=" + quote(archived_url, safe="") + at)

    def close(self) -> None:
        self.server.stop()


BIN = Path(sys.executable).parent


def get(url: str) -> bytes | None:
    """The body at ``url``, or None when nothing answers (yet)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return bytes(resp.read())
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def pywb(wacz: Path, workdir: Path, collection: str = "rt") -> Iterator[str]:
    """pywb's ``wayback`` replaying ``wacz`` (unpacked into a collection in ``workdir``);
    yields the collection's base URL, ``http://127.0.0.1:PORT/<collection>/``."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    workdir.mkdir(parents=True, exist_ok=True)
    # wb-manager init, then wb-manager add --unpack-wacz: its own entry point, both in one
    # process (starting Python and importing pywb is most of each command's time)
    manage = (
        "import sys; from pywb.manager.manager import main; "
        "main(['init', sys.argv[1]]); main(['add', '--unpack-wacz', *sys.argv[1:]])"
    )
    subprocess.run(
        [sys.executable, "-c", manage, collection, str(wacz)],
        cwd=workdir,
        check=True,
        capture_output=True,
        env=env,
    )
    port = free_port()
    proc = subprocess.Popen(
        [str(BIN / "wayback"), "-b", "127.0.0.1", "-p", str(port)],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    base = f"http://127.0.0.1:{port}/{collection}/"
    try:
        deadline = time.monotonic() + 60
        while get(base) is None:  # a subprocess: nothing to wait on but its port
            assert proc.poll() is None, "pywb exited"
            assert time.monotonic() < deadline, "pywb did not start"
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)
