"""Pages that send themselves on, during their capture, to an address that does not answer:
the capture keeps the page's own title and text, never Chromium's error page.

They used to get the error page's title ("127.0.0.1") and text ("This site can't be reached
… refused to connect"), or none at all, marked "ok 200 fallback" and nothing more; a page
whose frames failed to load had "127.0.0.1 refused to connect." in its text.

Real Chromium against a local server (tests/helpers/webserver.py).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app.capture.engine import Capturer, CaptureResult, PageRules
from archiver_app.crawl.fetcher import FetchResult
from archiver_app.crawl.worker import progress_line
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.webserver import LocalServer

pytestmark = pytest.mark.slow

RULES = PageRules(page_timeout=30, settle_seconds=1.0, autoscroll=True)

PAGE = """<!doctype html><html><head><title>{name} Page</title>{head}</head>
<body><h1>{name} heading</h1><p>Own text of the {name} page.</p>{body}</body></html>"""

#: how each page sends itself on (after 1 to 1.5 seconds), to ``{gone}``
LEAVES = {
    "href": ("", "<script>setTimeout(() => {{ location.href = '{gone}/href' }}, 1000)</script>"),
    "open": ("", "<script>setTimeout(() => window.open('{gone}/open', '_self'), 1200)</script>"),
    "meta": ('<meta http-equiv=refresh content="1;url={gone}/meta">', ""),
    "form": (
        "",
        "<form id=f method=get action='{gone}/form'><input name=q value=1></form>"
        "<script>setTimeout(() => document.getElementById('f').submit(), 1500)</script>",
    ),
}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server() -> Iterator[tuple[LocalServer, str]]:
    gone = f"http://127.0.0.1:{_closed_port()}"
    s = LocalServer().start()
    for name, (head, body) in LEAVES.items():
        html = PAGE.format(name=name.title(), head=head.format(gone=gone), body=body)
        s.add_static(f"/{name}", html.replace("{gone}", gone).encode())
    frames = f"<iframe src='{gone}/f1'></iframe><iframe src='{gone}/f2'></iframe>"
    s.add_static("/frames", PAGE.format(name="Frames", head="", body=frames).encode())
    try:
        yield s, gone
    finally:
        s.stop()


def _capture(lib: Library, urls: list[str]) -> list[CaptureResult]:
    async def run() -> list[CaptureResult]:
        async with Capturer(lib, concurrency=2) as cap:
            return list(await asyncio.gather(*(cap.capture(u, rules=RULES) for u in urls)))

    return asyncio.run(run())


def test_a_page_that_leaves_for_an_address_that_does_not_answer_keeps_its_own_text(
    server: tuple[LocalServer, str], tmp_path: Path
) -> None:
    site, gone = server
    lib = Library.open(tmp_path / "lib")
    try:
        results = _capture(lib, [site.url(f"/{n}") for n in [*LEAVES, "frames"]])
        with lib.session() as s:
            snaps = {r.url: s.get(Snapshot, r.snapshot_id) for r in results}
            rows = {u: (x.title, x.snippet, x.provenance) for u, x in snaps.items() if x}
            folders = {u: lib.abspath(x.folder) for u, x in snaps.items() if x}
    finally:
        lib.close()
    for result in results:
        assert result.ok, result.error
        name = result.url.rsplit("/", 1)[1]
        title, snippet, provenance = rows[result.url]
        text = (folders[result.url] / "text.txt").read_text("utf-8")
        assert title == f"{name.title()} Page", (name, title)
        assert f"Own text of the {name.title()} page." in text, (name, text)
        assert "refused to connect" not in text and "refused to connect" not in (snippet or "")
        assert result.final_url == site.url(f"/{name}")
        if name == "frames":
            continue
        # no view of Chromium's error page is kept as the page's
        assert not (folders[result.url] / "screenshot.png").exists()
        assert not (folders[result.url] / "dom.html").exists()
        to = f"{gone}/{name}" + ("?q=1" if name == "form" else "")
        remark = (
            f"the page went on to {to} during capture; "
            "its title and text are taken from the archived HTML"
        )
        assert result.remark == remark
        assert provenance["fidelity_reasons"] == [remark]
        line = progress_line(
            FetchResult(result.url, result.final_url, True, 200, fidelity="fallback", remark=remark)
        )
        assert line.endswith(f"fallback {result.url}: {remark}")
