"""An exported WACZ opens in the replay tools people use: every page renders its text in
the real ReplayWeb.page (in Chromium) and in pywb, and ``wacz validate`` accepts it.

One capture per module: real Chromium captures a small local site (text, an image, a page
reached through a 301), the library exports it as a WACZ, and each tool replays every page
of its ``pages.jsonl``. One browser for the module.
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, FrameLocator, Page, expect
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.export import Selection, export
from archiver_app.export.signing import Signing
from archiver_app.library import Library
from tests.helpers.replay_tools import BIN, ReplayWebPage, get, pywb
from tests.helpers.testsite import png
from tests.helpers.tsa import LocalTSA
from tests.helpers.webserver import LocalServer, Response

pytestmark = pytest.mark.slow

LOGO = png(24, 16, (200, 40, 40))
PAGES = {  # path -> (title, text the replayed page must show)
    "/": ("Home of the otters", "otters swim in the estuary"),
    "/about": ("About", "volunteers count otters every spring"),
    "/moved": ("New home", "the otters moved upstream"),  # 301 -> /new-home
}


NOT_FOUND = "Archived Page Not Found"  # ReplayWeb.page's page for a URL it cannot replay


def _html(title: str, text: str, extra: str = "") -> str:
    return (
        f"<!doctype html><html lang='en'><head><title>{title}</title></head>"
        f"<body><p id='text'>{text}</p>{extra}</body></html>"
    )


@pytest.fixture(scope="module")
def site() -> Iterator[LocalServer]:
    server = LocalServer().start()
    title, words = PAGES["/"]
    server.add_static("/", _html(title, words, "<img id='logo' src='/logo.png'>"))
    server.add_static("/about", _html(*PAGES["/about"]))
    server.routes["/moved"] = lambda _r: Response(301, b"", [("Location", "/new-home")])
    server.add_static("/new-home", _html(*PAGES["/moved"]))
    server.add_static("/logo.png", LOGO, "image/png")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def wacz(site: LocalServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export")
    with Library.open(root / "library", create=True) as lib:
        results = capture_urls(
            lib, [site.url(p) for p in PAGES], rules=PageRules(page_timeout=40, settle_seconds=0.2)
        )
        assert all(r.ok for r in results), [(r.url, r.error) for r in results]
        dest = root / "site.wacz"
        # Signed and timestamped (a local authority): ReplayWeb.page, pywb and wacz validate
        # must all still open it.
        tsa = LocalTSA(root / "tsa").start()
        try:
            signing = Signing(timestamp=tsa.url)
            result = export(lib, Selection(collection="default"), dest, sign=signing)
        finally:
            tsa.stop()
    assert result.pages == len(PAGES) and not result.problems, result
    assert signing.stamp is not None and signing.stamp.code == "stamped", signing.stamp
    return dest


def _pages(wacz: Path) -> list[dict[str, str]]:
    with zipfile.ZipFile(wacz) as zf:
        lines = zf.read("pages/pages.jsonl").decode().splitlines()
    return [json.loads(line) for line in lines[1:]]


def _expected(site: LocalServer, url: str) -> tuple[str, str]:
    return next(v for path, v in PAGES.items() if site.url(path) == url)


def _frames(page: Page) -> list[tuple[str, str]]:
    """Each frame's address and text, for a failure message."""
    out = []
    for frame in page.frames:
        try:
            body = frame.evaluate("document.body ? document.body.innerText : ''")
        except PlaywrightError as exc:
            body = f"({exc.message})"
        out.append((frame.url, str(body)[:200]))
    return out


def _replayed(page: Page) -> FrameLocator:
    """The archived page's frame: ReplayWeb.page's own frame holds it."""
    return page.frame_locator("replay-web-page iframe").frame_locator("iframe")


def test_every_page_renders_in_replaywebpage(
    replaywebpage: Path, wacz: Path, site: LocalServer, browser: Browser
) -> None:
    pages = _pages(wacz)
    assert sorted(p["url"] for p in pages) == sorted(site.url(p) for p in PAGES)
    rwp = ReplayWebPage(replaywebpage, wacz)
    context = browser.new_context()
    try:
        page = context.new_page()
        for entry in pages:
            title, words = _expected(site, entry["url"])
            assert entry["title"] == title
            for attempt in range(2):
                page.goto(rwp.page_url(entry["url"]))
                replayed = _replayed(page)
                shown = replayed.locator("#text").or_(replayed.get_by_text(NOT_FOUND))
                try:  # the first visit may come before the player controls the page
                    shown.wait_for(timeout=60_000 if attempt else 20_000)
                except PlaywrightTimeout as exc:
                    if attempt:
                        raise AssertionError(
                            f"{entry['url']} never rendered: {_frames(page)}"
                        ) from exc
                    continue  # ReplayWeb.page still loading the archive: open it again
                break
            assert shown.inner_text() == words, (
                entry["url"],
                replayed.locator("body").inner_text(),
            )
            if entry["url"] == site.url("/"):  # the image comes out of the WACZ too
                expect(replayed.locator("#logo")).to_have_js_property("naturalWidth", 24)
    finally:
        context.close()
        rwp.close()
    assert rwp.server.requested("/archive.wacz"), "ReplayWeb.page never read the WACZ"


def test_every_page_renders_in_pywb(wacz: Path, site: LocalServer, tmp_path: Path) -> None:
    with pywb(wacz, tmp_path / "pywb") as base:
        for entry in _pages(wacz):
            _title, words = _expected(site, entry["url"])
            # mp_: pywb rewrites the stored 301's Location into the archive; urllib follows it
            body = get(f"{base}2030mp_/{entry['url']}")
            assert body is not None and f'id="text">{words}</p>'.encode() in body, entry
        assert get(f"{base}2030id_/{site.url('/logo.png')}") == LOGO


def test_the_export_is_signed_and_intact(wacz: Path) -> None:
    from archiver_app.export.signing import verify_wacz
    from archiver_app.export.timestamps import load_roots

    report = verify_wacz(wacz, tsa_roots=load_roots(wacz.parent / "tsa" / "ca.pem"))
    assert report.ok and report.signed and report.signature_valid, report.problems
    assert report.timestamp.state == "valid", report.timestamp
    assert report.files_checked == 3  # the WARC, the index and the pages list


def test_wacz_validate_accepts_it(wacz: Path) -> None:
    check = subprocess.run(
        [str(BIN / "wacz"), "validate", "-f", str(wacz)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert check.returncode == 0 and "valid" in check.stdout, check.stdout + check.stderr
