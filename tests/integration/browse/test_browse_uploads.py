"""Request bodies sent while browsing are recorded whole: a file a person chose in a form
(sent by the form or by a script's ``FormData``) is in the request that sends it, though
DevTools never holds its bytes; a body the browser holds as a Blob is asked for while the
tab that sent it is still there."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.warcs import read_warc
from tests.helpers.webserver import LocalServer, Request, Response
from tests.integration.browse.conftest import xvfb
from tests.integration.browse.test_browse_session import BrowseJob

pytestmark = pytest.mark.slow

#: The file chosen for each way of sending it (not the same: each request is told apart).
FILES = {
    "#send": bytes(range(256)) * 8 + b"UPLOADED-FILE-END",
    "#fetch": bytes(range(255, -1, -1)) * 8 + b"SCRIPT-FILE-END",
}

FORM = """<!doctype html><html><head><title>Upload</title><link rel="icon" href="data:,">
</head><body><form method="post" action="/upload" enctype="multipart/form-data">
<input id="note" name="note" value="field text"> <input id="file" name="upload" type="file">
<button id="send">Send</button></form>
<button id="fetch" onclick="const body = new FormData(document.forms[0]);
  fetch('/upload', {method: 'POST', body: body}).then(r => r.text())
  .then(t => { document.body.insertAdjacentHTML('beforeend', t); })">
By script</button></body></html>"""


def _upload(req: Request) -> Response:
    return Response(body=f"<title>Sent</title><p>GOT-{len(req.body)}-BYTES</p>".encode())


def _warcs(library: Library) -> list[Path]:
    with library.session() as s:
        folders = [library.abspath(f) for f in s.scalars(select(Snapshot.folder)) if f]
    return [Path(f) / "capture.warc.gz" for f in folders if (Path(f) / "capture.warc.gz").exists()]


def _recorded(library: Library, route: str) -> list[bytes]:
    """The bodies of the request records of ``route`` in every WARC of the library."""
    return [
        rec.payload
        for w in _warcs(library)
        for rec in read_warc(w)
        if rec.type == "request" and rec.uri.endswith(route)
    ]


@dataclass(frozen=True)
class Uploads:
    sent: list[bytes]  # the bodies of the requests to /upload the site received
    recorded: list[bytes]  # the bodies of the request records of /upload


@pytest.fixture(scope="module")
def uploads(tmp_path_factory: pytest.TempPathFactory) -> Uploads:
    """One browsing session sends a chosen file both ways: by a script's ``FormData`` (the
    page stays), then, another file chosen, by the form's button (its answer is a page)."""
    tmp = tmp_path_factory.mktemp("uploads")
    chosen = {send: tmp / f"data{i}.bin" for i, send in enumerate(FILES)}
    for send, file in chosen.items():
        file.write_bytes(FILES[send])
    site = LocalServer({"/form": lambda r: Response(body=FORM.encode()), "/upload": _upload})
    library = Library.open(tmp / "library", create=True)
    site.start()
    try:
        with xvfb():
            _send_both_ways(BrowseJob(library, site.url("/form")), site, chosen)
        sent = [r.body for r in site.requests if r.route == "/upload"]
        return Uploads(sent, _recorded(library, "/upload"))
    finally:
        site.stop()
        library.close()


def _send_both_ways(job: BrowseJob, site: LocalServer, chosen: dict[str, Path]) -> None:
    try:
        drive = job.driver()
        page = drive(lambda: _first(drive.session))
        drive(lambda: page.wait_for_selector("#file"))
        drive(lambda: page.set_input_files("#file", str(chosen["#fetch"])))
        drive(lambda: page.click("#fetch"))  # a button that sends the form by script
        drive(lambda: page.wait_for_selector("text=BYTES"))
        drive(lambda: page.set_input_files("#file", str(chosen["#send"])))
        drive(lambda: page.click("#send"))  # the form's own button
        drive(lambda: page.wait_for_url(site.url("/upload")))
        drive(lambda: page.wait_for_selector("text=BYTES"))
    finally:
        job.stop()


@pytest.mark.parametrize("send", ["#send", "#fetch"], ids=["form", "script"])
def test_a_file_chosen_while_browsing_is_in_the_request_that_sends_it(
    uploads: Uploads, send: str
) -> None:
    [sent] = [body for body in uploads.sent if FILES[send] in body]  # what the site received
    assert b"field text" in sent
    # ... is what the request record holds (and each request sent is recorded, once)
    assert [body for body in uploads.recorded if FILES[send] in body] == [sent]
    assert sorted(uploads.recorded) == sorted(uploads.sent)


async def _first(session: object) -> object:
    return session.context.pages[0]  # type: ignore[attr-defined]


BLOB_PAGE = """<!doctype html><html><head><title>Blob</title><link rel="icon" href="data:,">
</head><body><p id="state">sending</p><script>
const bytes = new Uint8Array(2048); for (let i = 0; i < 2048; i++) bytes[i] = i % 256;
fetch('/slow', {method: 'POST', body: new Blob([bytes])}).then(r => {
  document.getElementById('state').textContent = 'answered';
  return r.text();
});
</script></body></html>"""


def test_a_blob_sent_by_a_tab_closed_before_its_answer_came_is_in_the_request_record(
    library: Library, browse_site: LocalServer, xvfb_display: str
) -> None:
    """The body is asked for as the request leaves: the tab (and DevTools' copy of the
    body) is gone by the time the cut answer is written."""
    release = threading.Event()

    def slow(req: Request) -> Response:
        def stream(write: Callable[[bytes], None]) -> None:
            write(b"first part, ")
            release.wait(30)  # the tab is closed meanwhile

        return Response(200, stream=stream, content_type="text/plain")

    browse_site.routes.update({"/blob": lambda r: Response(body=BLOB_PAGE.encode()), "/slow": slow})
    job = BrowseJob(library, browse_site.url("/blob"))
    try:
        drive = job.driver()
        page = drive(lambda: _first(drive.session))
        drive(lambda: page.wait_for_selector("text=answered"))
        opened = drive(page.context.new_page)  # the session goes on in another tab
        drive(page.close)
        drive(lambda: opened.goto(browse_site.url("/more")))
    finally:
        release.set()
        job.stop()

    [sent] = [r.body for r in browse_site.requests if r.route == "/slow"]
    assert sent == bytes(range(256)) * 8
    assert _recorded(library, "/slow") == [sent]
