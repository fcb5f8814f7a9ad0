"""A local corpus of real-world-like pages for capture and fidelity tests (127.0.0.1 + .2).

Each page does what a kind of real site does, small enough to read:

* ``/docs/``: a static documentation site (CSS, logo, navigation);
* ``/spa/``: a single-page app that renders from an XHR'd JSON;
* ``/hash/``: a hash-routed app (docsify-like): ``#/`` and ``#/guide`` show other content;
* ``/files/report.pdf``: a PDF with a title in its metadata and a word found nowhere else;
* ``/viewer/``: a pdf.js-style viewer whose dedicated worker ``importScripts`` its library
  and ``fetch``es the PDF;
* ``/sw/``: a page with a service worker that caches a file on install and answers fetches;
* ``/workers/``: a dedicated, a shared and a service worker, each fetching a file;
* ``/lazy/``: lazy images far down the page;
* ``/scroll/``: infinite scroll (more items fetched as the page is scrolled);
* ``/frame/``: an iframe from the second host;
* ``/cache/``: one cacheable file fetched twice in one page load.

Every route is counted by the servers (``corpus.main.requests``), so a test can tell what
the browser fetched from the network, and replay tests can prove nothing reached it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.helpers.testsite import pdf_file, png
from tests.helpers.webserver import LocalServer, Request, Response

HTML = "text/html; charset=utf-8"
JS = "application/javascript"
JSON = "application/json"
CACHE = ("Cache-Control", "max-age=3600")

#: A word that appears only inside the PDF (its text layer), for search tests.
PDF_WORD = "zymurgical"
PDF_TITLE = "Quarterly Brewing Report"


def pdf_document(lines: list[str], title: str) -> bytes:
    """A one-page PDF showing ``lines`` (Helvetica 18 pt), with ``title`` in its Info."""
    ops = ["BT /F1 18 Tf 72 720 Td 22 TL"]
    ops += [f"({line}) Tj T*" for line in lines]
    stream = (" ".join(ops) + " ET").encode()
    return pdf_file(stream, info=b"/Title (" + title.encode() + b") /Producer (corpus)")


REPORT_PDF = pdf_document(
    ["Quarterly brewing report", f"The {PDF_WORD} figures rose this quarter."], PDF_TITLE
)

STYLE = "body { font: 16px sans-serif; margin: 24px; color: #223; } nav a { margin-right: 8px; }"

DOCS = """<!doctype html><html><head><meta charset="utf-8"><title>{title} - Corpus docs</title>
<link rel="stylesheet" href="/docs/style.css"></head><body>
<nav><img src="/docs/logo.png" width="32" height="32" alt="logo">
<a href="/docs/">Home</a><a href="/docs/guide.html">Guide</a>
<a href="/files/report.pdf">Report (PDF)</a></nav>
<h1>{title}</h1><p>{text}</p></body></html>"""

SPA = """<!doctype html><html><head><meta charset="utf-8"><title>SPA loading</title>
<link rel="stylesheet" href="/docs/style.css"></head><body><h1>Items</h1><ul id="items"></ul>
<script src="/spa/app.js"></script></body></html>"""
SPA_JS = """const xhr = new XMLHttpRequest();
xhr.open('GET', '/spa/api/items.json');
xhr.onload = () => {
  for (const item of JSON.parse(xhr.responseText).items) {
    const li = document.createElement('li'); li.textContent = item; items.appendChild(li);
  }
  document.title = 'SPA items';
};
xhr.send();"""

HASH = """<!doctype html><html><head><meta charset="utf-8"><title>Hash docs</title>
<link rel="stylesheet" href="/docs/style.css"></head><body>
<nav><a href="#/">Home</a><a href="#/guide">Guide</a></nav><main id="main">loading</main>
<script src="/hash/router.js"></script></body></html>"""
HASH_JS = """function show() {
  const route = (location.hash || '#/').slice(1);
  const name = route === '/' ? 'home' : route.replace(/^\\//, '');
  fetch('/hash/pages/' + name + '.json').then(r => r.json()).then(page => {
    const main = document.getElementById('main');
    main.innerHTML = '<h1>' + page.title + '</h1><p>' + page.text + '</p>';
    document.title = page.title + ' - Hash docs';
  });
}
addEventListener('hashchange', show); show();"""

VIEWER = """<!doctype html><html><head><meta charset="utf-8"><title>Viewer</title>
<link rel="stylesheet" href="/docs/style.css"></head><body><h1>PDF viewer</h1>
<p id="status">loading</p><script>
const worker = new Worker('/viewer/pdf.worker.js');
worker.postMessage('/files/report.pdf');
worker.onmessage = e => { document.getElementById('status').textContent = e.data; };
</script></body></html>"""
VIEWER_LIB = "self.describe = bytes => 'PDF ' + bytes.byteLength + ' bytes, ' + "
VIEWER_LIB += "String.fromCharCode(...new Uint8Array(bytes).slice(0, 5));"
VIEWER_WORKER = """importScripts('/viewer/pdf-lib.js');
onmessage = e => fetch(e.data).then(r => r.arrayBuffer()).then(b => postMessage(describe(b)));"""

SW_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Offline-first</title>
<link rel="stylesheet" href="/docs/style.css"></head><body><h1>Service worker page</h1>
<p id="status">registering</p><script>
navigator.serviceWorker.register('/sw/sw.js').then(() => navigator.serviceWorker.ready)
  .then(() => document.getElementById('status').textContent = 'worker ready');
</script></body></html>"""
SW_JS = """importScripts('/sw/sw-lib.js');
self.addEventListener('install', e => e.waitUntil(
  caches.open('v1').then(c => c.addAll(['/sw/offline.json']))));
self.addEventListener('activate', e => e.waitUntil(clients.claim()));"""

WORKERS = """<!doctype html><html><head><meta charset="utf-8"><title>Workers</title></head><body>
<p id="dedicated">-</p><p id="shared">-</p><p id="sw">-</p><script>
const w = new Worker('/workers/dedicated.js');
w.onmessage = e => { document.getElementById('dedicated').textContent = e.data; };
setTimeout(() => w.postMessage('go'), 1000);
const s = new SharedWorker('/workers/shared.js');
s.port.onmessage = e => { document.getElementById('shared').textContent = e.data; };
s.port.start(); setTimeout(() => s.port.postMessage('go'), 1000);
navigator.serviceWorker.register('/workers/sw.js').then(() => navigator.serviceWorker.ready)
  .then(() => { document.getElementById('sw').textContent = 'ready'; });
</script></body></html>"""
DEDICATED_JS = """importScripts('/workers/dedicated-lib.js');
onmessage = () => fetch('/workers/dedicated.json').then(r => r.text()).then(t => postMessage(t));"""
SHARED_JS = """onconnect = e => { const port = e.ports[0];
  port.onmessage = () => fetch('/workers/shared.json').then(r => r.text())
    .then(t => port.postMessage(t)); };"""
WORKERS_SW = """importScripts('/workers/sw-lib.js');
self.addEventListener('install', e => e.waitUntil(Promise.all([
  fetch('/workers/sw.json'),
  caches.open('v1').then(c => c.addAll(['/workers/offline.css'])),
])));"""

LAZY = """<!doctype html><html><head><meta charset="utf-8"><title>Lazy gallery</title></head>
<body><h1>Gallery</h1><div style="height: 2400px">scroll down</div>
<img loading="lazy" src="/lazy/1.png" width="64" height="64">
<img loading="lazy" src="/lazy/2.png" width="64" height="64"></body></html>"""

SCROLL = """<!doctype html><html><head><meta charset="utf-8"><title>Feed</title></head><body>
<h1>Feed</h1><div id="feed"></div><script>
let next = 1, busy = false;
function more() {
  if (busy || next > 3) return; busy = true;
  fetch('/scroll/items?page=' + next).then(r => r.json()).then(d => {
    for (const t of d.items) { const p = document.createElement('p');
      p.style.height = '500px'; p.textContent = t; feed.appendChild(p); }
    next += 1; busy = false;
  });
}
addEventListener('scroll', () => {
  if (innerHeight + scrollY > document.body.scrollHeight - 200) more(); });
more();
</script></body></html>"""

FRAME = """<!doctype html><html><head><meta charset="utf-8"><title>Embed</title></head><body>
<h1>Embedded</h1><iframe src="{other}/embed.html" width="400" height="200"></iframe>
</body></html>"""
EMBED = """<!doctype html><html><head><title>embedded</title></head><body style="margin:0">
<p>Inside the frame</p><img src="/embed.png" width="16" height="16"></body></html>"""

CACHED = """<!doctype html><html><head><meta charset="utf-8"><title>Twice</title></head><body>
<img src="/cache/pic.png"><p id="out">-</p><script>
fetch('/cache/data.json').then(r => r.text()).then(() =>
  setTimeout(() => fetch('/cache/data.json').then(r => r.text())
    .then(t => { document.getElementById('out').textContent = t; }), 300));
</script></body></html>"""


@dataclass
class Corpus:
    """The running corpus: ``main`` on 127.0.0.1, ``other`` (the iframe's host) on .2."""

    main: LocalServer
    other: LocalServer

    def url(self, path: str) -> str:
        return self.main.url(path)

    #: Every page of the corpus, by name (the fidelity suite captures each).
    PAGES = {
        "docs": "/docs/",
        "spa": "/spa/",
        "hash": "/hash/#/guide",
        "pdf": "/files/report.pdf",
        "viewer": "/viewer/",
        "service-worker": "/sw/",
        "lazy": "/lazy/",
        "scroll": "/scroll/",
        "iframe": "/frame/",
        "workers": "/workers/",
        "cache": "/cache/",
    }

    def mark(self) -> tuple[int, int]:
        """Where the servers' request logs end now (for :meth:`requests_since`)."""
        return len(self.main.requests), len(self.other.requests)

    def requests_since(self, mark: tuple[int, int]) -> list[Request]:
        """Every request either server received since ``mark``."""
        return [*self.main.requests[mark[0] :], *self.other.requests[mark[1] :]]

    def close(self) -> None:
        self.main.stop()
        self.other.stop()


def _static(server: LocalServer, path: str, body: bytes | str, ctype: str, cache: bool) -> None:
    data = body.encode() if isinstance(body, str) else body
    headers = [CACHE] if cache else []
    server.routes[path] = lambda _req: Response(200, data, headers, ctype)


def start_corpus() -> Corpus:
    """Start both servers with every route; call ``close()`` when done."""
    corpus = Corpus(LocalServer().start(), LocalServer(host="127.0.0.2").start())
    m, other = corpus.main, corpus.other
    pages: dict[str, tuple[bytes | str, str]] = {
        "/docs/": (DOCS.format(title="Home", text="Welcome to the corpus documentation."), HTML),
        "/docs/guide.html": (DOCS.format(title="Guide", text="How to use the corpus."), HTML),
        "/spa/": (SPA, HTML),
        "/hash/": (HASH, HTML),
        "/viewer/": (VIEWER, HTML),
        "/sw/": (SW_PAGE, HTML),
        "/workers/": (WORKERS, HTML),
        "/lazy/": (LAZY, HTML),
        "/scroll/": (SCROLL, HTML),
        "/frame/": (FRAME.format(other=other.url("").rstrip("/")), HTML),
        "/cache/": (CACHED, HTML),
    }
    for path, (body, ctype) in pages.items():
        _static(m, path, body, ctype, cache=False)
    assets: dict[str, tuple[bytes | str, str]] = {
        "/docs/style.css": (STYLE, "text/css"),
        "/docs/logo.png": (png(32, 32, (40, 90, 160)), "image/png"),
        "/files/report.pdf": (REPORT_PDF, "application/pdf"),
        "/spa/app.js": (SPA_JS, JS),
        "/spa/api/items.json": ('{"items": ["alpha", "beta", "gamma"]}', JSON),
        "/hash/router.js": (HASH_JS, JS),
        "/hash/pages/home.json": ('{"title": "Home", "text": "The hash home route."}', JSON),
        "/hash/pages/guide.json": (
            '{"title": "Guide", "text": "Only the guide route shows this."}',
            JSON,
        ),
        "/viewer/pdf.worker.js": (VIEWER_WORKER, JS),
        "/viewer/pdf-lib.js": (VIEWER_LIB, JS),
        "/sw/sw.js": (SW_JS, JS),
        "/sw/sw-lib.js": ("self.version = 1;", JS),
        "/sw/offline.json": ('{"offline": true}', JSON),
        "/workers/dedicated.js": (DEDICATED_JS, JS),
        "/workers/dedicated-lib.js": ("self.lib = 'dedicated';", JS),
        "/workers/dedicated.json": ('{"from": "dedicated worker"}', JSON),
        "/workers/shared.js": (SHARED_JS, JS),
        "/workers/shared.json": ('{"from": "shared worker"}', JSON),
        "/workers/sw.js": (WORKERS_SW, JS),
        "/workers/sw-lib.js": ("self.lib = 'service';", JS),
        "/workers/sw.json": ('{"from": "service worker"}', JSON),
        "/workers/offline.css": ("h1 { color: teal }", "text/css"),
        "/lazy/1.png": (png(64, 64, (200, 40, 40)), "image/png"),
        "/lazy/2.png": (png(64, 64, (40, 200, 40)), "image/png"),
        "/cache/pic.png": (png(8, 8, (9, 9, 9)), "image/png"),
        "/cache/data.json": ('{"cached": true}', JSON),
    }
    for path, (body, ctype) in assets.items():
        _static(m, path, body, ctype, cache=True)

    def items(req: Request) -> Response:
        page = req.path.rsplit("=", 1)[-1]
        body = json.dumps({"items": [f"page {page} item {i}" for i in range(4)]})
        return Response(200, body.encode(), [CACHE], JSON)

    m.routes["/scroll/items"] = items
    _static(other, "/embed.html", EMBED, HTML, cache=False)
    _static(other, "/embed.png", png(16, 16, (120, 30, 160)), "image/png", cache=True)
    return corpus


@pytest.fixture(scope="module")
def corpus() -> Iterator[Corpus]:
    """A running :class:`Corpus` for a test module."""
    running = start_corpus()
    try:
        yield running
    finally:
        running.close()
