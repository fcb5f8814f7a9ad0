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
        ('"sea level" rise', '"sea level" AND "rise"*'),
        ("river -dam", '("river") NOT "dam"'),
        ("river OR lake ", '("river" OR "lake")'),
        ('a"b NEAR( c', '"a""b" AND "NEAR(" AND "c"*'),
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
