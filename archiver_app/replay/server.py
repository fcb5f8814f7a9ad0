"""``archiver serve``: archived pages over HTTP for an external browser, on 127.0.0.1 only.

Isolation is built by the browser's own rules, not by rewriting alone:

- Two listeners. The *shell* port (the address printed) serves only a frame page; the
  archived content lives on a second *content* port, a different origin, in an
  ``<iframe sandbox>`` without ``allow-top-navigation`` or ``allow-popups``. The shell's
  ``frame-src`` names only the content origin, so every navigation of the frame (links,
  forms, refreshes, script) is refused by the browser unless it stays in the archive, and
  archived content can neither navigate the tab nor open windows, nor script the shell.
- Every content response carries a Content-Security-Policy confining fetches, forms,
  frames and workers to the content origin (plus the same ``sandbox``, so a content URL
  opened outside the shell is just as confined; a top-level load of one is sent to the
  shell), ``Referrer-Policy: no-referrer`` and no archived policy header
  (:mod:`archiver_app.replay.response` renames them to ``X-Archive-Orig-*``).
- The per-run token is never in a URL a page can see: ``/<token>/<ts>/<url>`` sets an
  HttpOnly, SameSite=Strict cookie bound to 127.0.0.1 and redirects to ``/<ts>/<url>``.
  Requests without the cookie are refused, and so is any ``Host`` but the listener's own
  ``127.0.0.1:<port>`` (DNS rebinding), and any service-worker script.
- HTML and CSS are rewritten too (:mod:`archiver_app.replay.rewrite`) so links work and
  navigations to live URLs never start; every HTML page first gets a script
  (:mod:`archiver_app.replay.guard`) that cancels any navigation of its frames that would
  leave the archive, before Chromium starts it.

What a server cannot tell the browser: Chromium opens a TCP connection to a navigation's
host when the navigation starts, before ``frame-src`` refuses it; that is what the guard
script is for. ``docs/replay.md`` says what holds and how it is tested.
"""

from __future__ import annotations

import re
import secrets
import threading
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from archiver_app.replay.errors import NotArchived, ReplayError
from archiver_app.replay.replayer import Replayer
from archiver_app.replay.response import ReplayResponse, original_header
from archiver_app.replay.rewrite import (
    URL_SAFE,
    guard_navigation,
    rewrite_links,
    rewrite_refresh,
)

__all__ = ["ReplayServer", "rewrite_links", "rewrite_refresh"]

HOST = "127.0.0.1"
SANDBOX = "allow-scripts allow-forms allow-same-origin allow-modals"
_REWRITE_MIMES = ("text/html", "text/css", "application/xhtml")
_PATH = re.compile(r"^/(?P<ts>\d{4,17}|latest)/(?P<url>.+)$")
_TOKEN_PATH = re.compile(r"^/(?P<token>[^/]+)(?P<rest>/(?:\d{4,17}|latest)/.+)$")
_FRAME = """<!doctype html><html><head><meta charset="utf-8"><title>Archiver: {title}</title>
<style>html,body,iframe{{margin:0;border:0;width:100%;height:100%;display:block}}</style>
</head><body><iframe src="{src}" sandbox="{sandbox}" referrerpolicy="no-referrer"
 title="archived page"></iframe></body></html>"""


def content_csp(shell_origin: str) -> str:
    """The policy on every content response: everything stays on the content origin."""
    return (
        "default-src 'self' 'unsafe-inline' 'unsafe-eval' data: blob:; "
        "connect-src 'self'; form-action 'self'; frame-src 'self' blob:; "
        "worker-src 'self' blob:; manifest-src 'none'; base-uri 'self'; "
        f"frame-ancestors 'self' {shell_origin}; sandbox {SANDBOX}"
    )


def shell_csp(content_origin: str) -> str:
    """The shell page may only frame the content origin: no script, no forms."""
    return (
        f"default-src 'none'; style-src 'unsafe-inline'; frame-src {content_origin}; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


class _Listener(ThreadingHTTPServer):
    """A thread per connection and a real listen backlog, so bursts never wait on SYN
    retries (``socketserver``'s default backlog is 5)."""

    request_queue_size = 128
    daemon_threads = True


class ReplayServer:
    """Serve ``library`` on ``127.0.0.1:port`` (0 = a free port) until :meth:`close`.

    ``port`` is the shell (the address users open); content is on :attr:`content_port`.
    Threading: each connection is handled on its own thread; :class:`Replayer` is
    thread-safe; :attr:`last_page` is a plain attribute written last-wins.
    """

    def __init__(self, library: Any, *, port: int = 0, token: str | None = None) -> None:
        self.replayer = Replayer.for_library(library)
        self.token = token or secrets.token_urlsafe(18)
        self.httpd = _Listener((HOST, port), _make_handler(self, is_shell=True))
        self.port = int(self.httpd.server_address[1])
        self.content = _Listener((HOST, 0), _make_handler(self, is_shell=False))
        self.content_port = int(self.content.server_address[1])
        self.cookie_name = f"archiver-serve-{self.port}"
        # (ts, url) of the last page framed: root-relative URLs built by scripts (no
        # Referer is ever sent) are resolved against it.
        self.last_page: tuple[str, str] | None = None
        self._threads: list[threading.Thread] = []

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def content_origin(self) -> str:
        return f"http://{HOST}:{self.content_port}"

    @property
    def base_url(self) -> str:
        """The entry address: opening it sets the token cookie (then URLs carry no token)."""
        return f"{self.origin}/{self.token}/"

    def url_for(self, url: str, ts: str = "latest") -> str:
        """The entry address of ``url`` (with the token; it redirects to :meth:`page_url`)."""
        return f"{self.base_url}{ts}/{url}"

    def page_url(self, url: str, ts: str = "latest") -> str:
        """The address of ``url`` in the shell once the cookie is set (no token)."""
        return f"{self.origin}/{ts}/{url}"

    def serve_forever(self) -> None:
        self._start_content()
        self.httpd.serve_forever()

    def start(self) -> ReplayServer:
        self._start_content()
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def _start_content(self) -> None:
        thread = threading.Thread(target=self.content.serve_forever, daemon=True)
        thread.start()
        self._threads.append(thread)

    def close(self) -> None:
        if self._threads:
            self.content.shutdown()
            if len(self._threads) > 1:
                self.httpd.shutdown()
        self.httpd.server_close()
        self.content.server_close()

    def has_token(self, cookie_header: str | None) -> bool:
        if not cookie_header:
            return False
        try:
            morsel = SimpleCookie(cookie_header).get(self.cookie_name)
        except CookieError:
            return False
        return morsel is not None and secrets.compare_digest(morsel.value, self.token)

    def target(self, path: str, referer: str | None) -> tuple[str, str] | None:
        """(timestamp, original URL) of a content request, or None when unknown."""
        match = _PATH.match(path)
        if match:
            return match.group("ts"), _fix_scheme_slashes(match.group("url"))
        if referer:  # sent by clients other than browsers (which get no-referrer)
            ref = urlsplit(referer)
            ref_match = _PATH.match(ref.path + (f"?{ref.query}" if ref.query else ""))
            if ref_match:
                page_url = _fix_scheme_slashes(ref_match.group("url"))
                return ref_match.group("ts"), urljoin(page_url, path)
        if self.last_page is not None and path.startswith("/"):
            ts, page_url = self.last_page
            return ts, urljoin(page_url, path)
        return None


def _fix_scheme_slashes(url: str) -> str:
    # Some clients squash "https://" to "https:/" inside a path.
    return re.sub(r"^(https?):/(?!/)", r"\1://", url, flags=re.IGNORECASE)


def _rewritable(response: ReplayResponse) -> bool:
    return response.content_type.lower().startswith(_REWRITE_MIMES)


def _archived_headers(response: ReplayResponse, prefix: str) -> list[tuple[str, str]]:
    """Stored headers to send: Location and the archived Refresh pointed at the archive."""
    headers = [(k, v) for k, v in response.headers if k.lower() not in ("location", "refresh")]
    if response.location:
        headers.append(("Location", prefix + quote(response.location, safe=URL_SAFE)))
    refresh = original_header(response.headers, "Refresh")
    if refresh is not None:
        rewritten = rewrite_refresh(refresh, response.url, prefix)
        if rewritten is not None:
            headers.append(("Refresh", rewritten))
    return headers


_WRONG_HOST = "wrong Host: open the address 'archiver serve' printed\n"
_NO_COOKIE = "forbidden: open the address 'archiver serve' printed\n"
_HTML = "text/html; charset=utf-8"
# Set by this server on every response, whatever the stored ones say.
_OURS = frozenset({"content-length", "content-security-policy", "referrer-policy"})


# Long: both listeners share one handler class, ``is_shell`` picks the routes, so
# the headers, Host and cookie checks every response goes through live in one place.
def _make_handler(server: ReplayServer, *, is_shell: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "Archiver"
        disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms stalls

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self._route(send_body=True)

        def do_HEAD(self) -> None:
            self._route(send_body=False)

        def do_POST(self) -> None:  # archived forms post here: answer from the archive
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if 0 < length <= 1 << 20:
                self.rfile.read(length)
            elif length:  # unreadable or too large: answer, then drop the connection
                self.close_connection = True
            self._route(send_body=True)

        def _send(
            self,
            status: int,
            headers: list[tuple[str, str]],
            body: bytes,
            send_body: bool,
        ) -> None:
            self.send_response(status)
            for name, value in headers:
                if name.lower() not in _OURS:
                    self.send_header(name, value)
            csp = shell_csp(server.content_origin) if is_shell else content_csp(server.origin)
            self.send_header("Content-Security-Policy", csp)
            self.send_header("Referrer-Policy", "no-referrer")
            if is_shell:  # archived content keeps its own: old sites serve JS as text/plain
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if send_body:
                self.wfile.write(body)

        def _plain(self, status: int, message: str, send_body: bool) -> None:
            headers = [("Content-Type", "text/plain; charset=utf-8")]
            self._send(status, headers, message.encode(), send_body)

        def _redirect(self, location: str, extra: list[tuple[str, str]], send_body: bool) -> None:
            self._send(303, [("Location", location), *extra], b"", send_body)

        def _route(self, *, send_body: bool) -> None:
            port = server.port if is_shell else server.content_port
            if self.headers.get("Host") != f"{HOST}:{port}":
                self._plain(
                    421, "wrong Host: open the address 'archiver serve' printed\n", send_body
                )
                return
            if is_shell:
                self._shell(send_body)
            elif not server.has_token(self.headers.get("Cookie")):
                self._plain(
                    403, "forbidden: open the address 'archiver serve' printed\n", send_body
                )
            elif self.headers.get("Service-Worker"):
                self._plain(403, "service workers are never installed by replay\n", send_body)
            elif self.headers.get("Sec-Fetch-Dest") == "document" and _PATH.match(self.path):
                self._redirect(server.origin + self.path, [], send_body)  # into the shell
            else:
                self._content(send_body)

        def _shell(self, send_body: bool) -> None:
            entry = _TOKEN_PATH.match(self.path)
            if entry and secrets.compare_digest(entry.group("token"), server.token):
                cookie = f"{server.cookie_name}={server.token}; Path=/; HttpOnly; SameSite=Strict"
                self._redirect(entry.group("rest"), [("Set-Cookie", cookie)], send_body)
                return
            if not server.has_token(self.headers.get("Cookie")):
                self._plain(
                    403,
                    "forbidden: this address needs the token printed by 'archiver serve'\n",
                    send_body,
                )
                return
            match = _PATH.match(self.path)
            if match is None:
                self._plain(404, "not an archive address: /<timestamp>/<URL>\n", send_body)
                return
            src = server.content_origin + self.path
            page = _FRAME.format(
                title=_html_escape(match.group("url")), src=_html_escape(src), sandbox=SANDBOX
            )
            self._send(
                200, [("Content-Type", "text/html; charset=utf-8")], page.encode(), send_body
            )

        def _content(self, send_body: bool) -> None:
            target = server.target(self.path, self.headers.get("Referer"))
            if target is None:
                self._plain(404, f"not an archive address: {self.path}\n", send_body)
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
            prefix = f"/{response.ts[:14]}/"
            if self.headers.get("Sec-Fetch-Dest") in ("iframe", "frame", "document"):
                server.last_page = (response.ts[:14], response.url)
            body = response.body
            if _rewritable(response):  # every status: error pages have links too
                body = rewrite_links(body, prefix, response.url)
                if response.content_type.lower().startswith(("text/html", "application/xhtml")):
                    body = guard_navigation(body)
            self._send(response.status, _archived_headers(response, prefix), body, send_body)

    return Handler


def _html_escape(text: str) -> str:
    from html import escape

    return escape(text, quote=True)
