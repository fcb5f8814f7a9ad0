"""Two routes of one hash-routed app (``/app/#/guide``, ``/app/#/``) captured in the same
second: their records have the same address (the document's, no fragment), so only their
times tell them apart. An export lists each route at its own record's time, to the
millisecond, and imported again each route is the page it was (its capture, at its time),
with its title and the text recorded for it (``urn:text:`` names the route).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from archiver_app.export import Selection, export
from archiver_app.importers.run import import_paths
from archiver_app.importers.wacz import import_wacz_file
from archiver_app.library import Library
from tests.unit.importers.test_bad_input import make_wacz
from tests.unit.importers.test_imported_page_text import R, _text, _warc

APP = "https://docs.example/app/"
SERVED = "<html><head><title>App</title></head><body>loading</body></html>"
#: (route, its record's time, the title the script set, the words it showed), in file order.
ROUTES = [
    ("#/guide", "2024-05-01T10:00:00.100Z", "Guide - App", "guide words"),
    ("#/", "2024-05-01T10:00:00.500Z", "Home - App", "home words"),
]


def _pages(root: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(root / "library.db")
    try:
        return conn.execute(
            "SELECT s.url, s.captured_at, s.title, f.body FROM snapshots s "
            "JOIN snapshot_fts f ON f.rowid = s.id ORDER BY s.url"
        ).fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize("texts", ["after each page", "after all pages"])
@pytest.mark.parametrize("fmt", ["wacz", "folder"])
def test_each_hash_route_is_its_own_page_after_export_and_import(
    library: Library, tmp_path: Path, fmt: str, texts: str
) -> None:
    pages = [R(APP, SERVED, date=date) for _, date, _, _ in ROUTES]
    views = [_text(APP + route, words, date) for route, date, _, words in ROUTES]
    records = [pages[0], views[0], pages[1], views[1]]
    if texts == "after all pages":  # the texts of both routes after both pages
        records = [*pages, *views]
    warc = _warc(tmp_path / "w.warc.gz", records).read_bytes()
    listing = b"".join(
        json.dumps({"url": APP + route, "ts": date, "title": title}).encode() + b"\n"
        for route, date, title, _ in ROUTES
    )
    import_wacz_file(
        library, make_wacz(tmp_path / "a.wacz", warc, extra={"pages/pages.jsonl": listing})
    )
    expected = sorted(
        (APP + route, date[:-1].replace("T", " ") + "000", title, words)
        for route, date, title, words in ROUTES
    )
    assert _pages(library.root) == expected
    out = tmp_path / ("out.wacz" if fmt == "wacz" else "out")
    export(library, Selection(), out, fmt=fmt)
    with Library.open(tmp_path / "again", create=True) as again:
        import_paths(again, [out if fmt == "wacz" else out / "archive" / "data.warc.gz"])
        assert _pages(again.root) == expected
