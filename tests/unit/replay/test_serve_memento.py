"""Memento (RFC 7089) through ``archiver serve``'s real HTTP server.

Three captures of one page (2020, mid-2022, 2024) are asked for as a Memento client
does: TimeGate negotiation before the first, between two, after the last and with no
``Accept-Datetime``; the TimeMap, parsed with a link-format parser written here, in the
shape of the RFC's examples; the headers of a memento; a Robust Link's
``data-versionurl`` followed; and who may ask (the token, ``--memento``, other pages).
"""

from __future__ import annotations

import http.client
import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from archiver_app.cite import citation, robust_link
from archiver_app.library import Library
from archiver_app.replay.server import ReplayServer
from archiver_app.store.models import Snapshot
from tests.helpers.archive import ArchiveWriter, at

PAGE = "http://memento.example/"
TIMES = ("20200101000000", "20220615120000", "20240301000000")


@pytest.fixture
def server(library: Library) -> Iterator[ReplayServer]:
    writer = ArchiveWriter(library)
    for stamp in TIMES:
        when = datetime.strptime(stamp, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
        writer.response(PAGE, f"<p>capture {stamp[:4]}</p>", at=when, page=True)
    writer.response("http://other.example/", "<p>other</p>", at=at(2021), page=True)
    writer.commit()
    srv = ReplayServer(library, memento=True).start()
    try:
        yield srv
    finally:
        srv.close()


def _ask(
    server: ReplayServer, path: str, method: str = "GET", **headers: str
) -> tuple[http.client.HTTPResponse, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request(method, path, headers={"Host": f"127.0.0.1:{server.port}", **headers})
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response, body


# A link-format (RFC 6690) parser: <uri>; param="value"; param=token, <uri>; ...
_LINK = re.compile(r'\s*<([^>]*)>((?:\s*;\s*[\w*-]+\s*=\s*(?:"[^"]*"|[^",;\s]+))*)\s*(?:,|$)')
_PARAM = re.compile(r'\s*;\s*([\w*-]+)\s*=\s*(?:"([^"]*)"|([^",;\s]+))')


def parse_links(text: str) -> list[tuple[str, dict[str, str]]]:
    """Every link of a link-format document or ``Link`` header; fails on anything else."""
    links, pos, text = [], 0, text.strip()
    while pos < len(text):
        match = _LINK.match(text, pos)
        assert match, f"not link-format at {pos}: {text[pos : pos + 60]!r}"
        params = {m[0]: m[1] or m[2] for m in _PARAM.findall(match.group(2))}
        links.append((match.group(1), params))
        pos = match.end()
    return links


def _rels(links: list[tuple[str, dict[str, str]]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for uri, params in links:
        for rel in params.get("rel", "").split():
            found.setdefault(rel, []).append(uri)
    return found


def _uri_m(server: ReplayServer, stamp: str) -> str:
    return f"{server.origin}/{stamp}/{PAGE}"


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("Mon, 01 Jan 1990 00:00:00 GMT", TIMES[0]),  # before the first
        ("Wed, 01 Jun 2022 00:00:00 GMT", TIMES[1]),  # between, nearer the second
        ("Sat, 01 Jan 2050 00:00:00 GMT", TIMES[2]),  # after the last
        (None, TIMES[2]),  # none asked: the latest
    ],
)
def test_the_timegate_negotiates_in_time(
    server: ReplayServer, accept: str | None, expected: str
) -> None:
    headers = {"Accept-Datetime": accept} if accept else {}
    answer, body = _ask(server, f"/timegate/{PAGE}", **headers)
    assert answer.status == 302 and body == b""
    assert answer.getheader("Location") == _uri_m(server, expected)
    assert answer.getheader("Vary") == "accept-datetime"
    rels = _rels(parse_links(answer.getheader("Link") or ""))
    assert rels["original"] == [PAGE]
    assert rels["timemap"] == [f"{server.origin}/timemap/link/{PAGE}"]
    assert rels["timegate"] == [f"{server.origin}/timegate/{PAGE}"]
    assert rels["first"] == [_uri_m(server, TIMES[0])]
    assert rels["last"] == [_uri_m(server, TIMES[2])]
    assert answer.getheader("Access-Control-Allow-Origin") is None


def test_the_timegate_refuses_a_bad_date_and_an_unknown_page(server: ReplayServer) -> None:
    bad, body = _ask(server, f"/timegate/{PAGE}", **{"Accept-Datetime": "2022-06-01"})
    assert bad.status == 400 and b"RFC 1123" in body
    assert _ask(server, "/timegate/http://never.example/")[0].status == 404
    assert _ask(server, "/timemap/link/http://never.example/")[0].status == 404


def test_the_timemap_lists_every_memento_in_link_format(server: ReplayServer) -> None:
    answer, body = _ask(server, f"/timemap/link/{PAGE}")
    assert answer.status == 200
    assert answer.getheader("Content-Type") == "application/link-format"
    assert answer.getheader("Access-Control-Allow-Origin") is None
    links = parse_links(body.decode())
    # The shape of RFC 7089's section 5 example: original, self (with from/until),
    # timegate, then the mementos oldest first with their datetimes.
    assert links[0] == (PAGE, {"rel": "original"})
    assert links[1] == (
        f"{server.origin}/timemap/link/{PAGE}",
        {
            "rel": "self",
            "type": "application/link-format",
            "from": "Wed, 01 Jan 2020 00:00:00 GMT",
            "until": "Fri, 01 Mar 2024 00:00:00 GMT",
        },
    )
    assert links[2] == (f"{server.origin}/timegate/{PAGE}", {"rel": "timegate"})
    dates = ("Wed, 01 Jan 2020 00:00:00 GMT", "Wed, 15 Jun 2022 12:00:00 GMT",
             "Fri, 01 Mar 2024 00:00:00 GMT")  # fmt: skip
    rels = ("first memento", "memento", "last memento")
    assert links[3:] == [
        (_uri_m(server, stamp), {"rel": rel, "datetime": date})
        for stamp, rel, date in zip(TIMES, rels, dates, strict=True)
    ]
    assert _ask(server, f"/timemap/link/{PAGE}", "HEAD")[0].status == 200


def test_a_memento_carries_its_datetime_and_links(server: ReplayServer) -> None:
    answer, body = _ask(server, f"/{TIMES[1]}/{PAGE}")
    assert answer.status == 200 and b"<iframe" in body
    assert answer.getheader("Memento-Datetime") == "Wed, 15 Jun 2022 12:00:00 GMT"
    rels = _rels(parse_links(answer.getheader("Link") or ""))
    assert rels["original"] == [PAGE]
    assert rels["timegate"] == [f"{server.origin}/timegate/{PAGE}"]
    assert rels["timemap"] == [f"{server.origin}/timemap/link/{PAGE}"]
    assert rels["prev"] == [_uri_m(server, TIMES[0])] and rels["next"] == [_uri_m(server, TIMES[2])]
    # The archived bytes themselves, in the frame's content host, say the same.
    frame = re.search(rb'<iframe src="http://([^/"]+)(/[^"]+)"', body)
    assert frame is not None
    conn = http.client.HTTPConnection("127.0.0.1", server.content_port, timeout=10)
    conn.request("GET", frame.group(2).decode(), headers={"Host": frame.group(1).decode()})
    content = conn.getresponse()
    assert b"capture 2022" in content.read()
    conn.close()
    assert content.getheader("Memento-Datetime") == "Wed, 15 Jun 2022 12:00:00 GMT"
    assert _rels(parse_links(content.getheader("Link") or ""))["original"] == [PAGE]
    # A time between captures is sent to the nearest capture's own address.
    moved, _ = _ask(server, f"/2022/{PAGE}")
    assert moved.status == 302 and moved.getheader("Location") == _uri_m(server, TIMES[1])


def test_a_robust_link_resolves_through_serve(server: ReplayServer, library: Library) -> None:
    with library.session() as session:
        snap_id = session.scalars(
            select(Snapshot.id).where(Snapshot.url == PAGE).order_by(Snapshot.captured_at)
        ).all()[0]
    link = robust_link(citation(library, snap_id, version_base=server.origin))
    version = re.search(r'data-versionurl="([^"]+)"', link)
    assert version is not None and version.group(1) == _uri_m(server, TIMES[0])
    # Followed as a browser follows a link from another site: a top-level navigation.
    answer, body = _ask(
        server,
        version.group(1)[len(server.origin) :],
        **{
            "Sec-Fetch-Site": "cross-site",
            "Sec-Fetch-Mode": "navigate",
            "Sec-Fetch-Dest": "document",
        },
    )
    assert answer.status == 200 and b"<iframe" in body
    assert answer.getheader("Memento-Datetime") == "Wed, 01 Jan 2020 00:00:00 GMT"


def test_who_may_ask(server: ReplayServer, library: Library) -> None:
    # Another web page's fetch (not a navigation) gets nothing, whatever it asks.
    for path in (f"/timemap/link/{PAGE}", f"/timegate/{PAGE}", f"/{TIMES[0]}/{PAGE}"):
        page_fetch = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"}
        answer, body = _ask(server, path, **page_fetch)
        assert answer.status == 403 and PAGE.encode() not in body, path
        assert answer.getheader("Access-Control-Allow-Origin") is None
    assert _ask(server, f"/timemap/link/{PAGE}", "POST")[0].status == 403  # read-only
    assert _ask(server, f"/timemap/link/{PAGE}", Host="evil.example")[0].status == 421
    # Without --memento, only the token opens them: the cookie or a bearer token.
    closed = ReplayServer(library).start()
    try:
        assert _ask(closed, f"/timemap/link/{PAGE}")[0].status == 403
        bearer = {"Authorization": f"Bearer {closed.token}"}
        assert _ask(closed, f"/timemap/link/{PAGE}", **bearer)[0].status == 200
    finally:
        closed.close()


def test_addresses_with_other_scripts_are_sent_percent_encoded(library: Library) -> None:
    """A page typed at capture as ``café.html?q=ü`` (stored so in its snapshot, encoded in
    its WARC): the redirect to its memento and the TimeMap give ASCII addresses, its
    characters as UTF-8 escapes, never raw bytes in a header."""
    encoded = "http://uni.example/caf%C3%A9.html?q=%C3%BC&x=1"
    writer = ArchiveWriter(library)
    writer.response(encoded, "<p>café</p>", at=at(2024), page=True)
    writer.commit()
    with library.write() as s:
        s.scalars(select(Snapshot)).one().url = "http://uni.example/café.html?q=ü&x=1"
    srv = ReplayServer(library, memento=True).start()
    try:
        moved, _ = _ask(srv, f"/latest/{encoded}")
        assert moved.status == 302
        assert moved.getheader("Location") == f"{srv.origin}/20240101000000/{encoded}"
        answer, body = _ask(srv, f"/timemap/link/{encoded}")
        assert answer.status == 200 and body.isascii()
        assert _rels(parse_links(body.decode()))["memento"] == [
            f"{srv.origin}/20240101000000/{encoded}"
        ]
    finally:
        srv.close()
