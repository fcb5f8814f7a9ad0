"""``archiver serve`` refuses what could leak or rebind, and keeps up with bursts."""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator

import pytest

from archiver_app.library import Library
from archiver_app.replay.origins import LABEL_CHARS, ContentHosts, origin_of
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
            ("Date", "Mon, 01 Jan 2024 00:00:00 GMT"),
            ("Server", "Archived/1.0"),
            ("Cache-Control", "max-age=31536000"),
        ],
    )
    writer.commit()
    srv = ReplayServer(library)
    try:
        yield srv
    finally:
        srv.close()


def _get(
    port: int,
    path: str,
    *,
    host: str | None = None,
    cookie: str | None = None,
    method: str = "GET",
    headers: dict[str, str] | None = None,
) -> tuple[http.client.HTTPResponse, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    sent = {"Host": host or f"127.0.0.1:{port}", **(headers or {})}
    if cookie:
        sent["Cookie"] = cookie
    conn.request(method, path, headers=sent)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response, body


def test_the_shell_needs_the_token_and_its_own_host(server: ReplayServer) -> None:
    server.start()
    entry, _ = _get(server.port, f"/{server.token}/latest/{PAGE}")
    assert entry.status == 303 and entry.getheader("Location") == f"/latest/{PAGE}"
    cookie = entry.getheader("Set-Cookie") or ""
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    pair = cookie.split(";")[0]
    assert _get(server.port, f"/latest/{PAGE}")[0].status == 403
    assert _get(server.port, f"/latest/{PAGE}", host="evil.example", cookie=pair)[0].status == 421
    # "latest" and a partial time lead to the memento's own address, then the frame page.
    latest, _ = _get(server.port, f"/latest/{PAGE}", cookie=pair)
    assert latest.status == 302
    assert latest.getheader("Location") == f"{server.origin}/20240101000000/{PAGE}"
    bearer = {"Authorization": f"Bearer {server.token}"}
    shell, body = _get(server.port, f"/20240101000000/{PAGE}", headers=bearer)
    assert shell.status == 200
    src = f'src="http://{server.hosts.host("http://site.example")}/20240101000000/{PAGE}"'
    assert src.encode() in body
    assert shell.getheader("Cross-Origin-Resource-Policy") == "same-origin"
    assert _get(server.port, f"/20241399/{PAGE}", headers=bearer)[0].status == 404  # month 13
    content = _get(server.content_port, "/20241399/http://site.example/", host=host_of(server))
    assert content[0].status == 404
    wrong = {"Authorization": "Bearer nope"}
    assert _get(server.port, f"/20240101000000/{PAGE}", headers=wrong)[0].status == 403


def host_of(server: ReplayServer) -> str:
    return server.hosts.host("http://site.example")


def test_content_is_served_only_on_the_host_of_its_own_origin(server: ReplayServer) -> None:
    server.start()
    port = server.content_port
    host = server.hosts.host("http://site.example")
    path = f"/latest/{PAGE}"
    # The old shared origin, another name (DNS rebinding), a label never issued: refused.
    for other in (f"127.0.0.1:{port}", "evil.example", f"{'a' * 26}.localhost:{port}"):
        assert _get(port, path, host=other)[0].status == 421, other
    served, _ = _get(port, path, host=host)
    assert served.status == 200
    # Headers about this answer are serve's own, once each (the archived ones stay in the
    # WARC, not in what serve sends).
    for name, ours in (("Server", "Archiver"), ("Cache-Control", "no-store")):
        assert served.headers.get_all(name) == [served.getheader(name)], name
        assert ours in (served.getheader(name) or ""), name
    assert len(served.headers.get_all("Date") or []) == 1
    assert served.getheader("Date") != "Mon, 01 Jan 2024 00:00:00 GMT"
    assert served.getheader("Referrer-Policy") == "no-referrer"
    assert served.getheader("Access-Control-Allow-Origin") is None
    assert served.getheader("Set-Cookie") is None
    assert served.getheader("X-Archive-Orig-Referrer-Policy") == "unsafe-url"
    csp = served.getheader("Content-Security-Policy") or ""
    assert "sandbox" in csp and "default-src *" not in csp
    assert f"connect-src 'self' http://*.localhost:{port};" in csp
    # A URL of another origin asked on this host goes to that origin's own host.
    moved, _ = _get(port, "/2024/https://other.example/x?y=1", host=host, method="POST")
    other_base = server.hosts.base("https://other.example")
    assert moved.status == 307
    assert moved.getheader("Location") == f"{other_base}/2024/https://other.example/x?y=1"
    # A root-relative path a script built is read on the host's own origin.
    relative, body = _get(port, "/", host=host)
    assert relative.status == 200 and b"<p>page</p>" in body


def test_archived_cors_grants_are_honoured_between_content_hosts(server: ReplayServer) -> None:
    server.start()
    port = server.content_port
    host = server.hosts.host("http://site.example")
    reader = server.hosts.base("http://reader.example")
    path = f"/latest/{PAGE}"  # archived with Access-Control-Allow-Origin: *
    read, _ = _get(port, path, host=host, headers={"Origin": reader})
    assert read.getheader("Access-Control-Allow-Origin") == reader
    stranger, _ = _get(port, path, host=host, headers={"Origin": "http://evil.example"})
    assert stranger.getheader("Access-Control-Allow-Origin") is None
    preflight, _ = _get(
        port,
        path,
        host=host,
        method="OPTIONS",
        headers={"Origin": reader, "Access-Control-Request-Headers": "x-a"},
    )
    assert preflight.status == 204 and preflight.getheader("Access-Control-Allow-Headers") == "x-a"
    outsider = {"Origin": "http://evil.example"}
    refused, _ = _get(port, path, host=host, method="OPTIONS", headers=outsider)
    assert refused.status == 403
    # Once a redirect crossed origins the browser sends "Origin: null": archived "*" holds.
    tainted, _ = _get(port, path, host=host, headers={"Origin": "null"})
    assert tainted.getheader("Access-Control-Allow-Origin") == "null"
    # This server's own redirect to another content host lets a CORS request follow it.
    moved, _ = _get(port, "/2024/https://other.example/", host=host, headers={"Origin": reader})
    assert moved.status == 307 and moved.getheader("Access-Control-Allow-Origin") == reader
    moved, _ = _get(port, "/2024/https://other.example/", host=host, headers=outsider)
    assert moved.status == 307 and moved.getheader("Access-Control-Allow-Origin") is None


def test_origins_and_host_names() -> None:
    assert origin_of("HTTP://Example.org:80/a?b") == "http://example.org"
    assert origin_of("https://example.org:8443/") == "https://example.org:8443"
    assert origin_of("ftp://example.org/") is None and origin_of("/relative") is None
    hosts = ContentHosts(5000, key=b"k" * 32)
    name = hosts.host("https://example.org")
    assert name.endswith(".localhost:5000") and len(name.split(".")[0]) == LABEL_CHARS
    assert hosts.origin_of_host(name) == "https://example.org"
    assert hosts.origin_of_host(name.replace(":5000", ":5001")) is None
    assert ContentHosts(5000).host("https://example.org") != name  # a new key each run
    assert ContentHosts(5000).origin_of_host(name) is None  # and only issued names count


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
        # Any case: the page is matched lower-cased, each rare word looked for so too.
        (b'<IMG SRC="/a.png">', b'SRC="/ts/https://site.example/a.png"'),
        (b"<div style=\"background: URL( '/b.png')\">", b"URL( '/ts/https://site.example/b.png')"),
        (b"<SCRIPT TYPE=SpeculationRules>", b"TYPE=x-archive-SpeculationRules"),
        (b"<LINK REL=DNS-Prefetch href=x>", b"REL=x-archive-DNS-Prefetch"),
        (b"<META NAME=Referrer content=unsafe-url>", b"NAME=x-archive-Referrer"),
        (b"<a ReferrerPolicy=unsafe-url href=x>", b"x-archive-ReferrerPolicy="),
        # the served file is rewritten: its hash would make the browser refuse it
        (b'<link rel=stylesheet href=/s.css integrity="sha384-x">', b'x-archive-integrity="sha'),
        (b"<SCRIPT src=/a.js\nINTEGRITY=sha256-y></SCRIPT>", b"\nx-archive-INTEGRITY=sha256"),
    ],
)
def test_rewriting_reads_urls_as_browsers_do(html: bytes, expected: bytes) -> None:
    assert expected in rewrite_links(html, "/ts/", "https://site.example/page")


def test_the_navigation_guard_comes_first_but_after_the_doctype() -> None:
    body = guard_navigation(b"<!DOCTYPE html><html><script>evil()</script>")
    assert body.startswith(b"<!DOCTYPE html><script>")
    assert body.index(b"navigate") < body.index(b"evil")
