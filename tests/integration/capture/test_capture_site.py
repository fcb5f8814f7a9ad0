"""Capture the local test site with real Chromium and check the WARC record by record.

One browser session (module fixture) captures: the main page, a non-UTF-8 page, a PDF, a
JSON and an image as main resources, then the main page again (revisits).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from sqlalchemy import select, text

from archiver_app.capture.engine import Capturer, CaptureResult, PageRules
from archiver_app.layout.sidecar import read_index
from archiver_app.library import Library
from archiver_app.replay import Replayer
from archiver_app.store.models import File, Record, Snapshot, SnapshotTag, Tag
from archiver_app.warc.digests import payload_digest
from archiver_app.warc.reader import read_record_at
from archiver_app.warc.surt import url_key
from tests.helpers.capturing import OpenCapturer
from tests.helpers.testsite import (
    LATIN1_HTML,
    OTHER_CANDIDATES,
    PAGE_TEXT,
    VIDEO,
    LocalSite,
    start_site,
)
from tests.helpers.warcs import Rec, read_warc, warcio_check
from tests.helpers.webserver import Request, Response

pytestmark = pytest.mark.slow

RULES = PageRules(page_timeout=40, settle_seconds=0.3)


@dataclass
class Captured:
    site: LocalSite
    lib: Library
    results: dict[str, CaptureResult]
    requests_before_second: list[tuple[str, str]]  # (host, path) the servers saw in run 1
    browser: OpenCapturer  # the capturer of ``results``, still open for the later tests

    def capture(self, path: str, rules: PageRules = RULES) -> CaptureResult:
        """Capture ``path`` of the site into the library, in the same browser."""
        return self.browser.capture(self.site.url(path), rules=rules)


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Captured]:
    site = start_site()
    lib = Library.open(tmp_path_factory.mktemp("capture") / "library")
    results: dict[str, CaptureResult] = {}
    seen: list[tuple[str, str]] = []

    async def run(cap: Capturer) -> None:
        results["index"] = await cap.capture(
            site.index_url, collection="research", tags=["site", "test"], rules=RULES
        )
        seen.extend((r.host, r.path) for r in [*site.main.requests, *site.other.requests])
        names = {
            "latin1": "/latin1.html",
            "pdf": "/doc.pdf",
            "json": "/data.json",
            "png": "/img/photo.png",
            "text": "/plain.txt",
            "csv": "/tables.csv",  # a file the browser downloads instead of showing
            "attachment": "/export.html",  # HTML, but sent to be saved, not shown
        }
        done = await asyncio.gather(
            *(cap.capture(site.url(p), rules=RULES) for p in names.values()),
            # too tall for a screenshot of the whole page; scrolling its 2,000,000 pixels
            # (80 steps) is no part of what its test checks
            cap.capture(site.url("/tall.html"), rules=replace(RULES, autoscroll=False)),
        )
        results.update(zip([*names, "tall"], done, strict=True))
        results["again"] = await cap.capture(site.index_url, collection="research", rules=RULES)
        results["rules"] = await cap.capture(
            site.page_url(5),
            rules=PageRules(
                user_agent="ArchiverTest/1.0",
                custom_js="document.body.dataset.custom = 'ran'",
                autoscroll=False,
                settle_seconds=0,
            ),
        )

    browser: OpenCapturer | None = None
    try:
        browser = OpenCapturer(lib, concurrency=2)
        browser.run(run(browser.capturer))
        yield Captured(site, lib, results, seen, browser)
    finally:
        if browser is not None:
            browser.close()
        lib.close()
        site.close()


def _warc_of(lib: Library, result: CaptureResult) -> Path:
    with lib.session() as s:
        snap = s.get(Snapshot, result.snapshot_id)
        assert snap is not None and snap.warc_file
        return lib.abspath(snap.warc_file)


def _by_uri(records: list[Rec], kind: str = "response") -> dict[str, list[Rec]]:
    out: dict[str, list[Rec]] = {}
    for r in records:
        if r.type == kind:
            out.setdefault(r.uri, []).append(r)
    return out


def test_every_fetched_resource_is_in_the_warc_with_exact_bytes(captured: Captured) -> None:
    res = captured.results["index"]
    assert res.ok, res.error
    assert res.http_status == 200 and res.fidelity == "high"
    site = captured.site
    warc = _warc_of(captured.lib, res)
    check = warcio_check(warc)
    assert check.returncode == 0, check.stdout + check.stderr
    records = read_warc(warc)
    assert records[0].type == "warcinfo"
    assert records[0].warc["WARC-Filename"] == "capture.warc.gz"
    responses = _by_uri(records)
    requests = _by_uri(records, "request")

    # every request either server saw during the first capture is recorded
    for host, path in captured.requests_before_second:
        url = f"http://{host}{path}"
        assert url in responses, f"{url} missing from the WARC"
        assert url in requests, f"request for {url} missing"

    def one(path: str, other: bool = False) -> Rec:
        url = site.other_url(path) if other else site.url(path)
        assert len(responses[url]) >= 1
        return responses[url][0]

    exact = [
        "/", "/css/main.css", "/css/imported.css", "/fonts/fancy.woff2", "/js/app.js",
        "/img/bg.png", "/img/intro-bg.png", "/img/a.png", "/img/final.png", *OTHER_CANDIDATES,
        "/img/lazy1.png", "/img/lazy2.png", "/img/lazy3.png", "/api/data.json",
        "/api/xhr.json", "/cookies", "/gz/app.js", "/br/style.css",
    ]  # fmt: skip
    for path in exact:
        rec = one(path)
        assert rec.http_status == 200, path
        assert rec.payload == site.bodies[path], f"{path}: stored bytes differ"
        assert rec.header("Content-Length") == str(len(rec.payload)), path
        assert rec.header("Transfer-Encoding") is None, path
        assert rec.warc["WARC-IP-Address"] == "127.0.0.1", path
        assert rec.warc["WARC-Payload-Digest"].startswith("sha1:"), path
        assert rec.warc["WARC-Block-Digest"].startswith("sha1:"), path
    assert one("/frame.html", other=True).payload == site.bodies["/frame.html"]
    assert one("/frame.png", other=True).payload == site.bodies["/frame.png"]
    assert one("/frame.png", other=True).warc["WARC-IP-Address"] == "127.0.0.2"

    # decoded bodies: the original encoding is kept under another name
    for path, enc in (("/gz/app.js", "gzip"), ("/br/style.css", "br")):
        rec = one(path)
        assert rec.header("Content-Encoding") is None
        assert rec.header("X-Archive-Orig-Content-Encoding") == enc
        assert rec.header("X-Archive-Orig-Content-Length") != str(len(rec.payload))
    # the real header text: both Set-Cookie headers, in order
    assert one("/cookies").headers_named("Set-Cookie") == ["a=1; Path=/", "b=2; Path=/; HttpOnly"]
    assert (
        one("/").header(
            "Server",
        )
        is not None
        and one("/").header("Date") is not None
    )
    # redirect chain hop by hop
    r301, r302 = one("/redirect/start"), one("/redirect/middle")
    assert (r301.http_status, r301.header("Location")) == (301, "/redirect/middle")
    assert (r302.http_status, r302.header("Location")) == (302, "/img/final.png")
    # 404 subresource kept with its status and body
    missing = one("/missing.png")
    assert missing.http_status == 404 and missing.payload == b"not found"
    # video: range requests, the stored bytes are the requested slice
    for rec in responses[site.url("/media/clip.webm")]:
        assert rec.http_status in (200, 206)
        if rec.http_status == 206:
            start, end = (
                int(x) for x in rec.header("Content-Range").split()[1].split("/")[0].split("-")
            )
            assert rec.payload == VIDEO[start : end + 1]
    assert any(r.header("Range") for r in requests[site.url("/media/clip.webm")])
    # ... and fetched whole (the player lets go of a stream once it has enough), so replay
    # answers any range a player asks for
    whole = [r for r in responses[site.url("/media/clip.webm")] if r.http_status == 200]
    assert len(whole) == 1 and whole[0].payload == VIDEO
    assert whole[0].header("Content-Range") is None
    part = Replayer.for_library(captured.lib).serve(
        site.url("/media/clip.webm"), range_header="bytes=300000-300099"
    )
    assert part.status == 206 and part.body == VIDEO[300000:300100]
    replayer = Replayer.for_library(captured.lib)
    full = replayer.serve(site.url("/media/clip.webm"))
    assert full.status == 200 and full.body == VIDEO
    # a 2x screen asks for the other candidate: replay has it
    double = replayer.serve(site.url("/img/a-2x.png"))
    assert double.status == 200 and double.body == site.bodies["/img/a-2x.png"]
    # the long-poll never finished: headers kept, marked truncated, chunking gone
    poll = one("/longpoll")
    assert poll.warc["WARC-Truncated"] == "time" and poll.header("Transfer-Encoding") is None
    # POST body and method in the request record
    echo_req = requests[site.url("/api/echo")][0]
    assert echo_req.http_line == "POST /api/echo HTTP/1.1"
    assert echo_req.payload == b'{"hello":"archive"}'
    assert one("/api/echo").payload == b'echo:{"hello":"archive"}'

    # requests are concurrent to their responses
    ids = {r.warc["WARC-Record-ID"] for r in records if r.type == "response"}
    for r in records:
        if r.type == "request":
            assert r.warc["WARC-Concurrent-To"] in ids

    # resource and metadata records
    uris = {r.uri: r for r in records if r.type in ("resource", "metadata")}
    view = uris[f"urn:view:{site.index_url}"]
    assert view.payload.startswith(b"\x89PNG") and view.warc["Content-Type"] == "image/png"
    assert b"fetched 3 items" in uris[f"urn:dom:{site.index_url}"].payload
    assert PAGE_TEXT.encode() in uris[f"urn:text:{site.index_url}"].payload
    info = json.loads(uris[f"urn:pageinfo:{site.index_url}"].payload)
    listed = {r["url"]: r for r in info["resources"]}
    assert listed[site.url("/missing.png")]["status"] == 404
    assert listed[site.url("/img/a.png")]["size"] == len(site.bodies["/img/a.png"])
    assert uris[f"urn:pageinfo:{site.index_url}"].type == "metadata"


def test_snapshot_row_files_records_and_search(captured: Captured) -> None:
    lib, res, site = captured.lib, captured.results["index"], captured.site
    with lib.session() as s:
        snap = s.get(Snapshot, res.snapshot_id)
        assert snap is not None
        assert snap.state == "complete" and snap.capture_backend == "playwright"
        assert snap.capture_fidelity == "high" and snap.http_status == 200
        assert snap.title == "Archiver test site" and snap.language == "en"
        assert snap.mime == "text/html" and PAGE_TEXT[:40] in (snap.snippet or "")
        assert snap.content_hash == payload_digest(site.bodies["/"])  # the main record's digest
        assert snap.fs_version == "archiver-2" and snap.url_key == url_key(site.index_url)
        timings = snap.provenance["timings"]  # each step on its own: the settling too
        assert RULES.settle_seconds <= timings["settle"] < RULES.settle_seconds + 5
        assert set(timings) >= {"open", "goto", "quiet", "settle", "extract", "screenshot"}
        assert snap.folder and snap.folder.startswith("collections/research/")
        folder = lib.abspath(snap.folder)
        names = sorted(p.name for p in folder.iterdir())
        assert names == ["capture.warc.gz", "dom.html", "index.json", "screenshot.png", "text.txt"]
        files = s.scalars(select(File).where(File.snapshot_id == snap.id)).all()
        assert sorted(Path(f.path).name for f in files) == names
        for f in files:
            data = lib.abspath(f.path).read_bytes()
            assert f.size == len(data) and f.sha256 == hashlib.sha256(data).hexdigest()
        assert snap.size_bytes == sum(f.size for f in files)
        sidecar = json.loads((folder / "index.json").read_text())
        assert sidecar["fs_version"] == "archiver-2" and sidecar["url"] == site.index_url
        assert sidecar["main_record"]["offset"] == snap.warc_offset
        hashes = {f["path"]: f["sha256"] for f in sidecar["files"]}
        assert hashes == {
            Path(f.path).name: f.sha256 for f in files if not f.path.endswith("index.json")
        }
        parsed = read_index(folder)  # the layout area reads what capture wrote
        assert (parsed.fs_version, parsed.url, parsed.uid) == ("archiver-2", snap.url, snap.uid)
        assert parsed.captured_at == snap.captured_at and parsed.collection == "research"
        page_text = (folder / "text.txt").read_text()
        assert PAGE_TEXT in page_text
        # the text the page shows in its frame (another host's) is the page's text too
        assert page_text.rstrip().endswith("Inside the frame from the second host.")
        assert (folder / "screenshot.png").read_bytes()[:4] == b"\x89PNG"
        tags = s.scalars(
            select(Tag.name).join(SnapshotTag).where(SnapshotTag.snapshot_id == snap.id)
        ).all()
        assert sorted(tags) == ["site", "test"]

        # every record of the WARC is indexed, at the right offset
        warc = lib.abspath(snap.warc_file or "")
        in_file = [r for r in read_warc(warc) if r.type != "warcinfo"]
        rows = s.scalars(
            select(Record).where(Record.snapshot_id == snap.id).order_by(Record.offset)
        ).all()
        assert len(rows) == len(in_file)
        for row, rec in zip(rows, in_file, strict=True):
            assert (row.offset, row.length, row.url, row.record_type) == (
                rec.offset, rec.length, rec.uri, rec.type,
            )  # fmt: skip
            assert row.url_key == url_key(rec.uri)
            assert row.digest == rec.warc.get("WARC-Payload-Digest")
            assert row.status == rec.http_status
        main = read_record_at(warc, snap.warc_offset or 0, snap.warc_length or 0)
        assert main.uri == site.index_url and main.payload == site.bodies["/"]
    with lib.engine.connect() as conn:
        hits = (
            conn.execute(
                text("SELECT rowid FROM snapshot_fts WHERE snapshot_fts MATCH 'archivist'")
            )
            .scalars()
            .all()
        )
    assert res.snapshot_id in hits
    assert site.url("/latin1.html") in res.outlinks and site.url("/page?n=1") in res.outlinks
    assert not any("#" in link or link.startswith("mailto:") for link in res.outlinks)
    assert not list(lib.root.rglob("*.part")) and not list(lib.root.rglob(".*.tmp-*"))


def _main_response(lib: Library, res: CaptureResult) -> Rec:
    warc = _warc_of(lib, res)
    assert warcio_check(warc).returncode == 0
    return next(r for r in read_warc(warc) if r.uri == res.url and r.type == "response")


def test_non_html_main_resources_are_captured_as_they_are(captured: Captured) -> None:
    lib, site, results = captured.lib, captured.site, captured.results
    latin = results["latin1"]
    assert latin.ok, latin.error
    assert _main_response(lib, latin).payload == LATIN1_HTML  # exact non-UTF-8 bytes
    with lib.session() as s:
        snap = s.get(Snapshot, latin.snapshot_id)
        assert snap is not None and snap.title == "Café page"
        assert "café naïve" in lib.abspath(f"{snap.folder}/text.txt").read_text()

    for name, path, mime in (
        ("pdf", "/doc.pdf", "application/pdf"),
        ("json", "/data.json", "application/json"),
        ("png", "/img/photo.png", "image/png"),
        ("text", "/plain.txt", "text/plain"),
    ):
        res = results[name]
        assert res.ok, (name, res.error)
        assert _main_response(lib, res).payload == site.bodies[path], name
        with lib.session() as s:
            snap = s.get(Snapshot, res.snapshot_id)
            assert snap is not None and snap.mime == mime, name
            shot = lib.abspath(f"{snap.folder}/screenshot.png")
            assert shot.exists(), name  # a PDF's is its first page (capture.pdf)
    with lib.session() as s:
        pdf_snap = s.get(Snapshot, results["pdf"].snapshot_id)
        # no Title in its metadata: named after the file; its text is the PDF's text layer
        assert pdf_snap is not None and pdf_snap.title == "doc.pdf"
        assert "Archived PDF text" in lib.abspath(f"{pdf_snap.folder}/text.txt").read_text()

    # A file the browser only downloads: its bytes fetched again, named after the file (as
    # its Content-Disposition names it), no DOM or screenshot of a tab that showed nothing,
    # and the second fetch said.
    for name, path, title in (("csv", "/tables.csv", "tables.csv"),
                              ("attachment", "/export.html", "Rows 2026.html")):  # fmt: skip
        res = results[name]
        assert res.ok, (name, res.error)
        assert _main_response(lib, res).payload == site.bodies[path], name
        assert len(site.main.requested(path)) == 2, name  # the download, then the refetch
        with lib.session() as s:
            snap = s.get(Snapshot, res.snapshot_id)
            assert snap is not None and snap.title == title, name
            folder = lib.abspath(snap.folder)
            assert not (folder / "screenshot.png").exists(), name
            assert not (folder / "dom.html").exists(), name
            assert snap.capture_fidelity == "fallback", name
            reasons = snap.provenance["fidelity_reasons"]
            assert reasons == ["a file the browser does not show: fetched again"], name


def test_second_capture_writes_revisits_against_stored_payloads(captured: Captured) -> None:
    lib, site = captured.lib, captured.site
    first, again = captured.results["index"], captured.results["again"]
    assert again.ok, again.error
    warc = _warc_of(lib, again)
    records = read_warc(warc)
    revisits = _by_uri(records, "revisit")
    css = revisits[site.url("/css/main.css")][0]
    assert css.warc["WARC-Profile"].endswith("/revisit/identical-payload-digest")
    assert css.warc["WARC-Refers-To-Target-URI"] == site.url("/css/main.css")
    assert css.warc["WARC-Refers-To-Date"]
    assert css.http_status == 200 and css.payload == b""  # HTTP headers kept, no body
    # the video fetched whole again is a revisit too, not a second copy
    video = revisits[site.url("/media/clip.webm")]
    assert [(r.http_status, r.payload) for r in video if r.http_status == 200] == [(200, b"")]
    with lib.session() as s:
        rows = s.scalars(
            select(Record).where(
                Record.snapshot_id == again.snapshot_id, Record.record_type == "revisit"
            )
        ).all()
        assert rows and all(r.revisit_of_id is not None for r in rows)
        originals = {s.get(Record, r.revisit_of_id).snapshot_id for r in rows}  # type: ignore[union-attr]
        assert first.snapshot_id in originals
        snap = s.get(Snapshot, again.snapshot_id)
        assert snap is not None and first.snapshot_id in snap.provenance["revisit_of_snapshots"]
    # the payload of a revisit is really stored in the first capture
    original = next(
        r for r in read_warc(_warc_of(lib, first)) if r.uri == css.uri and r.type == "response"
    )
    assert original.warc["WARC-Payload-Digest"] == css.warc["WARC-Payload-Digest"]
    # the original's WARC-Date as written (microseconds), not the index's milliseconds
    assert css.warc["WARC-Refers-To-Date"] == original.warc["WARC-Date"]
    assert urlsplit(css.uri).path == "/css/main.css"


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "pywb exited early"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError("pywb did not start")


def test_the_capture_replays_in_pywb(captured: Captured, tmp_path: Path) -> None:
    """pywb (the reference replay tool) indexes the WARC and serves the page's text."""
    lib, res, site = captured.lib, captured.results["index"], captured.site
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    subprocess.run([str(bin_dir / "wb-manager"), "init", "cap"], cwd=tmp_path, check=True, env=env,
                   capture_output=True)  # fmt: skip
    subprocess.run([str(bin_dir / "wb-manager"), "add", "cap", str(_warc_of(lib, res))],
                   cwd=tmp_path, check=True, env=env, capture_output=True)  # fmt: skip
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [str(bin_dir / "wayback"), "-p", str(port), "-b", "127.0.0.1"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for_port(port, proc)
        base = f"http://127.0.0.1:{port}/cap"
        with urllib.request.urlopen(f"{base}/2030id_/{site.index_url}", timeout=30) as r:
            assert r.read() == site.bodies["/"]  # the exact archived bytes
        with urllib.request.urlopen(f"{base}/2030mp_/{site.index_url}", timeout=30) as r:
            assert PAGE_TEXT in r.read().decode()
        css = f"{base}/2030id_/{site.url('/gz/app.js')}"
        with urllib.request.urlopen(css, timeout=30) as r:
            assert r.read() == site.bodies["/gz/app.js"]
    finally:
        proc.terminate()
        proc.wait(10)


def test_ruleset_user_agent_and_custom_js_apply(captured: Captured) -> None:
    lib, site, res = captured.lib, captured.site, captured.results["rules"]
    assert res.ok, res.error
    page_requests = [r for r in site.main.requested("/page") if r.path.endswith("n=5")]
    assert page_requests[-1].headers["User-Agent"] == "ArchiverTest/1.0"
    with lib.session() as s:
        snap = s.get(Snapshot, res.snapshot_id)
        assert snap is not None
        assert 'data-custom="ran"' in lib.abspath(f"{snap.folder}/dom.html").read_text()
    request = next(
        r for r in read_warc(_warc_of(lib, res)) if r.type == "request" and r.uri == res.url
    )
    assert request.header("User-Agent") == "ArchiverTest/1.0"
    assert site.url("/page?n=6") in res.outlinks and site.url("/page?n=7") in res.outlinks


def test_a_redirect_served_from_the_http_cache_keeps_its_own_headers(tmp_path: Path) -> None:
    """A hop served from the browser's cache has no ``*ExtraInfo`` event and is not recorded
    again; the hops after it must not take the next network response's headers (the cached
    301 was once stored as the image's 200)."""
    from tests.helpers.testsite import png
    from tests.helpers.webserver import LocalServer, Response

    page = b"""<!doctype html><html><head><title>c</title></head><body><img src="/r">
    <script>window.addEventListener('load', () => {
      setTimeout(() => fetch('/r').then(r => r.blob()).then(() => { document.title = 'done'; }),
                 200);
    });</script></body></html>"""
    image = png(4, 4, (1, 2, 3))
    server = LocalServer().start()
    server.add_static("/page.html", page, "text/html; charset=utf-8")
    server.routes["/r"] = lambda _r: Response(
        301, b"", [("Location", "/img.png"), ("Cache-Control", "max-age=3600")], "text/html"
    )
    server.routes["/img.png"] = lambda _r: Response(
        200, image, [("Cache-Control", "no-store"), ("X-Which", "image")], "image/png"
    )
    lib = Library.open(tmp_path / "lib")
    try:

        async def run() -> CaptureResult:
            async with Capturer(lib, concurrency=1, screenshots=False) as cap:
                return await cap.capture(
                    server.url("/page.html"), rules=PageRules(page_timeout=30, settle_seconds=1)
                )

        result = asyncio.run(run())
        assert result.ok, result.error
        assert len(server.requested("/r")) == 1 and len(server.requested("/img.png")) >= 2
        records = read_warc(_warc_of(lib, result))
    finally:
        lib.close()
        server.stop()
    hops = [r for r in records if r.type in ("response", "revisit") and r.uri.endswith("/r")]
    images = [r for r in records if r.type in ("response", "revisit") and r.uri.endswith(".png")]
    # the second load of /r was answered by the cache: one record per network fetch
    assert len(hops) == 1 and len(images) == 2
    for hop in hops:
        assert (hop.http_status, hop.header("Location")) == (301, "/img.png")
        assert hop.header("X-Which") is None
    for img in images:
        assert (img.http_status, img.header("X-Which")) == (200, "image")
        # DevTools gives fetch()'s copy back empty: it is fetched again, not stored empty
        assert img.payload == image


ENCODED_PAGES = {
    # Browsers read iso-8859-1 as windows-1252: 0x93/0x94 are quotes, 0x80 the euro sign,
    # 0x81 (undefined there) the C1 control U+0081.
    "/w1252.html": (
        "text/html; charset=iso-8859-1",
        b"<!doctype html><title>w</title><p>\x93quoted\x94 \x80 \x81 caf\xe9</p>",
    ),
    # No charset in the header: the page's own <meta charset>, and its script's bytes are
    # read in the page's charset too.
    "/sjis.html": (
        "text/html",
        '<!doctype html><meta charset="shift_jis"><title>s</title><script src="/sjis.js">'
        "</script><p>\u65e5\u672c\u8a9e</p>".encode("shift_jis"),
    ),
    "/sjis.js": ("application/javascript", "var s = '\u65e5\u672c';".encode("shift_jis")),
    "/euc.html": (
        "text/html",
        b'<!doctype html><meta http-equiv="Content-Type" content="text/html; charset=euc-kr">'
        + "<title>k</title><p>\ud55c\uad6d\uc5b4</p>".encode("euc-kr"),
    ),
    "/mac.html": (
        "text/html; charset=x-mac-cyrillic",
        "<!doctype html><title>m</title><p>\u0416\u0443\u043a</p>".encode("mac_cyrillic"),
    ),
    # A charset Python has no codec for (0xE9 is U+F7E9): the text cannot be encoded back,
    # so the body is fetched again and stored as served.
    "/user.html": (
        "text/html; charset=x-user-defined",
        b"<!doctype html><title>u</title><p>caf\xe9</p>",
    ),
}


def test_text_bodies_are_stored_in_the_bytes_the_browser_decoded(tmp_path: Path) -> None:
    from tests.helpers.webserver import LocalServer

    server = LocalServer().start()
    for path, (ctype, body) in ENCODED_PAGES.items():
        server.add_static(path, body, ctype)
    lib = Library.open(tmp_path / "lib")
    stored: dict[str, Rec] = {}
    try:
        pages = ("/w1252.html", "/sjis.html", "/euc.html", "/mac.html", "/user.html")

        async def run() -> list[CaptureResult]:  # each page in a context of its own, at once
            async with Capturer(lib, concurrency=len(pages), screenshots=False) as cap:
                rules = PageRules(settle_seconds=0.1)
                return await asyncio.gather(
                    *(cap.capture(server.url(p), rules=rules) for p in pages)
                )

        for result in asyncio.run(run()):
            assert result.ok, result.error
            for rec in read_warc(_warc_of(lib, result)):
                if rec.type == "response":
                    stored[urlsplit(rec.uri).path] = rec
    finally:
        lib.close()
        server.stop()
    for path in ENCODED_PAGES:
        assert stored[path].payload == ENCODED_PAGES[path][1], path
        assert stored[path].header("Content-Type") == ENCODED_PAGES[path][0]
        assert stored[path].header("X-Archive-Orig-Content-Type") is None


def test_a_page_too_tall_for_one_screenshot_keeps_the_visible_part(captured: Captured) -> None:
    res = captured.results["tall"]
    assert res.ok, res.error
    with captured.lib.session() as s:
        snap = s.get(Snapshot, res.snapshot_id)
        assert snap is not None
        shot = captured.lib.abspath(snap.folder) / "screenshot.png"
        assert shot.is_file() and shot.read_bytes().startswith(b"\x89PNG")
        reasons = snap.provenance["fidelity_reasons"]
    assert len(reasons) == 1 and reasons[0].startswith("screenshot of the visible part only")


def test_an_answer_the_browser_kept_from_the_page_is_archived(captured: Captured) -> None:
    """JSON asked for as an image from another site is blocked by the browser (ORB) after
    the server answered: DevTools reports no response. The capture keeps the answer, and is
    not marked as missing a resource the page never had."""
    site, lib = captured.site, captured.lib
    json_body = b'{"tracking": "pixel"}'
    site.other.routes["/pixel.json"] = lambda _q: Response(200, json_body, [], "application/json")
    pixel = site.other_url("/pixel.json")
    page = f'<!doctype html><title>ORB</title><p>blocked</p><img src="{pixel}">'
    site.main.routes["/orb.html"] = lambda _q: Response(200, page.encode(), [], "text/html")

    res = captured.capture("/orb.html")
    assert res.ok and res.fidelity == "high", res
    assert [(r.status, r.outcome) for r in res.resources if r.url == pixel] == [(200, "complete")]
    stored = _by_uri(read_warc(_warc_of(lib, res)))[pixel]
    assert [(r.http_status, r.payload) for r in stored] == [(200, json_body)]


def test_an_answer_the_browser_emptied_for_the_page_is_archived(captured: Captured) -> None:
    """JSON fetched by a script from another site with ``mode: 'no-cors'`` is answered to
    the page by the browser (ORB) with an empty response without headers, and the load is
    aborted: the capture stored an empty body marked as cut off ('disconnect') and the page
    as fallback. The body is fetched again and kept, with a note saying why."""
    site, lib = captured.site, captured.lib
    json_body = b'{"feed": ["one", "two"]}'
    site.other.routes["/feed.json"] = lambda _q: Response(200, json_body, [], "application/json")
    feed = site.other_url("/feed.json")
    page = (
        "<!doctype html><title>ORB fetch</title><p>fetched</p>"
        f"<script>fetch({json.dumps(feed)}, {{mode: 'no-cors'}})"
        ".then(r => document.title += ' ' + r.type)</script>"
    )
    site.main.routes["/orb-fetch.html"] = lambda _q: Response(200, page.encode(), [], "text/html")

    res = captured.capture("/orb-fetch.html")
    assert res.ok and res.fidelity == "high", res
    assert [(r.status, r.outcome) for r in res.resources if r.url == feed] == [(200, "complete")]
    [stored] = _by_uri(read_warc(_warc_of(lib, res)))[feed]
    assert (stored.http_status, stored.payload) == (200, json_body)
    assert "WARC-Truncated" not in stored.warc
    assert stored.header("Content-Type") == "application/json"  # the headers the server sent
    with lib.session() as s:
        snap = s.get(Snapshot, res.snapshot_id)
        assert snap is not None
        notes = snap.provenance["notes"]
    assert notes == [f"{feed}: body refetched (the browser kept it from the page)"]


def test_an_address_typed_in_another_script_is_stored_as_the_browser_sends_it(
    captured: Captured,
) -> None:
    """A capture asked for ``/café?q=ü`` stores the address its WARC records carry
    (``/caf%C3%A9?q=%C3%BC``), as a queued page is, so its timeline and searches find it."""
    site, lib = captured.site, captured.lib
    page = b"<!doctype html><title>Caf\xc3\xa9</title><p>menu</p>"
    site.main.routes["/caf%C3%A9"] = lambda _q: Response(200, page, [], "text/html")

    res = captured.capture("/café?q=ü")
    encoded = site.url("/caf%C3%A9?q=%C3%BC")
    assert res.ok and res.url == encoded, res
    with lib.session() as s:
        snap = s.get(Snapshot, res.snapshot_id)
        assert snap is not None and snap.url == encoded
    assert encoded in _by_uri(read_warc(_warc_of(lib, res)))


def test_other_screens_images_on_a_slow_server_cost_the_page_nothing(captured: Captured) -> None:
    """The images fetched for other screens are extra: a server that never answers for one
    stops their fetch at its deadline; the page still settles and keeps its fidelity."""
    site = captured.site

    def slow(_q: Request) -> Response:
        site.stop_event.wait(60)  # let go when the site closes
        return Response(200, b"", [], "image/png")

    site.main.routes["/img/slow-2x.png"] = slow
    page = (
        "<!doctype html><title>Slow</title><p>slow candidates</p>"
        '<img src="/img/a.png" srcset="/img/a.png 1x, /img/slow-2x.png 2x" width="20">'
    )
    site.main.routes["/slow-srcset.html"] = lambda _q: Response(200, page.encode(), [], "text/html")

    started = time.monotonic()
    res = captured.capture("/slow-srcset.html", PageRules(page_timeout=20, settle_seconds=0.3))
    assert res.ok and res.fidelity == "high", res
    assert time.monotonic() - started < 40  # the server holds the image for 60 s
    assert site.main.requested("/img/slow-2x.png")  # it was asked for


def test_the_screenshot_shows_the_image_the_capture_screen_chose(captured: Captured) -> None:
    """The other screens' images are fetched after the screenshot: once cached, Chromium
    swapped the larger candidate into the page, and the screenshot (the evidence) showed
    the 2x image where a 1x screen, and every replay, show the 1x one."""
    import io

    from PIL import Image

    from tests.helpers.testsite import png

    site, lib = captured.site, captured.lib
    site.main.add_static("/img/red-1x.png", png(40, 40, (255, 0, 0)), "image/png")
    site.main.add_static("/img/blue-2x.png", png(80, 80, (0, 0, 255)), "image/png")
    page = (
        "<!doctype html><title>Screens</title><body style='margin:0'>"
        '<img src="/img/red-1x.png" srcset="/img/red-1x.png 1x, /img/blue-2x.png 2x"'
        ' width="40" height="40"><div style="height:3000px">a page taller than the'
        " window: the whole-page screenshot lays it out again</div>"
    )
    site.main.add_static("/screens.html", page)

    res = captured.capture("/screens.html", PageRules(page_timeout=20, settle_seconds=0.3))
    assert res.ok, res
    assert site.main.requested("/img/blue-2x.png")  # fetched for other screens all the same
    with lib.session() as s:
        snap = s.get(Snapshot, res.snapshot_id)
        assert snap is not None and snap.folder
    shot = Image.open(io.BytesIO((lib.abspath(snap.folder) / "screenshot.png").read_bytes()))
    assert shot.convert("RGB").getpixel((20, 20)) == (255, 0, 0)
