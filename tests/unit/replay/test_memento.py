"""Memento (RFC 7089) negotiation, TimeMaps and headers, checked against the RFC's examples."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from archiver_app.errors import InputError
from archiver_app.replay.memento import (
    Memento,
    choose,
    http_date,
    link_header,
    memento_headers,
    parse_accept_datetime,
    timegate_headers,
    timemap,
)

ORIGINAL = "http://a.example.org/"
TG = "http://arxiv.example.net/timegate/http://a.example.org/"
TM = "http://arxiv.example.net/timemap/http://a.example.org/"


def _m(stamp: str) -> Memento:
    at = datetime.strptime(stamp, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    return Memento(at, f"http://arxiv.example.net/web/{stamp}/http://a.example.org/")


# The mementos of RFC 7089's examples (section 4.1.1 and 5).
FIRST, PREV, CURRENT, NEXT, LAST = (
    _m("20000620180259"),
    _m("20000621011731"),
    _m("20010911203610"),
    _m("20011124020802"),
    _m("20091027204954"),
)
ALL = [LAST, FIRST, CURRENT, NEXT, PREV]  # any order in, time order out


def test_dates_are_rfc_1123_in_gmt() -> None:
    assert http_date(FIRST.at) == "Tue, 20 Jun 2000 18:02:59 GMT"
    assert parse_accept_datetime("Tue, 11 Sep 2001 20:35:00 GMT") == datetime(
        2001, 9, 11, 20, 35, tzinfo=UTC
    )
    for bad in ("2001-09-11", "yesterday", ""):
        with pytest.raises(InputError, match="RFC 1123"):
            parse_accept_datetime(bad)


def test_timegate_picks_the_nearest_capture_else_the_latest() -> None:
    # The RFC's example asks for Tue, 11 Sep 2001 20:35:00 and gets 20:36:10 that day.
    wanted = parse_accept_datetime("Tue, 11 Sep 2001 20:35:00 GMT")
    assert choose(ALL, wanted) == CURRENT
    assert choose(ALL, None) == LAST
    assert choose(ALL, datetime(1990, 1, 1, tzinfo=UTC)) == FIRST
    chosen, headers = timegate_headers(ORIGINAL, TG, TM, ALL, "Tue, 11 Sep 2001 20:35:00 GMT")
    assert chosen == CURRENT
    as_dict = dict(headers)
    assert as_dict["Location"] == CURRENT.url
    assert as_dict["Vary"] == "accept-datetime"
    assert f'<{ORIGINAL}>; rel="original"' in as_dict["Link"]
    assert f'<{TM}>; rel="timemap"; type="application/link-format"' in as_dict["Link"]


def test_memento_headers_name_its_neighbours() -> None:
    headers = dict(memento_headers(ORIGINAL, TG, TM, ALL, CURRENT))
    assert headers["Memento-Datetime"] == "Tue, 11 Sep 2001 20:36:10 GMT"
    link = headers["Link"]
    assert f'<{FIRST.url}>; rel="first memento"; datetime="Tue, 20 Jun 2000 18:02:59 GMT"' in link
    assert f'<{LAST.url}>; rel="last memento"; datetime="Tue, 27 Oct 2009 20:49:54 GMT"' in link
    assert f'<{PREV.url}>; rel="prev memento"' in link
    assert f'<{NEXT.url}>; rel="next memento"' in link
    assert f'<{TG}>; rel="timegate"' in link
    assert 'from="Tue, 20 Jun 2000 18:02:59 GMT"; until="Tue, 27 Oct 2009 20:49:54 GMT"' in link


def test_first_and_last_combine_with_prev_and_next() -> None:
    link = link_header(ORIGINAL, TG, TM, [FIRST, CURRENT], CURRENT)
    assert f'<{FIRST.url}>; rel="first prev memento"' in link
    assert f'<{CURRENT.url}>; rel="last memento"' in link


def test_timemap_is_link_format_in_time_order() -> None:
    text = timemap(ORIGINAL, TG, TM, ALL)
    lines = text.strip().split(",\n")
    assert lines[0] == f'<{ORIGINAL}>; rel="original"'
    assert lines[1] == (
        f'<{TM}>; rel="self"; type="application/link-format"; '
        'from="Tue, 20 Jun 2000 18:02:59 GMT"; until="Tue, 27 Oct 2009 20:49:54 GMT"'
    )
    assert lines[2] == f'<{TG}>; rel="timegate"'
    mementos = lines[3:]
    assert [m.split(">")[0][1:] for m in mementos] == [
        FIRST.url, PREV.url, CURRENT.url, NEXT.url, LAST.url
    ]  # fmt: skip
    assert 'rel="first memento"' in mementos[0] and 'rel="last memento"' in mementos[-1]
    assert all('rel="memento"' in m for m in mementos[1:-1])
