"""Text extraction from HTML: same words as before on normal pages, linear time on hostile ones."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.warc.htmltext import MAX_DEPTH, extract_html
from tests.helpers.warcs import Resp, html_page, write_warc

MB = 1_000_000

#: Each about 1 MB: what made the regular expressions (or a parser's tree builder) go
#: quadratic: unclosed comments, scripts and attributes, deep nesting, formatting elements
#: reopened at every block, options that never close.
HOSTILE = {
    "unclosed comments": "<!--" * (MB // 4),
    "unclosed script": "<script>" + "a<b " * (MB // 4),
    "unclosed html lang": "<html lang=" * (MB // 11),
    "unclosed style": "<style>" + "x{" * (MB // 2),
    "unclosed title": "<title>" + "<b>" * (MB // 3),
    "deep divs": "<div>" * (MB // 5),
    "deep formatting": "<a><b>" * (MB // 6),
    "end tags that close nothing": "<div></x>" * (MB // 9),
    "end tags stopped by a boundary": "<div><object></div>" * (MB // 19),
    "unclosed options": "<select>" + "<option>x" * (MB // 9),
    "reopened formatting": "<div>"
    + "".join(f"<b id={i}>" for i in range(250))
    + "</div>"
    + "<p>x</p>" * (MB // 8),
    "nested lists": "<ul><li>" * (MB // 8),
    "svg nesting": "<svg>" + "<g>" * (MB // 3),
    "lone brackets": "<" * MB,
}


@pytest.mark.parametrize("doc", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_markup_is_read_in_linear_time(doc: str) -> None:
    # These take 0.05-0.7 s on a quiet 2-core machine, a few seconds when it is shared by
    # many processes; the regular expressions took tens of minutes on the first three (30 s
    # for a tenth of their size), lexbor alone minutes on the nesting ones.
    started = time.perf_counter()
    extract_html(doc.encode())
    assert time.perf_counter() - started < 10.0


def test_text_survives_taming_of_a_hostile_page() -> None:
    words = " ".join(f"w{i}" for i in range(2000))
    doc = "<div>" * (MAX_DEPTH * 4) + f"<p>{words}</p>" + "<b id=1><i>x</i></b>" * 3000
    page = extract_html(f"<html lang=de><title>T</title>{doc}".encode())
    assert page.title == "T" and page.language == "de"
    assert page.text.split()[:2000] == words.split()
    assert page.text.split().count("x") == 3000


def test_normal_page_keeps_title_language_and_words() -> None:
    doc = (
        "<!doctype html><html lang='en-GB'><head><title> A  <b>bold</b>\n title </title>"
        "<style>p{color:red}</style><script>var hidden='scriptword';</script></head>"
        "<body><h1>Heading</h1><p>First <a href='/x' title='a > b'>link</a> &amp; more</p>"
        "<noscript>noscriptword</noscript><template>templateword</template>"
        "<svg><text>svgword</text></svg><!-- commentword --><ul><li>one<li>two</ul>"
        "</body></html>"
    )
    page = extract_html(doc.encode())
    assert page.title == "A bold title"
    assert page.language == "en-gb"
    assert page.text.split() == ["Heading", "First", "link", "&", "more", "one", "two"]


def test_a_deep_but_ordinary_page_is_not_rewritten() -> None:
    body = "<div>" * 100 + "<span>deep</span>" + "</div>" * 100
    doc = f"<html><body>{body}{'<p>para <b>b</b></p>' * 300}</body></html>"
    assert extract_html(doc.encode()).text.split()[:3] == ["deep", "para", "b"]


def test_a_megabyte_of_unclosed_comments_imports_in_under_a_second(
    library: Library, tmp_path: Path
) -> None:
    warm = write_warc(
        tmp_path / "warm.warc.gz", [Resp("https://example.org/", html_page("Warm", "up"))]
    )
    import_warc_file(library, warm)  # the worker process and the database are warm
    src = write_warc(
        tmp_path / "comments.warc.gz",
        [Resp("https://example.org/c", b"<html><title>C</title>" + b"<!--" * (MB // 4))],
    )
    started = time.perf_counter()
    outcome = import_warc_file(library, src)
    elapsed = time.perf_counter() - started
    assert (outcome.records, outcome.pages) == (1, 1)
    assert elapsed < 1.0
