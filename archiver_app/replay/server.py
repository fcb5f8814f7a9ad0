"""``archiver serve``: archived pages over HTTP for an external browser, on 127.0.0.1 only.

Every URL starts with a random token made for this run (``/<token>/<timestamp>/<url>``),
so other local users and web pages cannot read the library without it. Responses carry a
Content-Security-Policy that only allows this origin, so an archived page cannot make the
browser fetch anything live; absolute links in HTML and CSS (of any status) and stored
``Refresh`` headers are rewritten to stay here, and root-relative requests (``/style.css``)
are mapped through the ``Referer``.
"""

from __future__ import annotations

import re
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from archiver_app.replay.errors import NotArchived, ReplayError
from archiver_app.replay.replayer import Replayer
from archiver_app.replay.response import ReplayResponse

CSP = (
    "default-src 'self' 'unsafe-inline' 'unsafe-eval' data: blob:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'self'"
)
_ABSOLUTE = re.compile(rb"""(?<=["'(=\s])(https?:)?//(?=[A-Za-z0-9\[])""", re.IGNORECASE)
_REWRITE_MIMES = ("text/html", "text/css", "application/xhtml")
_URL_SAFE = ":/?&=%#+@,;~"
# "Refresh: 5; url=next.html" (also "5, URL='next.html'" and a bare "5"), as browsers read it.
_REFRESH = re.compile(
    r"""^\s*(?P<delay>[\d.]*)\s*(?:[;,]\s*(?:url\s*=\s*)?(?P<url>.*?))?\s*$""",
    re.IGNORECASE | re.DOTALL,
)
_PATH = re.compile(r"^/(?P<token>[^/]+)/(?P<ts>\d{4,17}|latest)/(?P<url>.+)$")


class ReplayServer:
    """Serve ``library`` on ``127.0.0.1:port`` (0 = a free port) until :meth:`close`."""

    def __init__(self, library: Any, *, port: int = 0, token: str | None = None) -> None:
        self.replayer = Replayer.for_library(library)
        self.token = token or secrets.token_urlsafe(18)
        handler = _make_handler(self)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{self.token}/"

    def url_for(self, url: str, ts: str = "latest") -> str:
        return f"{self.base_url}{ts}/{url}"

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def start(self) -> ReplayServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self.httpd.shutdown()
        self.httpd.server_close()


def _target(server: ReplayServer, path: str, referer: str | None) -> tuple[str, str] | None:
    """(timestamp, original URL) for a request path, or None when it lacks the token."""
    match = _PATH.match(path)
    if match and secrets.compare_digest(match.group("token"), server.token):
        return match.group("ts"), _fix_scheme_slashes(match.group("url"))
    if referer:  # "/style.css" asked by an archived page: resolve against that page
        ref = urlsplit(referer)
        ref_match = _PATH.match(ref.path + (f"?{ref.query}" if ref.query else ""))
        if ref_match and secrets.compare_digest(ref_match.group("token"), server.token):
            page_url = _fix_scheme_slashes(ref_match.group("url"))
            return ref_match.group("ts"), urljoin(page_url, path)
    return None


def _fix_scheme_slashes(url: str) -> str:
    # Some clients squash "https://" to "https:/" inside a path.
    return re.sub(r"^(https?):/(?!/)", r"\1://", url, flags=re.IGNORECASE)


def rewrite_refresh(value: str, page_url: str, prefix: str) -> str | None:
    """A ``Refresh`` header whose target is this server, or None to drop it.

    The target is resolved against ``page_url``; one that is not http(s) (``javascript:``,
    unparsable...) is dropped, since the browser would otherwise follow it as stored.
    """
    match = _REFRESH.match(value)
    if match is None:
        return None
    delay = match.group("delay") or "0"
    target = (match.group("url") or "").strip().strip("'\"")
    if not target:
        return delay  # reload the same (archived) page
    try:
        absolute = urljoin(page_url, target)
    except ValueError:
        return None
    if urlsplit(absolute).scheme.lower() not in ("http", "https"):
        return None
    return f"{delay}; url={prefix}{quote(absolute, safe=_URL_SAFE)}"


def rewrite_links(body: bytes, prefix: str) -> bytes:
    """Point absolute ``http(s)://`` and ``//`` links in HTML/CSS at this server."""

    def sub(match: re.Match[bytes]) -> bytes:
        scheme = (match.group(1) or b"https:").lower()
        return prefix.encode() + scheme + b"//"

    return _ABSOLUTE.sub(sub, body)


def _rewritable(response: ReplayResponse) -> bool:
    return response.content_type.lower().startswith(_REWRITE_MIMES)


def _rewrite_refresh_headers(
    headers: list[tuple[str, str]], page_url: str, prefix: str
) -> list[tuple[str, str]]:
    kept: list[tuple[str, str]] = []
    for name, value in headers:
        if name.lower() == "refresh":
            rewritten = rewrite_refresh(value, page_url, prefix)
            if rewritten is not None:
                kept.append((name, rewritten))
        else:
            kept.append((name, value))
    return kept


def _make_handler(server: ReplayServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "Archiver"
        disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms stalls

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self._serve(send_body=True)

        def do_HEAD(self) -> None:
            self._serve(send_body=False)

        def _send(
            self, status: int, headers: list[tuple[str, str]], body: bytes, send_body: bool
        ) -> None:
            self.send_response(status)
            for name, value in headers:
                if name.lower() not in ("content-length", "content-security-policy"):
                    self.send_header(name, value)
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if send_body:
                self.wfile.write(body)

        def _plain(self, status: int, message: str, send_body: bool) -> None:
            self._send(
                status, [("Content-Type", "text/plain; charset=utf-8")], message.encode(), send_body
            )

        def _serve(self, *, send_body: bool) -> None:
            target = _target(server, self.path, self.headers.get("Referer"))
            if target is None:
                self._plain(
                    403,
                    "forbidden: this address needs the token printed by 'archiver serve'\n",
                    send_body,
                )
                return
            ts, url = target
            at = None if ts == "latest" else ts
            range_header = self.headers.get("Range")
            try:
                response = server.replayer.serve(url, at, range_header=range_header)
                if range_header and _rewritable(response) and response.status in (206, 416):
                    # Rewriting links changes the body's length: serve HTML/CSS whole.
                    response = server.replayer.serve(url, at)
            except NotArchived:
                self._plain(404, f"not archived: {url}\n", send_body)
                return
            except ReplayError as exc:
                self._plain(502, f"{exc}\n", send_body)
                return
            prefix = f"/{server.token}/{response.ts[:14]}/"
            headers = list(response.headers)
            if response.location:
                headers = [(k, v) for k, v in headers if k.lower() != "location"]
                headers.append(("Location", prefix + quote(response.location, safe=_URL_SAFE)))
            headers = _rewrite_refresh_headers(headers, response.url, prefix)
            body = response.body
            if _rewritable(response):  # every status: error pages have links too
                body = rewrite_links(body, prefix)
            self._send(response.status, headers, body, send_body)

    return Handler
