"""Turning typed text into safe FTS5 queries."""

from __future__ import annotations

import pytest

from archiver_app.errors import InputError
from archiver_app.search import Query, build_fts_query
from archiver_app.search.query import MAX_TERMS, TextQuery, parse_text


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("", None),
        ("   ", None),
        ("climate", '"climate"*'),
        ("climate ", '"climate"'),
        ("climate riv", '"climate" AND "riv"*'),
        ("climate ri", '"climate" AND "ri"'),
        ('"sea level" rise', '"sea level" AND "rise"*'),
        # a phrase whose quote is still open: its last word is still typed
        ('"sea lev', '"sea lev"*'),
        ('storm "sea lev', '"storm" AND "sea lev"*'),
        ('"sea l', '"sea l"'),
        ('"sea lev ', '"sea lev "'),
        ("river -dam", '"river" NOT "dam"'),
        ("river OR lake ", '("river" OR "lake")'),
        ('a"b NEAR( c', '"a""b" AND "NEAR(" AND "c"'),
        ("-only", None),
        ("*** ---", None),
    ],
)
def test_build_fts_query(typed: str, expected: str | None) -> None:
    assert build_fts_query(typed) == expected


def test_status_filter_forms() -> None:
    assert Query(status=404).status_range() == (404, 404)
    assert Query(status="4xx").status_range() == (400, 499)
    assert Query(status="200").status_range() == (200, 200)
    assert Query().status_range() is None
    with pytest.raises(InputError, match="invalid status"):
        Query(status="teapot").status_range()


@pytest.mark.parametrize(
    "status",
    ["\u00b2", "\u0664\u0660\u0664", "99999999999999999999", "0", "99", "600", 600, True, "6xx"],
)
def test_status_filter_refuses_what_is_no_http_status(status: object) -> None:
    with pytest.raises(InputError, match=r"invalid status filter .*100 to 599"):
        Query(status=status).status_range()  # type: ignore[arg-type]


def test_build_fts_query_drops_control_characters() -> None:
    assert build_fts_query("x\x00yz") == '"x" AND "yz"'
    assert build_fts_query("riv\x00") == '"riv"'
    assert build_fts_query('"sea\x00level" \x1b') == '"sea level"'
    assert build_fts_query("\x00\x07") is None


@pytest.mark.parametrize(
    ("typed", "parsed"),
    [
        ("-dam", TextQuery(excluded='"dam"')),
        ("-dam -weir", TextQuery(excluded='"dam" OR "weir"')),
        ('-"sea level" -dam', TextQuery(excluded='"sea level" OR "dam"')),
        ("OR", TextQuery(ignored=True)),
        ("(", TextQuery(ignored=True)),
        ("-", TextQuery(ignored=True)),
        ('"', TextQuery(ignored=True)),
        ("*** ---", TextQuery(ignored=True)),
        ("", TextQuery()),
        ("  ", TextQuery()),
    ],
)
def test_text_without_a_required_word(typed: str, parsed: TextQuery) -> None:
    """Excluded words alone are kept (the captures without them); text with no word at
    all is marked ignored, not read as an empty search."""
    assert parse_text(typed) == parsed


def test_expressions_stay_flat_however_many_words() -> None:
    """FTS5's parser overflowed its stack at about a hundred nested parentheses."""
    words = [f"w{i}" for i in range(MAX_TERMS - 1)]
    ored = build_fts_query(" OR ".join(words), prefix_last=False)
    assert ored == "(" + " OR ".join(f'"{w}"' for w in words) + ")"
    excluded = build_fts_query("zephyr " + " ".join(f"-{w}" for w in words))
    assert excluded == '"zephyr" ' + " ".join(f'NOT "{w}"' for w in words)
    assert build_fts_query("a OR b c OR d -e ") == '("a" OR "b") AND ("c" OR "d") NOT "e"'
    assert parse_text(" ".join(f"-{w}" for w in words)).excluded == " OR ".join(
        f'"{w}"' for w in words
    )


def test_more_words_than_the_limit_are_refused() -> None:
    build_fts_query(" ".join(f"w{i}" for i in range(MAX_TERMS)))
    for typed in (
        " OR ".join(f"w{i}" for i in range(MAX_TERMS + 1)),
        "x " + " ".join(f"-w{i}" for i in range(MAX_TERMS)),
        '"' + " ".join(f"w{i}" for i in range(MAX_TERMS + 1)) + '"',  # a phrase's words count
    ):
        with pytest.raises(InputError, match=f"too many words in the search: at most {MAX_TERMS}"):
            build_fts_query(typed)
