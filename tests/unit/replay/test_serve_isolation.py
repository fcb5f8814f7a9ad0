"""``archiver serve`` refuses what could leak or rebind, and keeps up with bursts."""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator

import pytest

from archiver_app.library import Library
from archiver_app.replay.response import clean_headers
from archiver_app.replay.rewrite import guard_navigation, rewrite_links
from archiver_app.replay.server import ReplayServer
from tests.helpers.archive import ArchiveWriter, at

PAGE = "http://site.example/"


@pytest.fixture
def server(library: Library) -> Iterator[ReplayServer]:
    writer = ArchiveWriter(library)
    writer.response(
        PAGE,
        "<p>page</p>",
        at=at(2024),
        headers=[
            ("Referrer-Policy", "unsafe-url"),
            ("Access-Control-Allow-Origin", "*"),
            ("Content-Security-Policy", "default-src *"),
            ("Set-Cookie", "a=b"),
            ("Link", "<http://live.example/>; rel=preconnect"),
        ],
    )
    writer.commit()
    srv = ReplayServer(library)
    try:
        yield srv
    finally:
        srv.close()


def _get(
    port: int, path: str, *, host: str | None = None, cookie: str | None = None
) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Host": host or f"127.0.0.1:{port}"}
    if cookie:
        headers["Cookie"] = cookie
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


def test_content_needs_the_cookie_and_its_own_host(server: ReplayServer) -> None:
    server.start()
    entry = _get(server.port, f"/{server.token}/latest/{PAGE}")
    assert entry.status == 303 and entry.getheader("Location") == f"/latest/{PAGE}"
    cookie = entry.getheader("Set-Cookie") or ""
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    pair = cookie.split(";")[0]
    assert _get(server.content_port, f"/latest/{PAGE}").status == 403
    rebound = _get(server.content_port, f"/latest/{PAGE}", host="evil.example", cookie=pair)
    assert rebound.status == 421
    served = _get(server.content_port, f"/latest/{PAGE}", cookie=pair)
    assert served.status == 200
    assert served.getheader("Referrer-Policy") == "no-referrer"
    assert served.getheader("Access-Control-Allow-Origin") is None
    assert served.getheader("Set-Cookie") is None and served.getheader("Link") is None
    assert served.getheader("X-Archive-Orig-Referrer-Policy") == "unsafe-url"
    assert "sandbox" in (served.getheader("Content-Security-Policy") or "")
    assert "default-src *" not in (served.getheader("Content-Security-Policy") or "")


def test_a_burst_of_new_connections_is_queued_not_dropped(server: ReplayServer) -> None:
    # Nothing accepts yet: only the listen backlog holds these (socketserver's default of
    # 5 makes the kernel drop the later SYNs, and those clients wait a second or more).
    sockets = []
    try:
        for _ in range(40):
            sockets.append(socket.create_connection(("127.0.0.1", server.port), timeout=0.5))
    finally:
        for sock in sockets:
            sock.close()


def test_policy_headers_are_kept_renamed_not_obeyed() -> None:
    headers = clean_headers(
        [("Access-Control-Allow-Credentials", "true"), ("Speculation-Rules", "/r.json"),
         ("Content-Type", "text/html")],
        3,
    )  # fmt: skip
    assert ("X-Archive-Orig-Access-Control-Allow-Credentials", "true") in headers
    assert ("X-Archive-Orig-Speculation-Rules", "/r.json") in headers
    assert ("Content-Type", "text/html") in headers


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        (b'<meta http-equiv=refresh content="1;http://live.example/x">', b"1;/ts/http://live"),
        (b'<a href="http&#58;//live.example/">', b'href="/ts/http://live'),
        (b'<a href="http:\\\\live.example\\x">', b'href="/ts/http://live'),
        (b'<a href="ht\ttp:/\n/live.example/">', b'href="/ts/http://live'),
        (b'{"urls": ["https:\\/\\/live.example\\/p"]}', b'["/ts/https://live'),
        (b'<img src="/a.png">', b'src="/ts/https://site.example/a.png"'),
        (b"<script type=speculationrules>", b"type=x-archive-speculationrules"),
        (b'<link rel="preconnect" href="x">', b'rel="x-archive-preconnect"'),
        (b"<meta name=referrer content=unsafe-url>", b"name=x-archive-referrer"),
    ],
)
def test_rewriting_reads_urls_as_browsers_do(html: bytes, expected: bytes) -> None:
    assert expected in rewrite_links(html, "/ts/", "https://site.example/page")


def test_the_navigation_guard_comes_first_but_after_the_doctype() -> None:
    body = guard_navigation(b"<!DOCTYPE html><html><script>evil()</script>")
    assert body.startswith(b"<!DOCTYPE html><script>")
    assert body.index(b"navigate") < body.index(b"evil")
