"""A request body the browser holds as a Blob or a file (an upload, binary data sent with
``fetch``) is recorded whole: DevTools leaves such bodies out of ``requestWillBeSent``, and
they were written empty, so an export's index (which keys a POST's answer by its body, as
pywb and ReplayWeb.page look it up) could not find the answer again."""

from __future__ import annotations

import pytest
from warcio.archiveiterator import ArchiveIterator

from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.webserver import LocalServer, Request, Response

pytestmark = pytest.mark.slow

BINARY = bytes(range(256)) * 4

PAGE = """<!doctype html><title>Uploads</title><p id=state>sending</p>
<script>
const bytes = new Uint8Array(1024); for (let i = 0; i < 1024; i++) bytes[i] = i % 256;
const form = new FormData();
form.append('note', 'field text');
form.append('upload', new File([bytes], 'data.bin', {type: 'application/octet-stream'}));
Promise.all([
  fetch('/echo/blob', {method: 'POST', body: new Blob([bytes])}).then(r => r.text()),
  fetch('/echo/form', {method: 'POST', body: form}).then(r => r.text()),
]).then(() => { document.getElementById('state').textContent = 'sent'; });
</script>"""


def _requests(lib: Library, sid: int) -> dict[str, bytes]:
    with lib.session() as s:
        snap = s.get(Snapshot, sid)
        assert snap is not None and snap.warc_file is not None
        path = lib.abspath(snap.warc_file)
    bodies: dict[str, bytes] = {}
    with path.open("rb") as fh:
        for rec in ArchiveIterator(fh):
            if rec.rec_type == "request":
                uri = rec.rec_headers.get_header("WARC-Target-URI")
                bodies[uri] = rec.content_stream().read()
    return bodies


def test_blob_and_file_bodies_are_recorded_whole(
    library: Library, local_server: LocalServer
) -> None:
    seen: dict[str, bytes] = {}

    def echo(req: Request) -> Response:
        seen[req.path] = req.body
        return Response(200, f"got {len(req.body)} bytes".encode(), [], "text/plain")

    local_server.route("/echo/blob")(echo)
    local_server.route("/echo/form")(echo)
    local_server.add_static("/", PAGE)
    [result] = capture_urls(
        library, [local_server.url("/")], rules=PageRules(page_timeout=40, settle_seconds=0.5)
    )
    assert result.ok and result.snapshot_id is not None, result.error
    recorded = _requests(library, result.snapshot_id)
    blob_url, form_url = local_server.url("/echo/blob"), local_server.url("/echo/form")
    assert seen["/echo/blob"] == BINARY  # what the site received ...
    assert recorded[blob_url] == BINARY  # ... is what the request record holds
    form = recorded[form_url]
    assert form == seen["/echo/form"] and BINARY in form and b"field text" in form
