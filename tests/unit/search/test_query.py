"""Turning typed text into safe FTS5 queries."""

from __future__ import annotations

import pytest

from archiver_app.errors import InputError
from archiver_app.search import Query, build_fts_query


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
        ("river -dam", '("river") NOT "dam"'),
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
