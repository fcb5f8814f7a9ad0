"""Hostile archived pages cannot reach the live web, and the view stays responsive.

The archived pages claim the host and port of a real "live" local server; every way a
page might reach it (fetch, XHR, WebSocket, beacon, window.open, iframes, prefetch, form
submission, navigation) must end in the archive, never on that server.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.network import BLOCKED, NOT_ARCHIVED, SERVED
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.gui_fixtures import run_js
from tests.helpers.webserver import LocalServer

HOSTILE = """<!doctype html><html><head><title>hostile</title>
<link rel="prefetch" href="{live}/leak-prefetch">
<link rel="stylesheet" href="//127.0.0.1:{port}/leak-protocol-relative.css">
</head><body><p id="p">hostile page</p>
<img src="file:///etc/passwd" id="passwd">
<img src="{live}/leak-img.png">
<iframe src="{live}/leak-frame"></iframe>
<script>
fetch('{live}/leak-fetch').catch(function () {{}});
fetch('/leak-relative', {{method: 'POST', body: 'x'}}).catch(function () {{}});
var x = new XMLHttpRequest(); x.open('GET', '{live}/leak-xhr'); x.send();
try {{ new WebSocket('ws://127.0.0.1:{port}/leak-ws'); }} catch (e) {{}}
try {{ navigator.sendBeacon('{live}/leak-beacon', 'data'); }} catch (e) {{}}
try {{ new EventSource('{live}/leak-events'); }} catch (e) {{}}
window.hostileWindow = window.open('{live}/leak-window');
</script></body></html>"""
FORM = """<!doctype html><html><body>
<form id="f" method="post" action="{live}/leak-form"><input name="a" value="1"></form>
<script>document.getElementById('f').submit();</script></body></html>"""
NAVIGATE = """<!doctype html><html><body><script>
location.href = 'http://not-archived.example/leak';</script></body></html>"""


@pytest.fixture
def live() -> Iterator[LocalServer]:
    server = LocalServer()
    server.add_static("/", "<p>LIVE</p>")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def widget(replay_tab: ReplayWidget) -> ReplayWidget:
    return replay_tab


def test_hostile_pages_never_reach_the_live_server(
    qtbot: QtBot, library: Library, widget: ReplayWidget, live: LocalServer
) -> None:
    origin = f"http://127.0.0.1:{live.port}"
    w = ArchiveWriter(library)
    w.response(f"{origin}/hostile", HOSTILE.format(live=origin, port=live.port), at=at(2024))
    w.response(f"{origin}/form", FORM.format(live=origin), at=at(2024))
    w.response(f"{origin}/navigate", NAVIGATE, at=at(2024))
    w.response(f"{origin}/", "<p>ARCHIVED</p>", at=at(2024))
    w.commit()

    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(f"{origin}/hostile")
    log = widget.log
    qtbot.waitUntil(lambda: any("leak-ws" in e.url for e in log.entries()), timeout=10_000)
    qtbot.waitUntil(lambda: any("leak-fetch" in e.url for e in log.entries()), timeout=10_000)
    qtbot.waitUntil(lambda: any("passwd" in e.url for e in log.entries()), timeout=10_000)
    entries = {e.url: e.outcome for e in log.entries()}
    assert entries[f"{origin}/hostile"] == SERVED
    assert entries[f"{origin}/leak-fetch"] == NOT_ARCHIVED  # answered by the archive
    assert entries["file:///etc/passwd"] == BLOCKED
    assert entries[f"ws://127.0.0.1:{live.port}/leak-ws"] == BLOCKED
    # window.open is refused by the popup blocker (JavascriptCanOpenWindows is off).
    assert run_js(qtbot, widget, "window.hostileWindow === null") is True
    assert f"{origin}/leak-window" not in entries
    assert run_js(qtbot, widget, "document.getElementById('passwd').naturalWidth") == 0

    # A form posting to the live host, then a script navigating to an unarchived site.
    for path, final in (("/form", "/leak-form"), ("/navigate", "http://not-archived.example")):
        with qtbot.waitSignal(
            widget.urlChanged, timeout=20_000, check_params_cb=lambda u, f=final: f in u
        ):
            widget.open(f"{origin}{path}")
        qtbot.waitUntil(lambda: not widget.page.isLoading(), timeout=20_000)
        kind = run_js(qtbot, widget, "document.getElementById('archiver-message').dataset.kind")
        assert kind == "not-archived"

    # Still responsive, still offline: the archived root, not the live one.
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(f"{origin}/")
    assert run_js(qtbot, widget, "document.body.innerText") == "ARCHIVED"
    assert live.requests == [], [r.path for r in live.requests]


def test_serve_keeps_refresh_links_and_error_pages_in_the_archive(
    library: Library, live: LocalServer
) -> None:
    """``archiver serve`` in a real browser: a stored ``Refresh`` header, an upper-case
    ``HTTPS://`` link and links on a 404 page all lead back into the archive."""
    from playwright.sync_api import sync_playwright

    from archiver_app.capture.browser import launch_options, require_browser
    from archiver_app.replay.server import ReplayServer

    origin = f"http://127.0.0.1:{live.port}"
    w = ArchiveWriter(library)
    w.response(
        f"{origin}/refresh",
        "<p>about to refresh</p>",
        at=at(2024),
        headers=[("Refresh", f"0; url={origin}/refreshed")],
    )
    w.response(f"{origin}/refreshed", "<p id='p'>REFRESHED</p>", at=at(2024))
    w.response(
        f"{origin}/upper",
        f'<a id="a" href="{origin.upper()}/up">up</a>',
        at=at(2024),
    )
    w.response(
        f"{origin}/missing", f"<a id='a' href='{origin}/gone'>x</a>", at=at(2024), status=404
    )
    w.commit()
    srv = ReplayServer(library).start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(**launch_options(require_browser()))  # type: ignore[arg-type]
            page = browser.new_page()
            page.goto(srv.url_for(f"{origin}/refresh"))
            assert srv.token not in page.url
            frame = page.frame_locator("iframe")
            frame.locator("#p").wait_for(timeout=10_000)
            assert frame.locator("#p").inner_text() == "REFRESHED"
            framed = page.frames[-1]
            assert framed.url == srv.content_url(f"{origin}/refreshed", "20240101000000")
            for path in ("/upper", "/missing"):
                page.goto(srv.page_url(f"{origin}{path}"))
                href = page.frame_locator("iframe").locator("#a").get_attribute("href")
                assert href is not None and href.startswith("/2024"), href
                page.frame_locator("iframe").locator("#a").click()
                page.wait_for_load_state()
            browser.close()
    finally:
        srv.close()
    assert live.requests == [], [r.path for r in live.requests]
