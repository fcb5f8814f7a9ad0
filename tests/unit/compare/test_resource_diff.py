"""Which resources two captures of a page differ in, from the records each capture wrote."""

from __future__ import annotations

from sqlalchemy import update

from archiver_app.compare.snapshots import resource_diff
from archiver_app.library import Library
from archiver_app.store.models import Record
from tests.helpers.archive import ArchiveWriter, at

PAGE = "https://harbour.example/"


def _capture(library: Library, year: int, resources: dict[str, str]) -> int:
    """A capture of PAGE in ``year`` whose records include ``resources`` (path: body)."""
    w = ArchiveWriter(library, f"collections/default/{year}/capture.warc.gz")
    w.response(PAGE, "<title>Harbour</title>", at=at(year), page=True)
    for path, body in resources.items():
        w.response(PAGE.rstrip("/") + path, body, at=at(year), mime="text/css")
    ids = w.commit()
    with library.write() as s:
        page = s.get(Record, ids[0])
        assert page is not None and page.snapshot_id is not None
        s.execute(update(Record).where(Record.id.in_(ids)).values(snapshot_id=page.snapshot_id))
        return page.snapshot_id


def test_resources_added_removed_and_changed(library: Library) -> None:
    old = _capture(library, 2024, {"/style.css": "a", "/old.css": "x", "/same.css": "s"})
    new = _capture(library, 2025, {"/style.css": "b", "/new.css": "y", "/same.css": "s"})
    diff = resource_diff(library, old, new)
    assert diff.added == ("https://harbour.example/new.css",)
    assert diff.removed == ("https://harbour.example/old.css",)
    assert diff.changed == ("https://harbour.example/style.css",)


def test_a_favicon_in_one_capture_only_is_no_change(library: Library) -> None:
    """The browser asks for /favicon.ico by itself, once a site and session: a crawl's
    first page holds it and its later pages do not, so a watch's capture of a later page
    would always differ from the crawl's by that one resource."""
    old = _capture(library, 2024, {"/style.css": "a"})
    new = _capture(library, 2025, {"/style.css": "a", "/favicon.ico": "icon"})
    diff = resource_diff(library, old, new)
    assert not diff.any, diff
