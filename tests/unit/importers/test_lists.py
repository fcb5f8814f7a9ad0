"""Bookmarks, URL lists (files and standard input) and browser history queue capture jobs."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest

from archiver_app.importers.bookmarks import BookmarksError, parse_bookmarks
from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import STDIN, import_paths
from archiver_app.library import Library
from archiver_app.store.models import Job, Page

BOOKMARKS = """<!DOCTYPE NETSCAPE-Bookmark-file-1>
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">
<TITLE>Bookmarks</TITLE>
<H1>Bookmarks</H1>
<DL><p>
    <DT><H3 ADD_DATE="1">Research</H3>
    <DL><p>
        <DT><H3>Climat &amp; eau</H3>
        <DL><p>
            <DT><A HREF="https://climate.example/a" ADD_DATE="2">Climate A</A>
        </DL><p>
        <DT><A HREF="https://research.example/">Research home</A>
    </DL><p>
    <DT><A HREF="https://top.example/">Top</A>
    <DT><A HREF="javascript:alert(1)">bookmarklet</A>
</DL><p>
"""


def test_parse_bookmarks_folders_become_tags() -> None:
    marks = parse_bookmarks(BOOKMARKS.encode())
    assert [(b.url, b.tags) for b in marks] == [
        ("https://climate.example/a", ["Research", "Climat & eau"]),
        ("https://research.example/", ["Research"]),
        ("https://top.example/", []),
        ("javascript:alert(1)", []),
    ]
    assert marks[0].title == "Climate A"


def test_bookmark_encodings() -> None:
    latin = BOOKMARKS.replace("UTF-8", "iso-8859-1").replace("Climat", "Clim\u00e2t")
    assert parse_bookmarks(latin.encode("latin-1"))[0].tags[1] == "Clim\u00e2t & eau"
    utf16 = parse_bookmarks(b"\xff\xfe" + BOOKMARKS.replace("UTF-8", "x").encode("utf-16-le"))
    assert len(utf16) == 4
    with pytest.raises(BookmarksError, match="unknown encoding 'klingon-8'"):
        parse_bookmarks(BOOKMARKS.replace("UTF-8", "klingon-8").encode())
    with pytest.raises(BookmarksError, match="unknown encoding"):
        parse_bookmarks(b"<DL><DT><A HREF='https://x.example/'>\xe9\xff\x81</A></DL>")


@pytest.mark.parametrize("charset", ["hex", "base64", "rot13", "zlib", "idna", "undefined"])
def test_bookmarks_declaring_a_codec_that_is_no_text_encoding(
    library: Library, tmp_path: Path, charset: str
) -> None:
    with pytest.raises(BookmarksError, match=f"unknown encoding '{charset}'"):
        parse_bookmarks(BOOKMARKS.replace("UTF-8", charset).encode())
    path = tmp_path / "bookmarks.html"
    path.write_text(BOOKMARKS.replace("UTF-8", charset), encoding="utf-8")
    out = import_paths(library, [path]).outcomes[0]
    assert out.state is OutcomeState.FAILED and f"unknown encoding '{charset}'" in out.reason


def _jobs(lib: Library) -> list[tuple[Job, list[str]]]:
    from sqlalchemy import select

    with lib.session() as s:
        jobs = s.scalars(select(Job).order_by(Job.id)).all()
        return [
            (j, list(s.scalars(select(Page.url).where(Page.job_id == j.id).order_by(Page.id))))
            for j in jobs
        ]


def test_bookmarks_file_queues_job_with_tags(library: Library, tmp_path: Path) -> None:
    path = tmp_path / "bookmarks.html"
    path.write_text(BOOKMARKS, encoding="utf-8")
    out = import_paths(library, [path], collection="reading", tags=["imported"]).outcomes[0]
    assert out.state is OutcomeState.QUEUED and out.urls == 3
    assert out.problems == ["1 non-http(s) bookmark(s) skipped"]
    # one page-scope capture job per folder path, tagged with the folders (+ --tag)
    jobs = _jobs(library)
    assert [j.id for j, _ in jobs] == out.job_ids and out.job_id == out.job_ids[0]
    assert [(j.config["tags"], urls) for j, urls in jobs] == [
        (["Climat & eau", "Research", "imported"], ["https://climate.example/a"]),
        (["Research", "imported"], ["https://research.example/"]),
        (["imported"], ["https://top.example/"]),
    ]
    assert {(j.status, j.config["scope"], j.config["collection"]) for j, _ in jobs} == {
        ("queued", "page", "reading")
    }


def test_url_list_file_and_stdin(library: Library, tmp_path: Path) -> None:
    path = tmp_path / "urls.txt"
    path.write_text(
        "# my list\nhttps://a.example/\n\nftp://nope.example/\nhttps://a.example/\nhttps://b.example/x\n"
    )
    report = import_paths(
        library, [path, STDIN], stdin=io.StringIO("https://c.example/\nnot a url\n")
    )
    first, second = report.outcomes
    assert first.state is OutcomeState.QUEUED and first.urls == 2
    assert first.problems == [
        "line 4: unsupported URL scheme 'ftp' in 'ftp://nope.example/': "
        "only http and https pages can be captured"
    ]
    assert second.state is OutcomeState.QUEUED and second.urls == 1 and second.problems
    assert [urls for _, urls in _jobs(library)] == [
        ["https://a.example/", "https://b.example/x"],
        ["https://c.example/"],
    ]


def test_empty_url_list_fails(library: Library) -> None:
    out = import_paths(library, [STDIN], stdin=io.StringIO("# nothing\n\n")).outcomes[0]
    assert out.state is OutcomeState.FAILED and out.reason == "no URLs in it"


def test_chrome_and_firefox_history(library: Library, tmp_path: Path) -> None:
    chrome = tmp_path / "History"
    conn = sqlite3.connect(chrome)
    conn.execute(
        "CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT, title TEXT, last_visit_time INTEGER)"
    )
    conn.executemany(
        "INSERT INTO urls (url, title, last_visit_time) VALUES (?, ?, ?)",
        [
            ("https://old.example/", "o", 1),
            ("https://new.example/", "n", 9),
            ("chrome://settings", "s", 5),
        ],
    )
    conn.commit()
    conn.close()
    firefox = tmp_path / "places.sqlite"
    conn = sqlite3.connect(firefox)
    conn.execute(
        "CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT, visit_count INTEGER, "
        "last_visit_date INTEGER)"
    )
    conn.executemany(
        "INSERT INTO moz_places (url, visit_count, last_visit_date) VALUES (?, ?, ?)",
        [("https://ff.example/", 2, 5), ("https://never.example/", 0, None)],
    )
    conn.commit()
    conn.close()
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    before = chrome.read_bytes()
    report = import_paths(library, [chrome, firefox, other])
    states = [(o.kind, o.state, o.urls) for o in report.outcomes]
    assert states == [
        ("history", OutcomeState.QUEUED, 2),
        ("history", OutcomeState.QUEUED, 1),
        ("history", OutcomeState.FAILED, 0),
    ]
    assert "not a Chrome or Firefox history" in report.outcomes[2].reason
    assert [urls for _, urls in _jobs(library)] == [
        ["https://new.example/", "https://old.example/"],
        ["https://ff.example/"],
    ]
    assert chrome.read_bytes() == before
