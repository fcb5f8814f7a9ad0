"""A real local web site for capture, replay and crawl tests (served on 127.0.0.1).

It exercises what real pages do: CSS with ``@import`` and ``url()`` fonts and backgrounds,
``srcset`` images, lazy images that load on scroll, ``fetch()`` and XHR JSON, a 301 -> 302
redirect chain, duplicate ``Set-Cookie``, gzip and brotli bodies, an iframe from a second
host (a second server on 127.0.0.2), a video served with range requests, a 404
subresource, a non-UTF-8 page, a PDF link and a long-poll that never finishes.

Every body is deterministic, so tests can compare stored bytes with :attr:`LocalSite.bodies`.
Use the ``test_site`` fixture (registered in tests/conftest.py) or :func:`start_site`.
Extra pages: ``/page?n=N`` (small realistic pages for benchmarks and crawls, each linking to
the next two), ``/hang`` (never answers), ``/slow.html`` (loads an image, then waits forever
for ``/hang``), ``/huge`` (a 2 GB streamed body), ``/data.json``, ``/img/photo.png``,
``/plain.txt``.
"""

from __future__ import annotations

import gzip
import io
import math
import struct
import threading
import wave
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import brotli
import pytest

from tests.helpers.webserver import LocalServer, Request, Response

HTML = "text/html; charset=utf-8"


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A valid PNG of one colour (deterministic bytes)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    raw = zlib.compress(row * height, 9)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def pdf(text: str) -> bytes:
    """A minimal one-page PDF showing ``text``."""
    return pdf_file(f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET".encode())


def pdf_file(stream: bytes, *, info: bytes | None = None) -> bytes:
    """A one-page PDF drawing the content ``stream`` in Helvetica; ``info``: the body of
    its Info dictionary (title, producer), when it has one."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    if info is not None:
        objects.append(b"<< " + info + b" >>")
    extra = b"" if info is None else b" /Info %d 0 R" % len(objects)
    return pdf_of_objects(objects, trailer=extra)


def pdf_of_objects(objects: list[bytes], *, trailer: bytes = b"") -> bytes:
    """A PDF of ``objects`` (numbered from 1; the first is the catalog), with its
    cross-reference table; ``trailer``: more of the trailer dictionary."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        trailer,
        xref,
    )
    return bytes(out)


#: srcset candidates the capture browser's screen does not show: capture fetches them
#: (replay on another screen asks for them), a replay on the same screen does not.
OTHER_CANDIDATES = ("/img/a-2x.png", "/img/wide.png", "/img/wide,2x.png")
VIDEO = bytes(range(256)) * 2048  # 512 KiB of "video" (the browser requests it in ranges)
FONT = b"wOF2" + bytes(1020)  # not a real font: the browser fetches it, then rejects it

PAGE_TEXT = "The quick archivist captures every resource of this page."


def index_html(other_origin: str) -> str:
    lazy = "\n".join(
        f'<div style="height:900px">section {i}</div><img loading="lazy" '
        f'src="/img/lazy{i}.png" alt="lazy {i}" width="40" height="40">'
        for i in range(1, 4)
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Archiver test site</title>
<link rel="stylesheet" href="/css/main.css">
<link rel="stylesheet" href="/br/style.css">
<script src="/gz/app.js"></script>
</head><body>
<h1 class="fancy">Archiver test site</h1>
<p id="intro">{PAGE_TEXT}</p>
<img src="/img/a.png" srcset="/img/a.png 1x, /img/a-2x.png 2x" alt="srcset" width="20">
<picture><source media="(min-width: 9000px)" srcset="/img/wide.png 1x, /img/wide,2x.png 2x">
<img src="/img/a.png" alt="picture" width="20"></picture>
<img src="/redirect/start" alt="redirected" width="20">
<img src="/missing.png" alt="404" width="20">
<video src="/media/clip.webm" preload="auto" width="40" height="30" muted></video>
<iframe src="{other_origin}/frame.html" width="200" height="100"></iframe>
<ul>
<li><a href="/latin1.html">latin-1 page</a></li>
<li><a href="/doc.pdf">a PDF</a></li>
<li><a href="/page?n=1#top">page 1</a></li>
<li><a href="mailto:someone@example.org">mail</a></li>
</ul>
<div id="api"></div>
<script src="/js/app.js"></script>
{lazy}
<p>The end.</p>
</body></html>
"""


APP_JS = """
fetch('/api/data.json').then(r => r.json()).then(d => {
  document.getElementById('api').textContent = 'fetched ' + d.items.length + ' items';
});
var x = new XMLHttpRequest();
x.open('GET', '/api/xhr.json');
x.onload = function () { document.getElementById('api').dataset.xhr = x.responseText; };
x.send();
fetch('/cookies', {credentials: 'same-origin'});
fetch('/api/echo', {method: 'POST', headers: {'Content-Type': 'application/json'},
                    body: JSON.stringify({hello: 'archive'})});
fetch('/longpoll').catch(function () {});
"""

GZ_JS = "window.gzipLoaded = true; /* " + "padding " * 200 + "*/\n"
MAIN_CSS = """@import url("/css/imported.css");
@font-face { font-family: "Fancy"; src: url("/fonts/fancy.woff2") format("woff2"); }
body { background: #fff url("/img/bg.png") repeat-x; }
h1.fancy { font-family: "Fancy", serif; }
"""
IMPORTED_CSS = "p { color: #222; } #intro { background-image: url('/img/intro-bg.png'); }\n"
BR_CSS = "ul { list-style: square; } /* " + "brotli " * 300 + "*/\n"
FRAME_HTML = """<!doctype html><html><head><title>frame</title></head><body>
<p>Inside the frame from the second host.</p><img src="/frame.png" alt="frame image">
</body></html>"""
LATIN1_HTML = (
    "<!doctype html><html><head><title>Caf\xe9 page</title></head><body>"
    "<p>Un caf\xe9 na\xefve \xe0 la cr\xe8me.</p></body></html>"
).encode("latin-1")


#: A page whose images load but whose script never arrives (the load event never fires).
SLOW_HTML = """<!doctype html><html><head><title>Slow</title></head><body>
<p>Half loaded.</p><img src="/img/a.png" alt="a"><script src="/hang"></script></body></html>"""


#: A page that keeps fetching until it is closed, and fetches again as it is unloaded.
LATE_HTML = """<!doctype html><html><head><title>Late requests</title></head><body>
<p>This page never stops asking.</p><a href="/page?n=1">page 1</a>
<script>
var i = 0;
setInterval(function () { fetch('/api/data.json?tick=' + (i++)).catch(function () {}); }, 100);
setTimeout(function () { fetch('/longpoll?late').catch(function () {}); }, 300);
window.addEventListener('pagehide', function () {
  fetch('/api/xhr.json?unload', {keepalive: true}).catch(function () {});
});
</script></body></html>"""


def bench_page(n: int) -> str:
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Page {n}</title><link rel="stylesheet" href="/css/imported.css"></head><body>
<h1>Page {n}</h1><p>Benchmark page number {n}. {PAGE_TEXT}</p>
<img src="/img/a.png" alt="shared" width="20"><img src="/img/p{n % 10}.png" alt="own" width="20">
<a href="/page?n={n + 1}">next</a> <a href="/page?n={n + 2}">after next</a>
<div style="height:1500px"></div><img loading="lazy" src="/img/lazy1.png" alt="lazy">
<script>fetch('/api/data.json');</script>
</body></html>"""


@dataclass
class LocalSite:
    """The running test site: two servers and the exact bytes every path serves."""

    __test__ = False

    main: LocalServer
    other: LocalServer
    bodies: dict[str, bytes] = field(default_factory=dict)  # route -> decoded body
    stop_event: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str = "/") -> str:
        return self.main.url(path)

    def other_url(self, path: str = "/") -> str:
        return self.other.url(path)

    @property
    def index_url(self) -> str:
        return self.url("/")

    def page_url(self, n: int) -> str:
        return self.url(f"/page?n={n}")

    def close(self) -> None:
        self.stop_event.set()
        self.main.stop()
        self.other.stop()


def _static(
    site: LocalSite, route: str, body: bytes, ctype: str, headers: tuple[tuple[str, str], ...] = ()
) -> Callable[[Request], Response]:
    site.bodies[route] = body
    extra = list(headers)
    return lambda _req: Response(200, body, extra, ctype)


def _range_handler(data: bytes, ctype: str) -> Callable[[Request], Response]:
    def handle(req: Request) -> Response:
        header = req.headers.get("Range") or req.headers.get("range")
        base = [("Accept-Ranges", "bytes")]
        if not header or not header.startswith("bytes="):
            return Response(200, data, base, ctype)
        start_s, _, end_s = header[6:].split(",")[0].partition("-")
        start = int(start_s or 0)
        end = min(int(end_s) if end_s else len(data) - 1, len(data) - 1)
        part = data[start : end + 1]
        return Response(
            206, part, [*base, ("Content-Range", f"bytes {start}-{end}/{len(data)}")], ctype
        )

    return handle


def start_site() -> LocalSite:
    """Start both servers and register every route; call ``close()`` when done."""
    site = LocalSite(LocalServer().start(), LocalServer(host="127.0.0.2").start())
    main, other, stop = site.main, site.other, site.stop_event
    other_origin = f"http://127.0.0.2:{other.port}"
    r = main.routes

    r["/"] = _static(site, "/", index_html(other_origin).encode(), HTML)
    r["/css/main.css"] = _static(site, "/css/main.css", MAIN_CSS.encode(), "text/css")
    r["/css/imported.css"] = _static(site, "/css/imported.css", IMPORTED_CSS.encode(), "text/css")
    r["/fonts/fancy.woff2"] = _static(site, "/fonts/fancy.woff2", FONT, "font/woff2")
    r["/js/app.js"] = _static(site, "/js/app.js", APP_JS.encode(), "application/javascript")
    images = {
        "/img/bg.png": (200, 10, 10),
        "/img/intro-bg.png": (10, 200, 10),
        "/img/a.png": (10, 10, 200),
        "/img/a-2x.png": (20, 20, 220),
        "/img/wide.png": (30, 30, 230),
        "/img/wide,2x.png": (40, 40, 240),
        "/img/final.png": (200, 200, 10),
        "/img/lazy1.png": (1, 2, 3),
        "/img/lazy2.png": (4, 5, 6),
        "/img/lazy3.png": (7, 8, 9),
        "/img/photo.png": (90, 60, 30),
        **{f"/img/p{i}.png": (i, 100, 200) for i in range(10)},
    }
    for route, colour in images.items():
        r[route] = _static(site, route, png(8, 8, colour), "image/png")

    site.bodies["/gz/app.js"] = GZ_JS.encode()
    gz_body = gzip.compress(GZ_JS.encode(), mtime=0)
    r["/gz/app.js"] = lambda _q: Response(
        200, gz_body, [("Content-Encoding", "gzip"), ("Vary", "Accept-Encoding")], "text/javascript"
    )
    site.bodies["/br/style.css"] = BR_CSS.encode()
    br_body = brotli.compress(BR_CSS.encode())
    r["/br/style.css"] = lambda _q: Response(200, br_body, [("Content-Encoding", "br")], "text/css")

    r["/redirect/start"] = lambda _q: Response(
        301, b"moved", [("Location", "/redirect/middle")], "text/plain"
    )
    r["/redirect/middle"] = lambda _q: Response(
        302, b"found", [("Location", "/img/final.png")], "text/plain"
    )
    site.bodies["/redirect/start"], site.bodies["/redirect/middle"] = b"moved", b"found"

    cookies = b'{"cookies": "set"}'
    site.bodies["/cookies"] = cookies
    r["/cookies"] = lambda _q: Response(
        200,
        cookies,
        [("Set-Cookie", "a=1; Path=/"), ("Set-Cookie", "b=2; Path=/; HttpOnly")],
        "application/json",
    )
    data = b'{"items": [1, 2, 3]}'
    r["/api/data.json"] = _static(site, "/api/data.json", data, "application/json")
    r["/api/xhr.json"] = _static(site, "/api/xhr.json", b'{"xhr": true}', "application/json")
    r["/api/echo"] = lambda q: Response(200, b"echo:" + q.body, [], "text/plain")
    r["/media/clip.webm"] = _range_handler(VIDEO, "video/webm")
    site.bodies["/media/clip.webm"] = VIDEO

    def longpoll(_q: Request) -> Response:
        def never(write: Callable[[bytes], None]) -> None:
            stop.wait(600)

        return Response(200, stream=never, content_type="application/json")

    r["/longpoll"] = longpoll
    r["/latin1.html"] = _static(site, "/latin1.html", LATIN1_HTML, "text/html; charset=iso-8859-1")
    r["/doc.pdf"] = _static(site, "/doc.pdf", pdf("Archived PDF text"), "application/pdf")
    r["/data.json"] = _static(site, "/data.json", b'{"kind": "json main"}', "application/json")
    r["/plain.txt"] = _static(site, "/plain.txt", b"plain text main resource\n", "text/plain")
    r["/tables.csv"] = _static(site, "/tables.csv", b"year,count\n2024,7\n" * 200, "text/csv")
    r["/tall.html"] = _static(
        site, "/tall.html", b'<title>Tall</title><div style="height: 2000000px">top</div>',
        "text/html",
    )  # fmt: skip  # taller than Chromium can take in one screenshot
    r["/export.html"] = _static(
        site, "/export.html", b"<title>Export</title><p>rows</p>", "text/html",
        (("Content-Disposition", 'attachment; filename="Rows 2026.html"'),),
    )  # fmt: skip

    def page(q: Request) -> Response:
        n = int(parse_qs(urlsplit(q.path).query).get("n", ["0"])[0])
        return Response(200, bench_page(n).encode(), [], HTML)

    r["/page"] = page

    def hang(_q: Request) -> Response:
        stop.wait(600)
        return Response(200, b"too late", [], "text/plain")

    r["/hang"] = hang
    r["/slow.html"] = _static(site, "/slow.html", SLOW_HTML.encode(), HTML)
    r["/late.html"] = _static(site, "/late.html", LATE_HTML.encode(), HTML)

    def huge(_q: Request) -> Response:
        chunk = b"<p>" + b"x" * 65530 + b"</p>"

        def endless(write: Callable[[bytes], None]) -> None:
            sent = 0
            while sent < 2 << 30 and not stop.is_set():
                write(chunk)
                sent += len(chunk)

        return Response(200, stream=endless, content_type="text/html")

    r["/huge"] = huge

    o = other.routes
    o["/frame.html"] = _static(site, "/frame.html", FRAME_HTML.encode(), HTML)
    o["/frame.png"] = _static(site, "/frame.png", png(4, 4, (50, 50, 50)), "image/png")
    return site


@pytest.fixture
def test_site() -> Iterator[LocalSite]:
    """A running :class:`LocalSite`, closed after the test."""
    site = start_site()
    try:
        yield site
    finally:
        site.close()


def wav_tone(seconds: float = 2.0) -> bytes:
    """A real mono 8 kHz tone of ``seconds`` that the browser's player can decode."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        frames = int(8000 * seconds)
        w.writeframes(
            b"".join(struct.pack("<h", int(8000 * math.sin(i / 5))) for i in range(frames))
        )
    return out.getvalue()
