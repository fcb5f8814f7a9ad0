"""Fidelity on the real web: capture every page of the local corpus (tests/helpers/corpus.py)
with the system Chromium, then check each page:

1. every response the browser received from the network is in the WARC exactly once (the
   servers' request logs against the WARC's response and revisit records; a body the
   recorder fetched a second time, as noted in the snapshot's provenance, counts once);
2. replaying it in the app reaches no network (the corpus servers see no request);
3. the app's replay screenshot matches the same engine's rendering of the live page on at
   least 99 % of pixels. Both images come from QtWebEngine: the capture's own screenshot
   comes from another Chromium version and is not a fair reference (fonts, antialiasing).
   Not compared: the PDF (the app shows it with QtPdf, not QtWebEngine; checked by page
   count and title instead) and the service-worker page (its worker runs live but not under
   the replay schemes, so the page's status line differs);
4. a hash-routed page replays its own route; an archived PDF is shown by the app offline;
5. every page, exported to one WACZ, opens in the replay tools people use: the real
   ReplayWeb.page (its npm package, served from 127.0.0.1, in Chromium) and pywb. One
   export, one ReplayWeb.page, one browser; each page is visited in turn and must show the
   text it showed when it was captured (script-built text too: the XHR'd list, the hash
   route, what the workers fetched). The PDF is checked by what the tool serves for it (its
   bytes), since a PDF has no DOM text to read.

One module (the suite's longest): with ``--dist loadfile`` a module is one worker's, and the
corpus capture, a session fixture, is made once per worker that needs it.
"""

from __future__ import annotations

import contextlib
import json
import re
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image, ImageChops
from playwright.sync_api import Browser, Frame, Page
from playwright.sync_api import Error as PlaywrightError
from PySide6.QtPdf import QPdfDocument
from pytestqt.qtbot import QtBot

from archiver_app.export import Selection, export
from archiver_app.gui.replay.network import BLOCKED, NOT_ARCHIVED, REDIRECT, SERVED
from tests.helpers.corpus import PDF_TITLE, REPORT_PDF, Corpus
from tests.helpers.replay_tools import ReplayWebPage, get, pywb
from tests.helpers.warcs import read_warc
from tests.integration.fidelity.captured import Captured, Suite
from tests.integration.fidelity.live_render import render_live_apart, render_replay

pytestmark = pytest.mark.slow

PAGES = list(Corpus.PAGES)
NOT_PIXEL_COMPARED = {"pdf", "service-worker"}
#: A pixel "matches" when no channel differs by more than this (subpixel antialiasing).
PIXEL_TOLERANCE = 8


def _recorded(suite: Suite, page: Captured) -> Counter[str]:
    assert page.snapshot.warc_file
    records = read_warc(suite.lib.abspath(page.snapshot.warc_file))
    return Counter(r.uri for r in records if r.type in ("response", "revisit"))


def _fetched_again(page: Captured) -> set[str]:
    """URLs whose body the recorder fetched a second time (provenance notes say so)."""
    notes = (page.snapshot.provenance or {}).get("notes", [])
    return {
        note.split(": ", 1)[0]
        for note in notes
        if re.search(r": (body refetched|fetched again)", note)
    }


@pytest.mark.parametrize("name", PAGES)
def test_every_network_response_is_in_the_warc_exactly_once(suite: Suite, name: str) -> None:
    page = suite.pages[name]
    assert page.result.ok, page.result.error
    recorded = _recorded(suite, page)
    twice = {u: n for u, n in recorded.items() if n > 1 and page.network[u] < n}
    assert not twice, f"recorded more often than fetched: {twice}"
    again = _fetched_again(page)
    expected = page.network - Counter(dict.fromkeys(again, 1))
    missing = expected - recorded
    assert not missing, f"fetched from the network but not in the WARC: {dict(missing)}"
    invented = recorded - page.network
    assert not invented, f"in the WARC but never fetched: {dict(invented)}"


def _agreement(one: Image.Image, two: Image.Image) -> tuple[float, tuple[object, ...]]:
    a, b = one.convert("RGB"), two.convert("RGB")
    box = (0, 0, min(a.width, b.width), min(a.height, b.height))
    diff = ImageChops.difference(a.crop(box), b.crop(box))
    red, green, blue = diff.split()
    worst = ImageChops.lighter(red, ImageChops.lighter(green, blue))
    histogram = worst.histogram()
    # pixels only one image has (a taller page) count as mismatches
    total = max(a.width, b.width) * max(a.height, b.height)
    return sum(histogram[: PIXEL_TOLERANCE + 1]) / total, (a.size, b.size)


@pytest.fixture(scope="module")
def live_shots(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each pixel-compared page rendered live in QtWebEngine (one child process for all:
    starting one was most of each page's time), by page name."""
    folder = tmp_path_factory.mktemp("fidelity-live")
    shots = {name: folder / f"{name}.png" for name in PAGES if name not in NOT_PIXEL_COMPARED}
    render_live_apart({suite.pages[name].snapshot.url: out for name, out in shots.items()})
    return shots


@pytest.mark.parametrize("name", PAGES)
def test_replay_is_offline_and_matches_the_live_page_in_the_same_engine(
    qtbot: QtBot, suite: Suite, name: str, tmp_path: Path, live_shots: dict[str, Path]
) -> None:
    page = suite.pages[name]
    url = page.snapshot.url
    live = name not in NOT_PIXEL_COMPARED
    before = suite.corpus.mark()
    replay, widget = render_replay(suite.lib, url)
    qtbot.addWidget(widget)
    replay.save(str(tmp_path / "replay.png"))
    reached = suite.corpus.requests_since(before)
    assert not reached, [(r.host, r.path) for r in reached]
    assert widget.current is not None, "the page was not served from the archive"
    outcomes = {e.outcome for e in widget.log.entries()}
    assert outcomes <= {SERVED, REDIRECT, NOT_ARCHIVED, BLOCKED}, outcomes
    if not live:
        return
    with Image.open(live_shots[name]) as one, Image.open(tmp_path / "replay.png") as two:
        share, sizes = _agreement(one, two)
    print(f"\n{name}: {share:.4f} of pixels match the live page in QtWebEngine, {sizes}")
    assert share >= 0.99, (share, sizes)


def test_a_hash_routed_page_keeps_its_route(qtbot: QtBot, suite: Suite) -> None:
    page = suite.pages["hash"]
    assert page.snapshot.url == suite.corpus.url("/hash/#/guide")
    assert page.snapshot.title == "Guide - Hash docs"
    assert page.result.final_url.endswith("#/guide")
    text_file = suite.lib.abspath(page.snapshot.folder) / "text.txt"
    assert "Only the guide route shows this." in text_file.read_text()
    # the request carries no fragment: the WARC has the document once, without it
    recorded = _recorded(suite, page)
    assert recorded[suite.corpus.url("/hash/")] == 1
    assert not [u for u in recorded if "#" in u]
    from archiver_app.gui.replay.widget import ReplayWidget

    widget = ReplayWidget(suite.lib)
    qtbot.addWidget(widget)
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(page.snapshot.url)
    found: list[object] = []

    def route_shown() -> bool:
        widget.page.runJavaScript("document.body.innerText", 0, found.append)
        return bool(found) and "Only the guide route shows this." in str(found[-1])

    qtbot.waitUntil(route_shown, timeout=15_000)


def _replay_text(qtbot: QtBot, suite: Suite, url: str, wanted: list[str]) -> list[str]:
    """Open ``url`` in the app's replay view until every string of ``wanted`` shows in its
    text; returns the URLs the view had served from the archive."""
    from archiver_app.gui.replay.widget import ReplayWidget

    widget = ReplayWidget(suite.lib)
    qtbot.addWidget(widget)
    widget.open(url)
    found: list[object] = []

    def shown() -> bool:
        widget.page.runJavaScript("document.body.innerText", 0, found.append)
        return bool(found) and all(w in str(found[-1]) for w in wanted)

    qtbot.waitUntil(shown, timeout=20_000)
    return [e.url for e in widget.log.entries() if e.outcome == SERVED]


def test_workers_replay_from_the_archive(qtbot: QtBot, suite: Suite) -> None:
    before = suite.corpus.mark()
    served = _replay_text(
        qtbot,
        suite,
        suite.pages["workers"].snapshot.url,
        ['{"from": "dedicated worker"}', '{"from": "shared worker"}'],
    )
    for path in ("/workers/dedicated-lib.js", "/workers/dedicated.json", "/workers/shared.json"):
        assert suite.corpus.url(path) in served, (path, served)
    served = _replay_text(
        qtbot, suite, suite.pages["viewer"].snapshot.url, ["PDF 765 bytes, %PDF-"]
    )
    assert suite.corpus.url("/viewer/pdf-lib.js") in served
    assert suite.corpus.requests_since(before) == []


def test_content_loaded_by_scrolling_is_captured(suite: Suite) -> None:
    lazy = _recorded(suite, suite.pages["lazy"])
    assert lazy[suite.corpus.url("/lazy/1.png")] == 1 and lazy[suite.corpus.url("/lazy/2.png")] == 1
    feed = _recorded(suite, suite.pages["scroll"])
    pages = [u for u in feed if "/scroll/items?page=" in u]
    assert len(pages) >= 2, pages  # the first page, and more as the capture scrolled


def test_an_archived_pdf_is_shown_by_the_app_offline(qtbot: QtBot, suite: Suite) -> None:
    from archiver_app.gui.replay.widget import ReplayWidget

    page = suite.pages["pdf"]
    before = suite.corpus.mark()
    widget = ReplayWidget(suite.lib)
    qtbot.addWidget(widget)
    widget.open(page.snapshot.url)
    qtbot.waitUntil(lambda: widget.stack.currentWidget() is widget.pdf_view, timeout=20_000)
    qtbot.waitUntil(lambda: widget.pdf_view.page_count == 1, timeout=10_000)
    assert widget.pdf_view.document.metaData(QPdfDocument.MetaDataField.Title) == PDF_TITLE
    widget.show_screenshot(True)
    widget.show_screenshot(False)
    assert widget.stack.currentWidget() is widget.pdf_view
    assert suite.corpus.requests_since(before) == []


#: Page name -> text its replay in ReplayWeb.page and pywb must show (the page's own, or
#: what its scripts fetched).
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
