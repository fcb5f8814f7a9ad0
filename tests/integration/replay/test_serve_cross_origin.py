"""A page whose resources come from other origins still renders through ``archiver serve``.

Each archived origin has its own content host, so a page's stylesheet, image, font and
module script from a CDN are loaded across origins, through a redirect to the CDN's host,
as they were on the live web: no-CORS loads work as they are, CORS loads (fonts, module
scripts, ``fetch``) where the archived answer allowed the page's origin, through
archived redirects too.
"""

from __future__ import annotations

from playwright.sync_api import sync_playwright

from archiver_app.capture.browser import launch_options, require_browser
from archiver_app.library import Library
from archiver_app.replay.server import ReplayServer
from tests.helpers.archive import ArchiveWriter, at

PAGE = "https://www.site.example/"
CDN = "https://cdn.example"
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2259e"
    "4f0000000049454e44ae426082"
)
HTML = f"""<!doctype html><html><head>
<link rel="stylesheet" href="{CDN}/style.css">
<script type="module" src="{CDN}/app.js"></script></head>
<body><p id="p">page</p><img id="img" src="{CDN}/pic.png"><pre id="api"></pre>
<pre id="moved"></pre>
<script>fetch('https://api.example/data.json').then(function (r) {{ return r.json() }})
.then(function (d) {{ document.getElementById('api').textContent = d.value }},
function () {{ document.getElementById('api').textContent = 'ERR' }});
fetch('https://short.example/r').then(function (r) {{ return r.text() }})
.then(function (t) {{ document.getElementById('moved').textContent = t }},
function () {{ document.getElementById('moved').textContent = 'ERR' }})</script>
</body></html>"""


def test_cross_origin_resources_load_as_they_did_live(library: Library) -> None:
    w = ArchiveWriter(library)
    w.response(PAGE, HTML, at=at(2024), page=True)
    w.response(f"{CDN}/style.css", "#p { color: rgb(1, 2, 3) }", at=at(2024), mime="text/css")
    w.response(
        f"{CDN}/app.js",
        "document.body.dataset.module = 'ran';",
        at=at(2024),
        mime="text/javascript",
        headers=[("Access-Control-Allow-Origin", "*")],
    )
    w.response(f"{CDN}/pic.png", PNG, at=at(2024), mime="image/png")
    w.response(
        "https://api.example/data.json",
        '{"value": "API"}',
        at=at(2024),
        mime="application/json",
        headers=[("Access-Control-Allow-Origin", "https://www.site.example")],
    )
    # A redirect to a third origin: the browser then sends "Origin: null", which the
    # live answer's "*" allowed.
    w.response(
        "https://short.example/r",
        "",
        at=at(2024),
        status=302,
        headers=[("Location", "https://long.example/data"), ("Access-Control-Allow-Origin", "*")],
    )
    w.response(
        "https://long.example/data",
        "MOVED",
        at=at(2024),
        mime="text/plain",
        headers=[("Access-Control-Allow-Origin", "*")],
    )
    w.commit()
    server = ReplayServer(library).start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(**launch_options(require_browser()))  # type: ignore[arg-type]
            page = browser.new_page()
            page.goto(server.url_for(PAGE), wait_until="load")
            frame = page.main_frame.child_frames[0]
            assert frame.url == server.content_url(PAGE, "20240101000000")
            frame.wait_for_function("document.body.dataset.module === 'ran'", timeout=10_000)
            frame.wait_for_function("document.getElementById('api').textContent !== ''")
            assert frame.locator("#api").inner_text() == "API"
            frame.wait_for_function("document.getElementById('moved').textContent !== ''")
            assert frame.locator("#moved").inner_text() == "MOVED"
            color = frame.evaluate("getComputedStyle(document.getElementById('p')).color")
            assert color == "rgb(1, 2, 3)"
            assert frame.evaluate("document.getElementById('img').naturalWidth") == 1
            browser.close()
    finally:
        server.close()
