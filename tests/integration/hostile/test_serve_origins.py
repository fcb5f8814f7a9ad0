"""Through ``archiver serve``, one archived site cannot read another (issue #20).

A page archived from ``http://reader.example`` tries every way a script reads another
archived site: ``fetch`` and XHR of its URL, a frame of it read through the DOM, and the
shell's Memento TimeMap of it (by the shell's address and by a root-relative path). It
writes what it got into its own page, which the test reads. Controls in the same page
show the channel works: the page reads its own site, and a site whose archived answer
allowed every origin (``Access-Control-Allow-Origin: *``) is read, as it was live.

A Robust Link on a live page elsewhere, followed with no token, opens the capture in its
own isolated frame, while that page's script cannot read the TimeMap.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from playwright.sync_api import Browser

from archiver_app.library import Library
from archiver_app.replay.server import ReplayServer
from tests.helpers.archive import ArchiveWriter, at

READER = "http://reader.example/page"
SECRET = "SECRET-OF-ANOTHER-SITE"
OWN = "OWN-SITE-TEXT"
OPEN = "OPEN-DATA-TEXT"
_SCRIPT = """<pre id="out"></pre><script>
var out = {};
function note(k, v) {
  out[k] = String(v);
  document.getElementById('out').textContent = JSON.stringify(out);
}
function read(k, url) {
  fetch(url).then(function (r) { return r.text() })
    .then(function (t) { note(k, t) }, function (e) { note(k, 'ERR') });
}
read('fetch', 'http://secret.example/');
read('own', 'http://reader.example/own');
read('granted', 'https://open.example/data.json');
read('relative-timemap', '/timemap/link/http://secret.example/');
read('shell-timemap', 'http:/' + '/@SHELL@/timemap/link/http://secret.example/');
read('shell-page', 'http:/' + '/@SHELL@/latest/http://secret.example/');
var x = new XMLHttpRequest();
x.open('GET', 'http://secret.example/');
x.onload = function () { note('xhr', x.responseText) };
x.onerror = function () { note('xhr', 'ERR') };
x.send();
var f = document.createElement('iframe');
f.src = 'http://secret.example/';
f.onload = function () {
  try { note('frame', f.contentDocument.body.innerText) } catch (e) { note('frame', 'ERR') }
};
document.body.appendChild(f);
</script>"""
KEYS = {"fetch", "own", "granted", "relative-timemap", "shell-timemap", "shell-page", "xhr"}


def _archive(library: Library, shell_host: str) -> None:
    writer = ArchiveWriter(library, "imports/origins.warc.gz")
    writer.response(READER, _SCRIPT.replace("@SHELL@", shell_host), at=at(2024), page=True)
    writer.response("http://reader.example/own", OWN, at=at(2024), mime="text/plain")
    writer.response("http://secret.example/", f"<p>{SECRET}</p>", at=at(2024), page=True)
    writer.response(
        "https://open.example/data.json",
        f'"{OPEN}"',
        at=at(2024),
        mime="application/json",
        headers=[("Access-Control-Allow-Origin", "*")],
    )
    writer.commit()


def test_an_archived_site_cannot_read_another_through_serve(
    library: Library, browser: Browser
) -> None:
    server = ReplayServer(library, memento=True).start()
    try:
        _archive(library, f"127.0.0.1:{server.port}")
        page = browser.new_page()
        page.goto(server.url_for(READER), wait_until="load")
        frame = page.main_frame.child_frames[0]
        assert frame.url.startswith(server.content_url(READER).split("/latest/")[0])
        frame.wait_for_function(
            "k => k.every(x => document.getElementById('out').textContent.includes"
            "('\"' + x + '\"'))",
            arg=sorted(KEYS),
            timeout=15_000,
        )
        page.wait_for_timeout(500)  # the frame's load event, which comes last
        out = frame.locator("#out").inner_text()
        page.close()
    finally:
        server.close()
    assert OWN in out and OPEN in out, out  # the channel works, the grant is honoured
    assert SECRET not in out, out


def _plain_site(html: str) -> tuple[ThreadingHTTPServer, str]:
    """A live page on another origin (127.0.0.3), as a paper citing a capture would be."""

    class Page(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    site = ThreadingHTTPServer(("127.0.0.3", 0), Page)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    return site, f"http://127.0.0.3:{site.server_address[1]}/"


def test_a_robust_link_opens_the_memento_in_its_isolated_frame(
    library: Library, browser: Browser
) -> None:
    """A Robust Link on another site, followed in Chromium with no token, shows the
    capture in the sandboxed frame of its own origin; that site's script reads nothing."""
    server = ReplayServer(library, memento=True).start()
    _archive(library, f"127.0.0.1:{server.port}")
    memento = f"{server.origin}/20240101000000/http://secret.example/"
    site, address = _plain_site(
        f'<a id="cite" href="http://secret.example/" data-versionurl="{memento}">cited</a>'
        f'<pre id="out"></pre><script>fetch("{server.origin}/timemap/link/http://secret.example/")'
        ".then(function (r) { return r.text() }).then(function (t) { out.textContent = t },"
        " function () { out.textContent = 'ERR' })</script>"
    )
    try:
        page = browser.new_page()
        page.goto(address, wait_until="load")
        page.wait_for_function("document.getElementById('out').textContent !== ''")
        assert page.locator("#out").inner_text() == "ERR"  # no CORS: the page reads nothing
        version = page.locator("#cite").get_attribute("data-versionurl")
        assert version == memento
        page.evaluate("url => { location.href = url }", version)  # what Robust Links do
        page.wait_for_url(memento)
        frame = page.main_frame.child_frames[0]
        frame.wait_for_selector("p", timeout=10_000)
        assert frame.locator("p").inner_text() == SECRET
        assert frame.evaluate("window.origin") == server.hosts.base("http://secret.example")
        page.close()
    finally:
        site.shutdown()
        site.server_close()
        server.close()
