"""Links read from a page's stored HTML (the crawler's own discovery)."""

from __future__ import annotations

from archiver_app.crawl.links import links_in_html


def test_links_in_html_resolves_against_the_page_and_base() -> None:
    html = """<html><head><title>t</title></head><body>
    <a href="a.html#frag">a</a> <a href=" /b ">b</a> <a href="mailto:x@y">m</a>
    <a href="javascript:void(0)">j</a> <a>none</a> <map><area href="c"></map>
    <a href="https://other.example/x?y=1">o</a><a href="http://[bad">bad</a>
    </body></html>"""
    assert links_in_html(html, "http://h.test/dir/page") == [
        "http://h.test/dir/a.html",
        "http://h.test/b",
        "http://h.test/dir/c",
        "https://other.example/x?y=1",
    ]
    based = '<base href="http://cdn.test/root/"><a href="x">x</a><base href="/ignored/">'
    assert links_in_html(based, "http://h.test/") == ["http://cdn.test/root/x"]
    assert links_in_html("<a href='ok'>unclosed <div", "http://h.test/") == ["http://h.test/ok"]


def test_a_malformed_base_is_ignored() -> None:
    html = '<base href="http://[oops/"><a href="next.html">n</a><a href="http://[x">bad</a>'
    assert links_in_html(html, "http://h.test/dir/page") == ["http://h.test/dir/next.html"]
