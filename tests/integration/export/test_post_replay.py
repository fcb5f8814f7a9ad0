"""What a page POSTed replays from an export in pywb.

Real Chromium captures a page whose script POSTs two forms to the same address and shows
the answers; the library exports it as a WACZ. pywb looks a POST up under the address
with the method and body appended (``?__wb_method=post&q=...``); the export's index had
no such key, so the answers (a form's result page too) did not replay. Now each POST's
response is keyed by its request, as ``cdxj-indexer --post-append`` does. A multipart form
(``FormData``, as a form with ``enctype=multipart/form-data`` sends) is keyed by its fields,
as pywb reads them again at replay, not by its bytes (their boundary is new each time).

Both pages (each on its own server) are captured in one run and exported to one WACZ,
which one pywb replays for both tests.
"""

from __future__ import annotations

import json
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.export import Selection, export
from archiver_app.library import Library
from tests.helpers.replay_tools import pywb
from tests.helpers.webserver import LocalServer, Request, Response

pytestmark = pytest.mark.slow

FORM = "application/x-www-form-urlencoded"
PAGE = f"""<!doctype html><html><head><title>Posts</title></head><body><pre id="out"></pre>
<script>
const post = q => fetch('/echo', {{method: 'POST', headers: {{'Content-Type': '{FORM}'}},
  body: 'q=' + q}}).then(r => r.text());
Promise.all([post('otters'), post('herons+and+egrets')]).then(t =>
  document.getElementById('out').textContent = t.join('|'));
</script></body></html>"""


def _echo(req: Request) -> Response:
    return Response(200, b"you sent " + req.body, [], "text/plain")


def _post(url: str, body: bytes) -> bytes:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": FORM})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return bytes(resp.read())


@dataclass
class Posted:
    """Both pages captured in one run and exported to one WACZ, replayed by one pywb."""

    posts: LocalServer  # serves PAGE (stopped, with what it was sent)
    form: LocalServer  # serves MULTIPART_PAGE
    wacz: Path
    problems: list[object]
    base: str  # the pywb collection's address

    def index_lines(self, server: LocalServer) -> list[str]:
        """The export's index lines of ``server``'s ``/echo``."""
        echo = server.url("/echo")
        with zipfile.ZipFile(self.wacz) as zf:
            lines = zf.read("indexes/index.cdx").decode().splitlines()
        return [ln for ln in lines if json.loads(ln.split(" ", 2)[2])["url"] == echo]


def _site(page: str) -> LocalServer:
    server = LocalServer()
    server.add_static("/", page)
    server.routes["/echo"] = _echo
    return server.start()


@pytest.fixture(scope="module")
def posted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Posted]:
    """:data:`PAGE` and :data:`MULTIPART_PAGE` (each posting to its own server's ``/echo``)
    captured in one run and exported together: one browser, one export, one pywb."""
    root = tmp_path_factory.mktemp("posts")
    posts, form = _site(PAGE), _site(MULTIPART_PAGE)
    try:
        with Library.open(root / "library", create=True) as lib:
            results = capture_urls(
                lib,
                [posts.url("/"), form.url("/")],
                rules=PageRules(page_timeout=40, settle_seconds=0.5),
            )
            assert all(r.ok for r in results), [(r.url, r.error) for r in results]
            result = export(lib, Selection(collection="default"), root / "posts.wacz")
    finally:
        posts.stop()
        form.stop()
    with pywb(result.path, root / "pywb") as base:
        yield Posted(posts, form, result.path, list(result.problems), base)


def test_each_post_replays_its_own_answer_in_pywb(posted: Posted) -> None:
    server = posted.posts
    assert not posted.problems and len(server.requested("/echo")) == 2
    echo = server.url("/echo")
    lines = posted.index_lines(server)
    fields = [json.loads(ln.split(" ", 2)[2]) for ln in lines]
    assert sorted((f.get("method"), f.get("requestBody")) for f in fields) == [
        ("POST", "q=herons and egrets"),
        ("POST", "q=otters"),
    ]
    assert all("?__wb_method=post&q=" in ln.split(" ", 1)[0] for ln in lines), lines
    for sent in (b"q=otters", b"q=herons+and+egrets"):
        assert _post(f"{posted.base}2030id_/{echo}", sent) == b"you sent " + sent


MULTIPART_PAGE = """<!doctype html><html><head><title>Upload</title></head><body>
<form id="f" method="post" action="/echo" enctype="multipart/form-data">
<input name="title" value="Otters & herons"><textarea name="notes">one
two</textarea><input type="file" name="scan"></form><pre id="out"></pre><script>
fetch('/echo', {method: 'POST', body: new FormData(document.getElementById('f'))})
  .then(r => r.text()).then(t => document.getElementById('out').textContent = t);
</script></body></html>"""


def _multipart(boundary: str) -> bytes:
    """The page's form as another sender writes it (its own boundary)."""
    fields = [('name="title"', "Otters & herons"), ('name="notes"', "one\r\ntwo")]
    fields.append(('name="scan"; filename=""\r\nContent-Type: application/octet-stream', ""))
    parts = [
        f"--{boundary}\r\nContent-Disposition: form-data; {d}\r\n\r\n{v}\r\n" for d, v in fields
    ]
    return ("".join(parts) + f"--{boundary}--\r\n").encode()


def test_a_multipart_forms_answer_replays_in_pywb(posted: Posted) -> None:
    server = posted.form
    (sent,) = server.requested("/echo")
    assert sent.headers["Content-Type"].startswith("multipart/form-data; boundary=")
    assert not posted.problems
    (line,) = posted.index_lines(server)
    key, _ts, fields = line.split(" ", 2)
    assert json.loads(fields)["requestBody"] == "title=Otters+%26+herons&notes=one%0D%0Atwo&scan="
    assert "__wb_post_data" not in key
    boundary = "----AnotherSenderBoundary7"
    req = urllib.request.Request(
        f"{posted.base}2030id_/{server.url('/echo')}",
        data=_multipart(boundary),
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.read() == b"you sent " + sent.body
