"""Every page of the captured corpus, exported to one WACZ, opens in the replay tools people
use: the real ReplayWeb.page (its npm package, served from 127.0.0.1, in Chromium) and pywb.

One export, one ReplayWeb.page, one browser; each page is visited in turn and must show the
text it showed when it was captured (script-built text too: the XHR'd list, the hash route,
what the workers fetched). The PDF is checked by what the tool serves for it (its bytes),
since a PDF has no DOM text to read.
"""

from __future__ import annotations

import contextlib
import json
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Frame, Page
from playwright.sync_api import Error as PlaywrightError

from archiver_app.export import Selection, export
from tests.helpers.corpus import REPORT_PDF, Corpus
from tests.helpers.replay_tools import ReplayWebPage, get, pywb
from tests.integration.fidelity.captured import Suite

pytestmark = pytest.mark.slow

#: Page name -> text its replay must show (the page's own, or what its scripts fetched).
EXPECTED = {
    "docs": "Welcome to the corpus documentation.",
    "spa": "gamma",
    "hash": "Only the guide route shows this.",
    "viewer": "PDF 765 bytes, %PDF-",
    "service-worker": "Service worker page",
    "lazy": "Gallery",
    "scroll": "page 1 item 3",
    "iframe": "Embedded",
    "workers": '{"from": "dedicated worker"}',
    "cache": '{"cached": true}',
}
#: What the iframe page's frame (from the corpus's second host) must show.
FRAME_TEXT = "Inside the frame"
NOT_FOUND = "Archived Page Not Found"  # ReplayWeb.page's page for a URL it cannot replay


@pytest.fixture(scope="module")
def wacz(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("fidelity-export") / "corpus.wacz"
    result = export(suite.lib, Selection(collection="default"), dest)
    assert result.pages == len(Corpus.PAGES) and not result.problems, result
    return dest


def _urls(suite: Suite) -> dict[str, str]:
    return {name: page.snapshot.url for name, page in suite.pages.items()}


def test_the_export_lists_every_page(suite: Suite, wacz: Path) -> None:
    with zipfile.ZipFile(wacz) as zf:
        lines = zf.read("pages/pages.jsonl").decode().splitlines()[1:]
    listed = sorted(json.loads(line)["url"] for line in lines)
    assert listed == sorted(_urls(suite).values())


def _texts(page: Page) -> str:
    """The text of every frame of ``page`` (the archived page sits in nested frames)."""
    out = []
    for frame in page.frames:
        try:
            out.append(str(frame.evaluate("document.body ? document.body.innerText : ''")))
        except PlaywrightError:  # a frame navigating away meanwhile
            continue
    return "\n".join(out)


def _shows(page: Page, wanted: list[str], timeout_s: float = 60) -> str:
    """Wait until every string of ``wanted`` is in some frame's text; return all texts."""
    seen = ""
    for _ in range(int(timeout_s * 4)):
        seen = _texts(page)
        if all(w in seen for w in wanted) or NOT_FOUND in seen:
            break
        page.wait_for_timeout(250)  # frames come and go: poll their text
    return seen


def _replayed_frame(page: Page, url: str) -> Frame | None:
    """The frame ReplayWeb.page shows the archived ``url`` in (its address ends with it)."""
    plain = url.split("#", 1)[0]
    return next((f for f in page.frames if f.url.split("#", 1)[0].endswith(plain)), None)


def test_every_page_renders_in_replaywebpage(
    suite: Suite, wacz: Path, replaywebpage: Path, browser: Browser
) -> None:
    rwp = ReplayWebPage(replaywebpage, wacz)
    before = suite.corpus.mark()
    context = browser.new_context()
    failures: dict[str, str] = {}
    try:
        page = context.new_page()
        for name, url in _urls(suite).items():
            if name == "pdf":
                continue
            wanted = [EXPECTED[name]] + ([FRAME_TEXT] if name == "iframe" else [])
            for attempt in range(2):
                page.goto(rwp.page_url(url))
                seen = _shows(page, wanted, timeout_s=45)
                if all(w in seen for w in wanted):
                    break
                # The first visit can come before ReplayWeb.page's service worker controls
                # the page (its frame then reaches our server: "not found"): once more.
                if attempt:
                    failures[name] = seen[-300:]
        # The PDF: the frame ReplayWeb.page opens for it gets the stored bytes back.
        page.goto(rwp.page_url(_urls(suite)["pdf"]))
        size: int | None = None
        for _ in range(120):  # until its frame is open and answers (30 s at most)
            frame = _replayed_frame(page, _urls(suite)["pdf"])
            if frame is not None:
                with contextlib.suppress(PlaywrightError):  # the frame still navigating
                    size = frame.evaluate(
                        "u => fetch(u).then(r => r.arrayBuffer()).then(b => b.byteLength)",
                        frame.url,
                    )
                    break
            page.wait_for_timeout(250)
        if size is None:
            failures["pdf"] = f"no frame for the PDF answered: {[f.url for f in page.frames]}"
        elif size != len(REPORT_PDF):
            failures["pdf"] = f"{size} bytes, not {len(REPORT_PDF)}"
    finally:
        context.close()
        rwp.close()
    assert not failures, failures
    assert rwp.server.requested("/archive.wacz"), "ReplayWeb.page never read the WACZ"
    reached = suite.corpus.requests_since(before)
    assert not reached, [(r.host, r.path) for r in reached]


def test_every_page_renders_in_pywb(
    suite: Suite, wacz: Path, browser: Browser, tmp_path: Path
) -> None:
    urls = _urls(suite)
    before = suite.corpus.mark()
    failures: dict[str, str] = {}
    with pywb(wacz, tmp_path / "pywb") as base:
        context = browser.new_context()
        try:
            page = context.new_page()
            for name, url in urls.items():
                if name == "pdf":
                    continue
                wanted = [EXPECTED[name]] + ([FRAME_TEXT] if name == "iframe" else [])
                page.goto(f"{base}2100mp_/{url}")
                seen = _shows(page, wanted, timeout_s=30)
                if not all(w in seen for w in wanted):
                    failures[name] = seen[-300:]
        finally:
            context.close()
        if get(f"{base}2100id_/{urls['pdf']}") != REPORT_PDF:
            failures["pdf"] = "pywb did not serve the stored PDF"
    assert not failures, failures
    # pywb is a proxy of the archive only: the corpus servers saw nothing of it.
    assert not suite.corpus.requests_since(before)
