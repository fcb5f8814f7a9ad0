"""``archiver serve``: archived pages over HTTP for an external browser, on 127.0.0.1 only.

Isolation is built by the browser's own rules, not by rewriting alone:

- A *shell* port (the address printed) serves only a frame page; archived content lives on
  a second *content* port, in an ``<iframe sandbox>`` without ``allow-top-navigation`` or
  ``allow-popups``. The shell's ``frame-src`` names only content hosts, so every
  navigation of the frame (links, forms, refreshes, script) is refused by the browser
  unless it stays in the archive, and archived content can neither navigate the tab nor
  open windows, nor script the shell.
- Each archived origin has its own content host, ``<label>.localhost:<content port>``
  (:mod:`archiver_app.replay.origins`): archived sites are as separate from each other as
  they were on the live web. A request on one host for a URL of another origin is
  redirected to that origin's host; a script reads another archived site only where that
  site's archived ``Access-Control-Allow-Origin`` allowed it.
- Every content response carries a Content-Security-Policy confining fetches, forms,
  frames and workers to content hosts (plus the same ``sandbox``, so a content URL opened
  outside the shell is just as confined; a top-level load of one is sent to the shell),
  ``Referrer-Policy: no-referrer`` and no archived policy header
  (:mod:`archiver_app.replay.response` renames them to ``X-Archive-Orig-*``).
- The per-run token is never in a URL a page can see: ``/<token>/<ts>/<url>`` sets an
  HttpOnly, SameSite=Strict cookie bound to 127.0.0.1 and redirects to ``/<ts>/<url>``;
  ``Authorization: Bearer <token>`` works too. Content hosts need no cookie: their names
  are capabilities only this run can make. Any ``Host`` but the listener's own
  ``127.0.0.1:<port>`` or an issued content host is refused (DNS rebinding), and so is
  any service-worker script.
- With ``memento=True`` (``archiver serve --memento``) the shell also answers GET and
  HEAD without the token, so Memento clients and Robust Links work: TimeGate, TimeMap
  and mementos (:mod:`archiver_app.replay.timetravel`), never with CORS headers, and
  only to non-browser clients, same-origin requests and top-level navigations (a page
  elsewhere cannot fetch them: Fetch Metadata, ``Cross-Origin-Resource-Policy``).
- A capture that is a file is not a page: a PDF is framed without the sandbox (Chromium
  runs no PDF viewer in one) and any other file is offered as a download
  (:mod:`archiver_app.replay.files`, which says why neither runs archived script).
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
from email.message import Message
from html import escape
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urljoin, urlsplit

from archiver_app.replay.cookies import CookieJar
from archiver_app.replay.errors import NotArchived, ReplayError
from archiver_app.replay.files import (
    DOWNLOAD,
    download,
    file_answer,
    in_frame_page,
    is_file,
    is_pdf,
    own_file,
    served_type,
)
from archiver_app.replay.guard import COOKIE_PATH
from archiver_app.replay.origins import ContentHosts, origin_of
from archiver_app.replay.replayer import Replayer
from archiver_app.replay.response import ReplayResponse, original_header
from archiver_app.replay.rewrite import (
    URL_SAFE,
    guard_navigation,
    rewrite_links,
    rewrite_refresh,
)
from archiver_app.replay.timetravel import TIMEGATE, TIMEMAP, Answer, TimeTravel, plain_answer
from archiver_app.warc.timestamps import to_ts14

__all__ = ["ReplayServer", "rewrite_links", "rewrite_refresh"]

HOST = "127.0.0.1"
SANDBOX = "allow-scripts allow-forms allow-same-origin allow-modals"
_REWRITE_MIMES = ("text/html", "text/css", "application/xhtml")
_PATH = re.compile(r"^/(?P<ts>\d{4,17}|latest)/(?P<url>.+)$")
_TOKEN_PATH = re.compile(r"^/(?P<token>[^/]+)(?P<rest>/(?:\d{4,17}|latest)/.+)$")
_FRAME = """<!doctype html><html><head><meta charset="utf-8"><title>Archiver: {title}</title>
<style>html,body,iframe{{margin:0;border:0;width:100%;height:100%;display:block}}</style>
</head><body><iframe src="{src}"{sandbox} referrerpolicy="no-referrer"
 title="archived page"></iframe></body></html>"""
_DOCUMENT_DESTS = ("iframe", "frame", "document")


def content_csp(shell_origin: str, content_hosts: str, *, sandbox: bool = True) -> str:
    """The policy on every content response: everything stays on content hosts (a PDF's
    has no ``sandbox``, in which Chromium runs no PDF viewer: :mod:`.files`)."""
    policy = (
        f"default-src 'self' {content_hosts} 'unsafe-inline' 'unsafe-eval' data: blob:; "
        f"connect-src 'self' {content_hosts}; form-action 'self' {content_hosts}; "
        f"frame-src 'self' {content_hosts} blob:; worker-src 'self' blob:; "
        "manifest-src 'none'; base-uri 'self'; "
        f"frame-ancestors 'self' {content_hosts} {shell_origin}"
    )
    return f"{policy}; sandbox {SANDBOX}" if sandbox else policy


def shell_csp(content_hosts: str) -> str:
    """The shell page may only frame content hosts: no script, no forms."""
    return (
        f"default-src 'none'; style-src 'unsafe-inline'; frame-src {content_hosts}; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


class _Listener(ThreadingHTTPServer):
    """A thread per connection and a real listen backlog, so bursts never wait on SYN
    retries (``socketserver``'s default backlog is 5)."""

    request_queue_size = 128
    daemon_threads = True


class ReplayServer:
    """Serve ``library`` on ``127.0.0.1:port`` (0 = a free port) until :meth:`close`.

    ``port`` is the shell (the address users open); content is on :attr:`content_port`,
    one host name per archived origin (:attr:`hosts`). ``memento`` opens the shell's
    read-only Memento routes to clients without the token.

    Threading: each connection is handled on its own thread; :class:`Replayer` and
    :class:`ContentHosts` are thread-safe; the per-origin last page time is a dict
    written last-wins.
    """

    def __init__(
        self,
        library: Any,
        *,
        port: int = 0,
        token: str | None = None,
        memento: bool = False,
    ) -> None:
        self.replayer = Replayer.for_library(library)
        self.token = token or secrets.token_urlsafe(18)
        self.memento = memento
        self.httpd = _Listener((HOST, port), _make_handler(self, is_shell=True))
        self.port = int(self.httpd.server_address[1])
        self.content = _Listener((HOST, 0), _make_handler(self, is_shell=False))
        self.content_port = int(self.content.server_address[1])
        self.hosts = ContentHosts(self.content_port)
        self.time = TimeTravel(self.replayer, self.origin)
        self.cookie_name = f"archiver-serve-{self.port}"
        # Per archived origin, the time of the last page framed: root-relative URLs built
        # by scripts (no Referer is ever sent) are resolved at it.
        self.last_ts: dict[str, str] = {}
        self.cookies = CookieJar()  # document.cookie of the framed pages, for this run
        self._threads: list[threading.Thread] = []

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.port}"

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

    def content_url(self, url: str, ts: str = "latest") -> str:
        """The address the shell frames for ``url``: on its origin's content host."""
        base = self.hosts.base_for_url(url)
        if base is None:
            raise ValueError(f"not an http(s) URL: {url!r}")
        return f"{base}/{ts}/{url}"

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

    def authorized(self, headers: Message) -> bool:
        """The request carries the token: the entry cookie or ``Authorization: Bearer``."""
        if self.has_token(headers.get("Cookie")):
            return True
        scheme, _, credentials = (headers.get("Authorization") or "").partition(" ")
        return scheme.lower() == "bearer" and secrets.compare_digest(
            credentials.strip().encode(), self.token.encode()
        )

    def open_to(self, method: str, headers: Message) -> bool:
        """With ``memento``, a read-only request that no other web page made: a client
        that is not a browser, a page of this shell, or a top-level navigation (a Robust
        Link followed). Fetch Metadata tells browsers' requests apart."""
        if not self.memento or method not in ("GET", "HEAD"):
            return False
        site = headers.get("Sec-Fetch-Site")
        if site is None or site in ("same-origin", "none"):
            return True
        return headers.get("Sec-Fetch-Mode") == "navigate" and (
            headers.get("Sec-Fetch-Dest") == "document"
        )

    def target(self, path: str, referer: str | None, origin: str) -> tuple[str, str] | None:
        """(timestamp, original URL) of a request on ``origin``'s content host."""
        match = _PATH.match(path)
        if match:
            url = _fix_scheme_slashes(match.group("url"))
            if origin_of(url) is not None:
                return match.group("ts"), url
        if referer:  # sent by clients other than browsers (which get no-referrer)
            ref = urlsplit(referer)
            ref_match = _PATH.match(ref.path + (f"?{ref.query}" if ref.query else ""))
            if ref_match:
                page_url = _fix_scheme_slashes(ref_match.group("url"))
                return ref_match.group("ts"), urljoin(page_url, path)
        if path.startswith("/"):  # a root-relative URL a script built: the host's origin
            return self.last_ts.get(origin, "latest"), urljoin(origin + "/", path)
        return None

    def shell_page(self, ts: str, url: str) -> Answer:
        """The frame page of ``url`` at ``ts``, or a redirect to the memento's own address
        when ``ts`` is not a capture's time (so each URI-M names one capture)."""
        base = self.hosts.base_for_url(url)
        if base is None:
            return plain_answer(404, "not an archive address: /<timestamp>/<http(s) URL>\n")
        headers = [("Content-Type", "text/html; charset=utf-8")]
        try:
            record = self.replayer.resolve(url, None if ts == "latest" else ts).record
        except ValueError:
            return plain_answer(404, f"not a time: {ts} (use YYYY[MM[DD[hhmmss]]] or latest)\n")
        except ReplayError:
            record = None  # the frame shows why
        found = self.time.current(record.url, record.ts) if record is not None else None
        if record is not None and found is not None:
            current, mementos = found
            if ts not in {to_ts14(m.at) for m in mementos}:
                return Answer(302, [("Location", current.url)])
            headers += self.time.headers_of(record.url, current, mementos)
        # A file is no page (replay.files): a PDF is framed unsandboxed, others downloaded.
        mime = record.mime if record is not None and 200 <= (record.status or 200) < 300 else None
        if record is not None and record.record_type == "revisit":  # its type is its original's
            mime = served_type(self.replayer, ts, url)
        if is_file(mime):
            return file_answer(self.replayer, ts, url, headers)
        page = _FRAME.format(
            title=escape(url, quote=True),
            src=escape(f"{base}/{ts}/{quote(url, safe=URL_SAFE)}", quote=True),
            sandbox="" if is_pdf(mime) else f' sandbox="{SANDBOX}"',
        )
        return Answer(200, headers, page.encode())


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


def _readers(origin_header: str | None, hosts: ContentHosts) -> str | None:
    """The archived origin behind a request's ``Origin`` when it may be granted reads:
    a content host's, or ``"null"`` (the opaque origin a request has once a redirect
    crossed origins); None for anyone else."""
    if origin_header == "null":
        return "null"
    return hosts.origin_of_base(origin_header)


def cors_grant(
    response: ReplayResponse, origin_header: str | None, hosts: ContentHosts
) -> list[tuple[str, str]]:
    """CORS headers letting the content host named by ``origin_header`` read
    ``response``: only where the archived ``Access-Control-Allow-Origin`` allowed the
    archived origin behind that host (or everyone), as the live site did."""
    requester = _readers(origin_header, hosts)
    granted = original_header(response.headers, "Access-Control-Allow-Origin")
    if requester is None or origin_header is None or granted is None:
        return []
    granted = granted.strip()
    if granted != "*" and (granted if requester == "null" else origin_of(granted)) != requester:
        return []
    headers = [("Access-Control-Allow-Origin", origin_header), ("Vary", "Origin")]
    for name in ("Access-Control-Allow-Credentials", "Access-Control-Expose-Headers"):
        value = original_header(response.headers, name)
        if value is not None:
            headers.append((name, value))
    return headers


def cors_follow(origin_header: str | None, hosts: ContentHosts) -> list[tuple[str, str]]:
    """On this server's own redirect between content hosts: let a CORS request follow
    it (it names only another archive address; the answer there decides reads)."""
    if origin_header is None or _readers(origin_header, hosts) is None:
        return []
    return [
        ("Access-Control-Allow-Origin", origin_header),
        ("Access-Control-Allow-Credentials", "true"),
        ("Vary", "Origin"),
    ]


_WRONG_HOST = "wrong Host: open the address 'archiver serve' printed\n"
# Set by this server on every response, whatever the stored ones say (Date and Server by
# http.server itself; the archived ones stay in the WARC).
_OURS = frozenset(
    {
        "content-length",
        "content-security-policy",
        "referrer-policy",
        "cache-control",
        "date",
        "server",
    }
)


# Long: both listeners share one handler class, ``is_shell`` picks the routes, so
# the headers and Host checks every response goes through live in one place.
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

        def do_OPTIONS(self) -> None:
            self._route(send_body=True)

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

        def _send(self, answer: Answer, send_body: bool) -> None:
            self.send_response(answer.status)
            for name, value in answer.headers:
                if name.lower() not in _OURS:
                    self.send_header(name, value)
            hosts = server.hosts.source
            pdf = not is_shell and any(
                k.lower() == "content-type" and is_pdf(v) for k, v in answer.headers
            )
            if is_shell:
                csp = shell_csp(hosts)
            else:
                csp = content_csp(server.origin, hosts, sandbox=not pdf)
            self.send_header("Content-Security-Policy", csp)
            self.send_header("Referrer-Policy", "no-referrer")
            if is_shell or pdf:  # archived content keeps its own: old sites serve JS as text
                self.send_header("X-Content-Type-Options", "nosniff")
            if is_shell:
                self.send_header("Cross-Origin-Opener-Policy", "same-origin")
                self.send_header("Cross-Origin-Resource-Policy", "same-origin")
            self.send_header("Content-Length", str(len(answer.body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if send_body:
                self.wfile.write(answer.body)

        def _plain(self, status: int, message: str, send_body: bool) -> None:
            self._send(plain_answer(status, message), send_body)

        def _redirect(self, status: int, location: str, send_body: bool) -> None:
            self._send(Answer(status, [("Location", location)]), send_body)

        def _route(self, *, send_body: bool) -> None:
            if is_shell:
                if self.headers.get("Host") != f"{HOST}:{server.port}":
                    self._plain(421, _WRONG_HOST, send_body)
                else:
                    self._shell(send_body)
                return
            origin = server.hosts.origin_of_host(self.headers.get("Host"))
            if origin is None:
                self._plain(421, _WRONG_HOST, send_body)
            elif self.headers.get("Service-Worker"):
                self._plain(403, "service workers are never installed by replay\n", send_body)
            elif self.headers.get("Sec-Fetch-Dest") == "document" and _PATH.match(self.path):
                self._redirect(303, server.origin + self.path, send_body)  # into the shell
            elif self.command == "OPTIONS":
                self._preflight(send_body)
            elif urlsplit(self.path).path == COOKIE_PATH:
                self._cookie(origin, send_body)
            else:
                self._content(origin, send_body)

        def _shell(self, send_body: bool) -> None:
            entry = _TOKEN_PATH.match(self.path)
            if entry and secrets.compare_digest(entry.group("token"), server.token):
                cookie = f"{server.cookie_name}={server.token}; Path=/; HttpOnly; SameSite=Strict"
                answer = Answer(303, [("Location", entry.group("rest")), ("Set-Cookie", cookie)])
                self._send(answer, send_body)
                return
            if not (server.authorized(self.headers) or server.open_to(self.command, self.headers)):
                self._plain(
                    403,
                    "forbidden: this address needs the token printed by 'archiver serve'\n",
                    send_body,
                )
                return
            if self.path.startswith(TIMEGATE):
                url = _fix_scheme_slashes(self.path[len(TIMEGATE) :])
                answer = server.time.timegate(url, self.headers.get("Accept-Datetime"))
            elif self.path.startswith(TIMEMAP):
                answer = server.time.timemap(_fix_scheme_slashes(self.path[len(TIMEMAP) :]))
            elif self.path.startswith(DOWNLOAD):
                match = _PATH.match(self.path[len(DOWNLOAD) - 1 :])
                url = _fix_scheme_slashes(match.group("url")) if match else ""
                answer = download(server.replayer, match.group("ts") if match else "", url)
            else:
                match = _PATH.match(self.path)
                if match is None:
                    self._plain(404, "not an archive address: /<timestamp>/<URL>\n", send_body)
                    return
                url = _fix_scheme_slashes(match.group("url"))
                answer = server.shell_page(match.group("ts"), url)
            self._send(answer, send_body)

        def _preflight(self, send_body: bool) -> None:
            """A CORS preflight between content hosts is allowed: it only lets a request
            reach the (read-only) archive; whether its answer may be read is decided by
            :func:`cors_grant` on the answer itself."""
            origin_header = self.headers.get("Origin")
            if origin_header is None or _readers(origin_header, server.hosts) is None:
                self._plain(403, "preflight from outside the archive\n", send_body)
                return
            headers = [
                ("Access-Control-Allow-Origin", origin_header),
                ("Access-Control-Allow-Credentials", "true"),
                ("Access-Control-Allow-Methods", "GET, HEAD, POST"),
                ("Access-Control-Max-Age", "600"),
                ("Vary", "Origin"),
            ]
            asked = self.headers.get("Access-Control-Request-Headers")
            if asked:
                headers.append(("Access-Control-Allow-Headers", asked))
            self._send(Answer(204, headers), send_body)

        def _cookie(self, origin: str, send_body: bool) -> None:
            """``document.cookie`` of the page named by ``url=`` (after adding ``set=``),
            for a request of that page's own origin only (browsers say so)."""
            query = parse_qs(urlsplit(self.path).query)
            page = urlsplit(query.get("url", [""])[0])
            target = server.target(
                page.path + (f"?{page.query}" if page.query else ""), None, origin
            )
            same = self.headers.get("Sec-Fetch-Site") == "same-origin"
            if not same or target is None or origin_of(target[1]) != origin:
                self._plain(403, "cookies are read by the page's own origin only\n", send_body)
                return
            if "set" in query:
                server.cookies.set_from_script(target[1], query["set"][0])
            text = server.cookies.for_script(target[1]).encode()
            answer = Answer(200, [("Content-Type", "text/plain; charset=utf-8")], text)
            self._send(answer, send_body)

        def _content(self, origin: str, send_body: bool) -> None:
            target = server.target(self.path, self.headers.get("Referer"), origin)
            if target is None:
                self._plain(404, f"not an archive address: {self.path}\n", send_body)
                return
            ts, url = target
            owner = origin_of(url)
            if owner != origin:  # another archived origin: its own host, same method
                if owner is None:
                    self._plain(404, f"not an archive address: {self.path}\n", send_body)
                else:
                    location = f"{server.hosts.base(owner)}/{ts}/{quote(url, safe=URL_SAFE)}"
                    follow = cors_follow(self.headers.get("Origin"), server.hosts)
                    self._send(Answer(307, [("Location", location), *follow]), send_body)
                return
            at = None if ts == "latest" else ts
            range_header = self.headers.get("Range")
            try:
                # A page's addresses carry its capture's time: what it asks for comes
                # from that capture first, as in the app (Replayer.serve's capture).
                capture = server.replayer.page_capture(url, ts)
                response = server.replayer.serve(
                    url, at, range_header=range_header, capture=capture
                )
                if range_header and _rewritable(response) and response.status in (206, 416):
                    # Rewriting links changes the body's length: serve HTML/CSS whole.
                    response = server.replayer.serve(url, at, capture=capture)
            except NotArchived:
                self._plain(404, f"not archived: {url}\n", send_body)
                return
            except ValueError:
                self._plain(404, f"not a time: {ts}\n", send_body)
                return
            except ReplayError as exc:
                self._plain(502, f"{exc}\n", send_body)
                return
            server.cookies.set_from_response(url, response)
            # What a page's own capture served (a style sheet, a frame) keeps the page's
            # time in its addresses, so what it asks for comes from that capture too.
            own = capture is not None and response.snapshot_id == capture
            page_ts = ts[:14] if own else response.ts[:14]
            prefix = f"/{page_ts}/"
            dest = self.headers.get("Sec-Fetch-Dest")
            if dest in _DOCUMENT_DESTS:
                server.last_ts[origin] = page_ts
            body = response.body
            if _rewritable(response):  # every status: error pages have links too
                body = rewrite_links(body, prefix, response.url)
                if response.content_type.lower().startswith(("text/html", "application/xhtml")):
                    body = guard_navigation(body)
            headers = _archived_headers(response, prefix)
            if (
                dest in ("iframe", "frame")
                and is_file(response.content_type)
                and own_file(response)
            ):
                own_address = server.page_url(response.url, response.ts[:14])
                body = in_frame_page(response, own_address)
                headers = [("Content-Type", "text/html; charset=utf-8")]
            headers += cors_grant(response, self.headers.get("Origin"), server.hosts)
            full = dest is None or dest in _DOCUMENT_DESTS
            headers += server.time.headers(response.url, response.ts, full=full)
            self._send(Answer(response.status, headers, body), send_body)

    return Handler
