"""A local web server for tests: routes served on 127.0.0.1, one thread per request.

Routes map a path to a handler ``(request) -> Response`` so a test site can do what real
sites do (redirect chains, compressed bodies, range requests, slow responses). Every
request is recorded in ``server.requests`` so tests can assert what the browser asked for.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@dataclass
class Request:
    method: str
    path: str  # with query
    host: str
    headers: dict[str, str]
    body: bytes = b""

    @property
    def route(self) -> str:
        return urlsplit(self.path).path


@dataclass
class Response:
    status: int = 200
    body: bytes | Callable[[], bytes] = b""
    headers: list[tuple[str, str]] = field(default_factory=list)
    content_type: str | None = "text/html; charset=utf-8"
    stream: Callable[[Callable[[bytes], None]], None] | None = None  # writes chunks itself


Handler = Callable[[Request], Response]


class _QuietServer(ThreadingHTTPServer):
    """A browser that drops an idle keep-alive connection is not an error worth a
    traceback in a test's or benchmark's output; anything else still prints."""

    def handle_error(self, request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class LocalServer:
    """Serve ``routes`` on 127.0.0.1 (or ``host``) on a free port until ``stop()``."""

    def __init__(self, routes: dict[str, Handler] | None = None, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Handler] = dict(routes or {})
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                req = Request(
                    method=self.command,
                    path=self.path,
                    host=self.headers.get("Host", ""),
                    headers=dict(self.headers.items()),
                    body=self.rfile.read(length) if length else b"",
                )
                with server._lock:
                    server.requests.append(req)
                handler = server.routes.get(req.route)
                resp = handler(req) if handler else Response(404, b"not found", [], "text/plain")
                self.send_response(resp.status)
                if resp.content_type:
                    self.send_header("Content-Type", resp.content_type)
                for name, value in resp.headers:
                    self.send_header(name, value)
                if resp.stream is not None:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()

                    def write(chunk: bytes) -> None:
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()

                    try:
                        resp.stream(write)
                        self.wfile.write(b"0\r\n\r\n")
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    return
                body = resp.body() if callable(resp.body) else resp.body
                if not any(n.lower() == "content-length" for n, _ in resp.headers):
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                        self.wfile.write(body)

            do_GET = do_POST = do_HEAD = do_PUT = _handle

        self.httpd = _QuietServer((host, 0), _Handler)
        self.httpd.daemon_threads = True
        self.host = host
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> LocalServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def url(self, path: str = "/", host: str | None = None) -> str:
        return f"http://{host or self.host}:{self.port}{path}"

    def route(self, path: str) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            self.routes[path] = fn
            return fn

        return register

    def add_static(self, path: str, body: bytes | str, content_type: str = "text/html") -> None:
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = lambda _req: Response(200, data, [], content_type)

    def requested(self, route: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.route == route]
