"""A WACZ's pages list decides what becomes a page: each listed page once, everything else
(script fetches of the same URL, 206 parts, pages not listed) stays a record for replay."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.wacz import import_wacz_file
from archiver_app.library import Library
from archiver_app.warc import indexer
from tests.helpers.warcs import Resp, html_page, write_warc
from tests.unit.importers.test_bad_input import make_wacz
from tests.unit.importers.test_imported_page_text import RAW, R, _warc


def _rows(lib: Library, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(lib.db_path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_only_the_listed_pages_become_snapshots(library: Library, tmp_path: Path) -> None:
    home = "https://site.example/"
    about = "https://site.example/about"
    warc = write_warc(
        tmp_path / "w.warc.gz",
        [
            Resp(home, html_page("Home", "welcome")),
            Resp(home, b"<p>fetched again by a script</p>", date="2024-03-01T10:00:05Z"),
            Resp(about, html_page("About", "us"), date="2024-03-01T10:01:00Z"),
            Resp(about, b"<html>part", status="206 Partial Content"),
            Resp("https://site.example/unlisted", html_page("Unlisted", "not a page")),
            Resp("https://site.example/app.js", b"x", mime="application/javascript"),
        ],
    ).read_bytes()
    pages = b"".join(
        json.dumps(line).encode() + b"\n"
        for line in (
            {"format": "json-pages-1.0", "id": "pages"},
            {"url": home, "ts": "2024-03-01T10:00:00Z", "title": "Home"},
            {"url": about, "ts": "2024-03-01T10:01:00Z", "title": "About"},
        )
    )
    wacz = make_wacz(tmp_path / "site.wacz", warc, extra={"pages/pages.jsonl": pages})
    outcome = import_wacz_file(library, wacz)
    assert outcome.state is OutcomeState.IMPORTED
    assert (outcome.records, outcome.pages) == (6, 2)
    assert not any("pages list" in line for line in outcome.problems)
    assert _rows(library, "SELECT url, title FROM snapshots ORDER BY id") == [
        (home, "Home"),
        (about, "About"),
    ]
    # every record is still there for replay, the first capture of each page its snapshot's
    assert len(_rows(library, "SELECT id FROM records")) == 6
    offsets = _rows(
        library,
        "SELECT r.url, r.status FROM snapshots s JOIN records r ON r.offset = s.warc_offset",
    )
    assert sorted(offsets) == [(home, 200), (about, 200)]


def test_a_url_listed_twice_is_two_pages(library: Library, tmp_path: Path) -> None:
    url = "https://site.example/news"
    warc = write_warc(
        tmp_path / "w.warc.gz",
        [
            Resp(url, html_page("Monday", "m"), date="2024-03-04T10:00:00Z"),
            Resp(url, html_page("Tuesday", "t"), date="2024-03-05T10:00:00Z"),
            Resp(url, b"<p>xhr</p>", date="2024-03-05T10:00:01Z"),
        ],
    ).read_bytes()
    pages = b"".join(
        json.dumps({"url": url, "ts": ts}).encode() + b"\n"
        for ts in ("2024-03-04T10:00:00Z", "2024-03-05T10:00:00Z")
    )
    outcome = import_wacz_file(
        library, make_wacz(tmp_path / "n.wacz", warc, extra={"pages/pages.jsonl": pages})
    )
    assert (outcome.records, outcome.pages) == (3, 2)
    assert _rows(library, "SELECT title FROM snapshots ORDER BY id") == [("Monday",), ("Tuesday",)]


@pytest.mark.parametrize("chunk", [1, 250])
def test_a_listed_time_picks_its_capture_even_when_an_earlier_one_came_first(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """The earlier capture is the page until the listed one comes (in a later batch too);
    then the page is the listed capture, with its text, and owns what follows it."""
    monkeypatch.setattr(indexer, "CHUNK", chunk)
    url = "https://site.example/news"
    warc = write_warc(
        tmp_path / "w.warc.gz",
        [
            Resp(url, html_page("Monday", "mondaywords"), date="2024-03-04T10:00:00Z"),
            Resp("https://site.example/a.js", b"1", mime="text/javascript"),
            Resp(url, html_page("Tuesday", "tuesdaywords"), date="2024-03-05T10:00:00.250Z"),
            Resp("https://site.example/b.js", b"2", mime="text/javascript"),
            Resp("https://site.example/other", html_page("Other", "o")),
        ],
    ).read_bytes()
    pages = b"".join(
        json.dumps(line).encode() + b"\n"
        for line in (
            {"url": url, "ts": "2024-03-05T10:00:00Z", "title": "Listed"},
            {"url": "https://site.example/other", "ts": "2024-03-01T10:00:00.999Z"},
        )
    )
    outcome = import_wacz_file(
        library, make_wacz(tmp_path / "n.wacz", warc, extra={"pages/pages.jsonl": pages})
    )
    assert (outcome.records, outcome.pages) == (5, 2)
    assert _rows(library, "SELECT url, captured_at, title FROM snapshots ORDER BY id") == [
        (url, "2024-03-05 10:00:00.250000", "Listed"),  # the title its capture recorded
        # no record at the listed millisecond: the first whole capture of the URL
        ("https://site.example/other", "2024-03-01 10:00:00.000000", "Other"),
    ]
    assert _rows(
        library,
        "SELECT r.url FROM records r JOIN snapshots s ON s.id = r.snapshot_id "
        "WHERE s.url LIKE '%news' ORDER BY r.offset",
    ) == [(url,), ("https://site.example/a.js",), (url,), ("https://site.example/b.js",)]
    assert _rows(library, "SELECT body FROM snapshot_fts WHERE body LIKE '%words%'") == [
        ("Tuesday tuesdaywords",)
    ]


@pytest.mark.parametrize("order", ["frame first", "page first"])
def test_a_page_in_two_warcs_of_one_wacz_is_one_page(
    library: Library, tmp_path: Path, order: str
) -> None:
    """A crawler writing several WARCs (one per browser, one per gigabyte) can store a listed
    page twice: once as another page's frame in one WARC, once as its own page in another.
    The pages list holds for the whole WACZ: each listing one page, the listed capture."""
    home, frame = "https://site.example/", "https://site.example/map"
    first = write_warc(
        tmp_path / "a.warc.gz",
        [
            Resp(home, html_page("Home", "welcome"), date="2024-03-01T10:00:00Z"),
            Resp(frame, html_page("Map", "as a frame"), date="2024-03-01T10:00:01Z"),
        ],
    ).read_bytes()
    second = write_warc(
        tmp_path / "b.warc.gz",
        [Resp(frame, html_page("Map", "its own page"), date="2024-03-01T10:05:00Z")],
    ).read_bytes()
    untimed = "https://site.example/untimed"
    third, fourth = (
        write_warc(
            tmp_path / f"{name}.warc.gz",
            [Resp(untimed, html_page("Untimed", "once"), date=f"2024-03-01T10:0{minute}:00Z")],
        ).read_bytes()
        for name, minute in (("c", 6), ("d", 7))
    )
    pages = b"".join(
        json.dumps(line).encode() + b"\n"
        for line in (
            {"url": home, "ts": "2024-03-01T10:00:00Z"},
            {"url": frame, "ts": "2024-03-01T10:05:00Z"},
            {"url": untimed},
        )
    )
    warcs = {"archive/a.warc.gz": first, "archive/b.warc.gz": second}
    if order == "page first":
        warcs = {"archive/b.warc.gz": second, "archive/a.warc.gz": first}
    # the untimed page is in two WARCs too: the first capture met is its page
    warcs |= {"archive/c.warc.gz": third, "archive/d.warc.gz": fourth}
    wacz = make_wacz(tmp_path / "two.wacz", first, extra={**warcs, "pages/pages.jsonl": pages})
    outcome = import_wacz_file(library, wacz)
    assert outcome.state is OutcomeState.IMPORTED
    rows = _rows(library, "SELECT url, captured_at FROM snapshots ORDER BY url")
    assert rows == [
        (home, "2024-03-01 10:00:00.000000"),
        (frame, "2024-03-01 10:05:00.000000"),
        (untimed, "2024-03-01 10:06:00.000000"),
    ]
    assert _rows(library, "SELECT body FROM snapshot_fts WHERE body LIKE '%page%'") == [
        ("Map its own page",)
    ]


def test_listed_pages_the_warcs_do_not_hold_are_named(library: Library, tmp_path: Path) -> None:
    """A pages list naming pages its WARCs hold no capture of (a list from another crawl, a
    WACZ cut short) imported with fewer pages, or none, and said nothing."""
    home = "https://site.example/"
    warc = write_warc(tmp_path / "w.warc.gz", [Resp(home, html_page("Home", "w"))]).read_bytes()
    listed = [home] + [f"https://elsewhere.example/{i}" for i in range(5)]
    pages = b"".join(json.dumps({"url": u}).encode() + b"\n" for u in listed)
    wacz = make_wacz(tmp_path / "cut.wacz", warc, extra={"pages/pages.jsonl": pages})
    outcome = import_wacz_file(library, wacz)
    assert outcome.state is OutcomeState.IMPORTED and outcome.pages == 1
    assert outcome.problems[-1] == (
        "its pages list names 5 pages its WARCs hold no capture of: "
        "https://elsewhere.example/0, https://elsewhere.example/1, "
        "https://elsewhere.example/2 and 2 more"
    )


def test_an_imported_page_weighs_its_records(library: Library, tmp_path: Path) -> None:
    """The Size column showed an imported page's page record only (a page with an 80 MB
    video read as 353 bytes, as if the rest were lost): it is the bytes of its records."""
    home = "https://site.example/"
    warc = write_warc(
        tmp_path / "w.warc",
        [
            Resp(home, html_page("Home", "a film")),
            Resp(home + "film.mp4", bytes(range(256)) * 4000, mime="video/mp4"),
            Resp(home + "about", html_page("About", "us")),
        ],
        gz=False,
    )
    pages = b"".join(json.dumps({"url": u}).encode() + b"\n" for u in (home, home + "about"))
    wacz = make_wacz(tmp_path / "w.wacz", warc.read_bytes(), extra={"pages/pages.jsonl": pages})
    assert import_wacz_file(library, wacz).pages == 2
    rows = _rows(
        library,
        "SELECT s.url, s.size_bytes, s.warc_length, SUM(r.length) FROM snapshots s "
        "JOIN records r ON r.snapshot_id = s.id GROUP BY s.id ORDER BY s.id",
    )
    (_, size, own, total), (_, about_size, about_own, about_total) = rows
    assert size == total > own + 1_000_000  # the page and its video
    assert about_size == about_total == about_own  # a page of one record


def test_a_page_has_the_title_its_capture_recorded(library: Library, tmp_path: Path) -> None:
    """A script retitled both pages after the server sent "Orchard": the listed titles are
    theirs, a revisit's too (not its original's)."""
    home, later = "https://orchard.example/", "https://orchard.example/later"
    warc = _warc(
        tmp_path / "w.warc.gz",
        [R(home, RAW)],
        revisits={home: R(later, "", date="2024-06-01T10:00:00Z")},
    ).read_bytes()
    pages = b"".join(
        json.dumps(line).encode() + b"\n"
        for line in (
            {"url": home, "ts": "2024-05-01T10:00:00Z", "title": "Morning"},
            {"url": later, "ts": "2024-06-01T10:00:00Z", "title": "Evening"},
        )
    )
    outcome = import_wacz_file(
        library, make_wacz(tmp_path / "o.wacz", warc, extra={"pages/pages.jsonl": pages})
    )
    assert outcome.pages == 2
    assert _rows(library, "SELECT url, title FROM snapshots ORDER BY id") == [
        (home, "Morning"),
        (later, "Evening"),
    ]
    assert _rows(library, "SELECT title FROM snapshot_fts ORDER BY rowid") == [
        ("Morning",),
        ("Evening",),
    ]


def test_a_listed_hash_route_is_a_page_of_its_document(library: Library, tmp_path: Path) -> None:
    """A hash-routed app's pages are listed with their ``#/route``; their records have no
    fragment. Each listing is the capture of the document at its time (or, without a time,
    its first one), with the listed address, title (a script set it) and text."""
    app, docs = "https://site.example/app/", "https://site.example/docs/"
    served = html_page("App", "loading")  # what the server sent for every route
    warc = write_warc(
        tmp_path / "w.warc.gz",
        [
            Resp(app, served, date="2024-03-04T10:00:00Z"),
            Resp("https://site.example/app/home.json", b"{}", mime="application/json"),
            Resp(app, served, date="2024-03-05T10:00:00Z"),
            Resp("https://site.example/app/guide.json", b"{}", mime="application/json"),
            Resp(docs, html_page("Docs", "loading")),
        ],
    ).read_bytes()
    listings = (
        {"url": app + "#/guide", "ts": "2024-03-05T10:00:00Z", "title": "Guide", "text": "g w"},
        {"url": app + "#/", "ts": "2024-03-04T10:00:00Z", "title": "Home", "text": "h w"},
        {"url": docs + "#/intro", "title": "Intro", "text": "intro words"},
    )
    pages = b"".join(json.dumps(line).encode() + b"\n" for line in listings)
    outcome = import_wacz_file(
        library, make_wacz(tmp_path / "h.wacz", warc, extra={"pages/pages.jsonl": pages})
    )
    assert (outcome.records, outcome.pages) == (5, 3)
    assert outcome.problems == [  # nothing else: its package holds no signature file
        "not signed as it is: its signature file datapackage-digest.json is missing"
    ]
    assert _rows(
        library,
        "SELECT s.url, s.captured_at, s.title, f.body FROM snapshots s "
        "JOIN snapshot_fts f ON f.rowid = s.id ORDER BY s.id",
    ) == [
        (app + "#/", "2024-03-04 10:00:00.000000", "Home", "h w"),
        (app + "#/guide", "2024-03-05 10:00:00.000000", "Guide", "g w"),
        (docs + "#/intro", "2024-03-01 10:00:00.000000", "Intro", "intro words"),
    ]
    assert _rows(
        library,
        "SELECT r.url FROM records r JOIN snapshots s ON s.id = r.snapshot_id "
        "WHERE s.url LIKE '%guide' ORDER BY r.offset",
    ) == [(app,), ("https://site.example/app/guide.json",)]
