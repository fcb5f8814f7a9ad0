"""An export imported into another library gives each capture the records it had.

Real Chromium captures three pages of a local site, each with its own image (the first
page's too) and one with a script that answers 404; a capture's WARC holds what the
browser fetched before the page's own response. The library exports them as a WACZ and as
a folder; each is imported into a new library, where every capture must own exactly the
records it owned in the first (none left without a page, none given to the page before).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.export import Selection, export
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from archiver_app.store.models import Record, Snapshot
from tests.helpers.testsite import png
from tests.helpers.webserver import LocalServer, Response

pytestmark = pytest.mark.slow

PAGES = {  # path -> what it loads
    "/": "<img src='/red.png'>",
    "/article": "<img src='/blue.png'><script src='/gone.js'></script>",
    "/moved": "<img src='/green.png'>",  # 301 -> /tides
}


def _html(extra: str) -> bytes:
    return f"<!doctype html><html><head><title>t</title></head><body>{extra}</body></html>".encode()


@pytest.fixture(scope="module")
def site() -> Iterator[LocalServer]:
    server = LocalServer().start()
    server.add_static("/", _html(PAGES["/"]))
    server.add_static("/article", _html(PAGES["/article"]))
    server.routes["/moved"] = lambda _r: Response(301, b"", [("Location", "/tides")])
    server.add_static("/tides", _html(PAGES["/moved"]))
    server.routes["/gone.js"] = lambda _r: Response(404, b"nope", content_type="text/plain")
    for name, rgb in (("red", (200, 0, 0)), ("blue", (0, 0, 200)), ("green", (0, 200, 0))):
        server.add_static(f"/{name}.png", png(8, 8, rgb), "image/png")
    try:
        yield server
    finally:
        server.stop()


def _owned(lib: Library) -> dict[str, set[tuple[str, str]]]:
    """Each capture's address -> the (type, address) of every record it owns; records of
    no capture under ""."""
    out: dict[str, set[tuple[str, str]]] = {}
    with lib.session() as s:
        rows = s.execute(
            select(Snapshot.url, Record.record_type, Record.url)
            .select_from(Record)
            .outerjoin(Snapshot, Snapshot.id == Record.snapshot_id)
        )
        for page, kind, url in rows:
            if kind != "warcinfo":  # a capture keeps its warcinfo out of the index
                out.setdefault(page or "", set()).add((kind, url))
    return out


@pytest.fixture(scope="module")
def captured(site: LocalServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("roundtrip") / "library"
    with Library.open(root, create=True) as lib:
        results = capture_urls(
            lib, [site.url(p) for p in PAGES], rules=PageRules(page_timeout=40, settle_seconds=0.2)
        )
        assert all(r.ok for r in results), [(r.url, r.error) for r in results]
        owned = _owned(lib)
    assert ("response", site.url("/red.png")) in owned[site.url("/")]
    assert ("response", site.url("/gone.js")) in owned[site.url("/article")]
    return root


@pytest.mark.parametrize("fmt", ["wacz", "folder"])
def test_each_capture_keeps_its_records(
    captured: Path, fmt: str, tmp_path: Path, site: LocalServer
) -> None:
    dest = tmp_path / ("all.wacz" if fmt == "wacz" else "all")
    with Library.open(captured) as lib:
        result = export(lib, Selection(), dest, fmt=fmt)
        before = _owned(lib)
    assert result.pages == len(PAGES) and not result.problems, result
    source = dest if fmt == "wacz" else dest / "archive" / "data.warc.gz"
    with Library.open(tmp_path / "other", create=True) as other:
        outcome = import_paths(other, [source])
        assert outcome.records and not outcome.failed, outcome.describe()
        after = _owned(other)
    assert "" not in after, sorted(after[""])
    assert after == before
    # and again: an export of the imported library gives the same captures the same records
    again = tmp_path / ("again.wacz" if fmt == "wacz" else "again")
    with Library.open(tmp_path / "other") as other:
        export(other, Selection(), again, fmt=fmt)
    source = again if fmt == "wacz" else again / "archive" / "data.warc.gz"
    with Library.open(tmp_path / "third", create=True) as third:
        import_paths(third, [source])
        assert _owned(third) == before
