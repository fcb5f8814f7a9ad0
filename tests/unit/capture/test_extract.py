"""Page facts: links, snippets, languages; and the command's URL list."""

from __future__ import annotations

import io

from archiver_app.capture.engine import describe_failure
from archiver_app.capture.extract import (
    clean_links,
    facts_from,
    make_snippet,
    media_title,
    normalise_language,
)
from archiver_app.commands.capture_cmd import read_urls


def test_links_are_absolute_http_fragment_free_and_unique() -> None:
    links = [
        "http://a.org/x#top", "http://a.org/x", "https://b.org/", "mailto:me@a.org",
        "javascript:void(0)", "ftp://c.org/", None, "http://[bad", "data:text/plain,x",
    ]  # fmt: skip
    assert clean_links(links) == ["http://a.org/x", "https://b.org/"]


def test_snippet_and_language() -> None:
    assert make_snippet("  a\n\n b\tc ") == "a b c"
    long = "word " * 200
    snip = make_snippet(long, limit=50)
    assert len(snip) <= 51 and snip.endswith("…")
    assert normalise_language("en-GB") == "en-GB"
    assert normalise_language("fr, en") == "fr"
    assert normalise_language("<script>") is None
    facts = facts_from({"title": " T ", "lang": "de", "text": "x", "links": ["http://a/#b"]})
    assert (facts.title, facts.language, facts.outlinks) == ("T", "de", ["http://a/"])


def test_failures_read_as_sentences() -> None:
    assert "could not be resolved" in describe_failure(
        "Page.goto: net::ERR_NAME_NOT_RESOLVED at http://x.invalid/", "http://x.invalid/", 5
    )
    assert describe_failure("Timeout 5000ms exceeded.", "http://a/", 5) == (
        "the page did not load within 5 s"
    )
    assert "TLS error" in describe_failure("net::ERR_CERT_AUTHORITY_INVALID", "https://a/", 5)
    assert describe_failure(
        "Page.goto: net::ERR_UNSAFE_PORT at http://127.0.0.1:6000/", "http://127.0.0.1:6000/", 5
    ) == ("browsers do not connect to port 6000 (kept for other services)")
    assert describe_failure("net::ERR_TOO_MANY_REDIRECTS", "https://loop.example/", 5) == (
        "loop.example redirects in a loop"
    )


def test_read_urls_expands_stdin() -> None:
    stdin = io.StringIO("http://a/\n\n# note\n  http://b/  \n")
    assert read_urls(["http://z/", "-"], stdin) == ["http://z/", "http://a/", "http://b/"]


def test_route_fragments_are_kept_and_anchors_dropped() -> None:
    from archiver_app.capture.extract import clean_links
    from archiver_app.crawl.links import links_in_html
    from archiver_app.urls import normalize_url, route_fragment

    assert route_fragment("/guide") == "/guide" and route_fragment("!/post/1") == "!/post/1"
    assert route_fragment("section") == "" and route_fragment("") == ""
    assert clean_links(["http://h/a#/guide", "http://h/a#top", "http://h/a"]) == [
        "http://h/a#/guide",
        "http://h/a",
    ]
    html = '<a href="#/guide">g</a><a href="#intro">i</a><a href="/b#!/x">b</a>'
    assert links_in_html(html, "http://h/a") == [
        "http://h/a#/guide",
        "http://h/a",
        "http://h/b#!/x",
    ]
    assert normalize_url("HTTP://H/docs/#/guide") == "http://h/docs/#/guide"
    assert normalize_url("http://h/docs/#intro") == "http://h/docs/"


def test_a_sound_or_video_is_named_after_its_file_kind_and_duration() -> None:
    assert media_title("http://h/music/song.mp3?x=1", "audio/mpeg", 204.6) == (
        "song.mp3 (audio, 3:25)"
    )
    assert media_title("http://h/talk.mp4", "video/mp4", 3725.0) == "talk.mp4 (video, 1:02:05)"
    assert media_title("http://h/clip.webm", "video/webm", None) == "clip.webm (video)"
    assert media_title("http://h/live.ogg", "audio/ogg", float("nan")) == "live.ogg (audio)"
    assert media_title("http://h/a%20b.wav", "audio/wav", 0.5) == "a b.wav (audio, 0:01)"
