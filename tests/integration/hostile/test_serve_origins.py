"""Through ``archiver serve``, one archived site cannot read another (issue #20).

A page archived from ``http://reader.example`` tries every way a script reads another
archived site: ``fetch`` and XHR of its URL, a frame of it read through the DOM, and the
shell's Memento TimeMap of it (by the shell's address and by a root-relative path). It
writes what it got into its own page, which the test reads. Controls in the same page
show the channel works: the page reads its own site, and a site whose archived answer
allowed every origin (``Access-Control-Allow-Origin: *``) is read, as it was live.
"""

from __future__ import annotations

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
