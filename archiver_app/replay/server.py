"""``archiver serve``: archived pages over HTTP for an external browser, on 127.0.0.1 only.

Every URL starts with a random token made for this run (``/<token>/<timestamp>/<url>``),
so other local users and web pages cannot read the library without it. Responses carry a
Content-Security-Policy that only allows this origin, so an archived page cannot make the
browser fetch anything live; absolute links in HTML and CSS are rewritten to stay here,
and root-relative requests (``/style.css``) are mapped through the ``Referer``.
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

CSP = (
    "default-src 'self' 'unsafe-inline' 'unsafe-eval' data: blob:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'self'"
)
_ABSOLUTE = re.compile(rb"""(?<=["'(=\s])(https?:)?//(?=[A-Za-z0-9\[])""")
_REWRITE_MIMES = ("text/html", "text/css", "application/xhtml")
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
    return re.sub(r"^(https?):/(?!/)", r"\1://", url)


def rewrite_links(body: bytes, prefix: str) -> bytes:
    """Point absolute ``http(s)://`` and ``//`` links in HTML/CSS at this server."""

    def sub(match: re.Match[bytes]) -> bytes:
        scheme = match.group(1) or b"https:"
        return prefix.encode() + scheme + b"//"

    return _ABSOLUTE.sub(sub, body)


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
            try:
                response = server.replayer.serve(url, at, range_header=self.headers.get("Range"))
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
                headers.append(("Location", prefix + quote(response.location, safe=":/?&=%#+@,;~")))
            body = response.body
            if response.status == 200 and response.content_type.startswith(_REWRITE_MIMES):
                body = rewrite_links(body, f"/{server.token}/{response.ts[:14]}/")
            self._send(response.status, headers, body, send_body)

    return Handler
