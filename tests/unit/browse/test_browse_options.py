"""What a browsing session refuses before any browser starts, and how pages are told apart."""

from __future__ import annotations

import pytest

from archiver_app.capture.browse.inpage import page_key, parse_note
from archiver_app.capture.browse.session import check_display, user_data_for
from archiver_app.errors import ArchiverError, InputError
from archiver_app.library import Library
from archiver_app.profiles import profile_dir


def test_a_profile_must_exist_and_have_a_valid_name(library: Library) -> None:
    assert user_data_for(library, None) is None  # a temporary profile
    with pytest.raises(InputError, match="not a profile name"):
        user_data_for(library, "../escape")
    with pytest.raises(InputError, match=r"no browser profile named 'news'.*logging in"):
        user_data_for(library, "news")
    folder = profile_dir(library.root, "news")
    folder.mkdir(parents=True)
    assert user_data_for(library, "news") == folder


def test_no_display_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(ArchiverError, match="no display"):
        check_display()
    monkeypatch.setenv("DISPLAY", ":5")
    check_display()


def test_a_plain_anchor_is_the_same_page_a_route_is_not() -> None:
    assert page_key("https://a.example/p#section") == page_key("https://a.example/p")
    assert page_key("https://a.example/app#/one") != page_key("https://a.example/app#/two")
    assert page_key("https://a.example/app#!x") != page_key("https://a.example/app")
    assert page_key("https://a.example/p?q=1") != page_key("https://a.example/p?q=2")


def test_a_note_is_read_only_when_it_has_the_right_shape() -> None:
    note = parse_note(
        '{"kind": "leave", "url": "https://a.example/", "dom": "<html></html>", '
        '"title": " T ", "text": "body", "links": ["https://a.example/x#frag", 7]}'
    )
    assert note is not None
    assert (note.url, note.dom, note.facts.title, note.facts.text) == (
        "https://a.example/",
        "<html></html>",
        "T",
        "body",
    )
    assert note.facts.outlinks == ["https://a.example/x"]
    for bad in ("not json", "[]", '{"kind": "other"}', '{"kind": "leave", "url": 3, "dom": ""}'):
        assert parse_note(bad) is None


def test_a_sessions_report_says_what_failed_and_what_it_could_not_do() -> None:
    """``archiver browse`` ends with these lines and the job's log keeps them: a page saved
    without its screenshot says why, not only in a folder with no screenshot.png."""
    from archiver_app.capture.browse.session import BrowseReport, StopReason
    from archiver_app.capture.browse.visit import SavedPage, ViewsFrom
    from archiver_app.jobs.results import result_lines

    def page(n: int, error: str | None = None) -> SavedPage:
        return SavedPage(n, f"https://a.example/{n}", None, error is None, "high", 2,
                         ViewsFrom.SNAPSHOT, 1, error)  # fmt: skip

    report = BrowseReport(
        [page(1), page(2, "the WARC could not be written")],
        StopReason.STOPPED,
        "web",
        notes=("https://a.example/1: no screenshot as it was left (TimeoutError)",) * 2,
    )
    lines = [
        "saved 1 page into collection 'web' (stopped)",
        "failed: https://a.example/2: the WARC could not be written",
        "note: https://a.example/1: no screenshot as it was left (TimeoutError)",
    ]
    assert report.describe() == lines
    assert result_lines(report) == lines
    closed = BrowseReport([page(1)], StopReason.CLOSED, "web")
    assert closed.describe() == ["saved 1 page into collection 'web' (browser closed)"]
