"""A capture turns into revisits only whole, successful responses: a 206 part or an error
page whose payload is already stored is written in full.

Real Chromium against a local site: the first capture stores two payloads as 200s; the
second page fetches the first payload again as a 200 (a revisit: dedup is on), as a 206
part, and the second payload as a 404 (both must stay responses).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.library import Library
from tests.helpers.webserver import LocalServer, Response

pytestmark = pytest.mark.slow

RULES = PageRules(page_timeout=40, settle_seconds=0.5)
PART = bytes(range(256)) * 8  # the first payload, later also served as a part
ERROR = b"<p>a payload that a later 404 page repeats word for word</p>" * 10


def _page(*fetches: str) -> str:
    calls = "".join(f"await fetch({f});" for f in fetches)
    return (
        "<!doctype html><html><head><title>t</title></head><body><p>page</p><script>"
        f"(async () => {{ {calls} document.title = 'done'; }})();</script></body></html>"
    )


def _site() -> LocalServer:
    server = LocalServer().start()
    server.add_static("/first", _page("'/part.bin'", "'/error.html'"))
    server.add_static(
        "/second",
        _page("'/again.bin'", "'/ranged.bin', {headers: {Range: 'bytes=0-'}}", "'/missing'"),
    )
    binary = "application/octet-stream"
    server.add_static("/part.bin", PART, binary)
    server.add_static("/again.bin", PART, binary)
    server.add_static("/error.html", ERROR)
    server.routes["/missing"] = lambda _r: Response(404, ERROR)
    total = len(PART) * 2  # the part is the first half of a larger resource
    server.routes["/ranged.bin"] = lambda _r: Response(
        206,
        PART,
        [("Content-Range", f"bytes 0-{len(PART) - 1}/{total}"), ("Accept-Ranges", "bytes")],
        binary,
    )
    return server


def test_parts_and_error_pages_are_never_revisits(tmp_path: Path) -> None:
    site = _site()
    try:
        with Library.open(tmp_path / "library", create=True) as lib:
            (first,) = capture_urls(lib, [site.url("/first")], rules=RULES)
            (second,) = capture_urls(lib, [site.url("/second")], rules=RULES)
            assert first.ok and second.ok, (first.error, second.error)
            with lib.engine.connect() as conn:
                rows = conn.execute(
                    text(
                        "SELECT url, record_type, status, digest FROM records"
                        " WHERE record_type IN ('response', 'revisit') AND snapshot_id = :s"
                    ),
                    {"s": second.snapshot_id},
                ).all()
                stored = dict(
                    conn.execute(
                        text(
                            "SELECT url, digest FROM records WHERE snapshot_id = :s"
                            " AND record_type = 'response'"
                        ),
                        {"s": first.snapshot_id},
                    ).all()
                )
    finally:
        site.stop()
    got = {url.removeprefix(site.url("")): (rtype, status, d) for url, rtype, status, d in rows}
    part_digest, error_digest = stored[site.url("/part.bin")], stored[site.url("/error.html")]
    assert got["/again.bin"] == ("revisit", 200, part_digest)  # dedup is on for this capture
    assert got["/ranged.bin"] == ("response", 206, part_digest)
    assert got["/missing"] == ("response", 404, error_digest)
