"""Ranges between whole and partial captures: a full GET answered from stored 206 parts
that cover the resource, a Range request answered from a stored whole response, and
never a gap passed off as whole."""

from __future__ import annotations

import pytest

from archiver_app.library import Library
from archiver_app.replay import Replayer
from archiver_app.replay.parts import Part, parse_content_range, stitch
from tests.helpers.archive import ArchiveWriter, at

VIDEO = "https://media.example/clip.webm"
BODY = bytes(range(256)) * 1024  # 256 KiB: a few 64 KiB parts, as a media element asks
KIB64 = 64 * 1024


def _part(w: ArchiveWriter, first: int, last: int, *, hour: int = 0) -> None:
    w.response(
        VIDEO,
        BODY[first : last + 1],
        at=at(2024, 3, 1, hour),
        status=206,
        mime="video/webm",
        headers=[("Content-Range", f"bytes {first}-{last}/{len(BODY)}")],
    )


def test_a_full_get_is_answered_from_parts_that_cover_the_resource(library: Library) -> None:
    w = ArchiveWriter(library)
    # stored out of order, overlapping, the last one newest (nearest to "now")
    _part(w, KIB64, 3 * KIB64 - 1)
    _part(w, 0, KIB64 + 99)
    _part(w, 3 * KIB64 - 10, len(BODY) - 1, hour=1)
    w.commit()
    r = Replayer.for_library(library)
    whole = r.serve(VIDEO)
    assert whole.status == 200 and whole.body == BODY
    assert whole.header("Content-Length") == str(len(BODY))
    assert whole.header("Content-Range") is None and whole.content_type == "video/webm"
    span = r.serve(VIDEO, range_header="bytes=70000-70099")  # across two stored parts
    assert span.status == 206 and span.body == BODY[70000:70100]
    assert span.header("Content-Range") == f"bytes 70000-70099/{len(BODY)}"


def test_parts_with_a_gap_are_served_as_the_part_they_are(library: Library) -> None:
    w = ArchiveWriter(library)
    _part(w, 0, KIB64 - 1)
    _part(w, KIB64 + 1, len(BODY) - 1)  # one byte missing
    w.commit()
    got = Replayer.for_library(library).serve(VIDEO)
    assert got.status == 206 and len(got.body) < len(BODY)
    first, last, total = parse_content_range(got.header("Content-Range")) or (0, 0, 0)
    assert total == len(BODY) and got.body == BODY[first : last + 1]


def test_a_range_inside_a_lone_part_is_answered_from_it(library: Library) -> None:
    w = ArchiveWriter(library)
    _part(w, 0, KIB64 - 1)
    w.commit()
    r = Replayer.for_library(library)
    inside = r.serve(VIDEO, range_header="bytes=100-199")
    assert inside.status == 206 and inside.body == BODY[100:200]
    assert inside.header("Content-Range") == f"bytes 100-199/{len(BODY)}"
    assert inside.header("Content-Length") == "100"
    across = r.serve(VIDEO, range_header=f"bytes={KIB64 - 10}-")  # runs past the part
    assert across.body == BODY[KIB64 - 10 : KIB64]
    assert across.header("Content-Range") == f"bytes {KIB64 - 10}-{KIB64 - 1}/{len(BODY)}"
    beyond = r.serve(VIDEO, range_header=f"bytes={KIB64 * 2}-")  # no stored part holds it
    assert beyond.status == 416 and beyond.body == b""
    assert beyond.header("Content-Range") == f"bytes */{len(BODY)}"


def test_a_range_is_answered_from_the_part_holding_its_start(library: Library) -> None:
    """A server that refuses a whole GET: the capture holds the first parts the player
    asked for, never the whole. Every range was answered with the first part, which
    Chromium's player reads as the bytes it asked for (PIPELINE_ERROR_READ)."""
    w = ArchiveWriter(library)
    for first in range(0, 3 * KIB64, KIB64):  # the last quarter was never fetched
        _part(w, first, first + KIB64 - 1)
    w.commit()
    r = Replayer.for_library(library)
    assert r.serve(VIDEO).status == 206  # not whole, and not passed off as whole
    for start in (0, KIB64, KIB64 + 5, 3 * KIB64 - 1):
        got = r.serve(VIDEO, range_header=f"bytes={start}-")
        end = (start // KIB64 + 1) * KIB64 - 1  # to the end of the part holding it
        assert got.status == 206 and got.body == BODY[start : end + 1], start
        assert got.header("Content-Range") == f"bytes {start}-{end}/{len(BODY)}"
    closed = r.serve(VIDEO, range_header=f"bytes={2 * KIB64 + 10}-{2 * KIB64 + 19}")
    assert closed.body == BODY[2 * KIB64 + 10 : 2 * KIB64 + 20]
    for missing in (f"bytes={3 * KIB64}-", "bytes=-100", f"bytes={len(BODY)}-"):
        gone = r.serve(VIDEO, range_header=missing)
        assert gone.status == 416 and gone.body == b"", missing
        assert gone.header("Content-Range") == f"bytes */{len(BODY)}"


def test_a_whole_capture_answers_when_the_parts_do_not_cover(library: Library) -> None:
    w = ArchiveWriter(library)
    w.response(VIDEO, BODY, at=at(2023), mime="video/webm")  # an earlier, whole capture
    _part(w, 0, KIB64 - 1)  # the newest capture holds only the first part
    w.commit()
    r = Replayer.for_library(library)
    whole = r.serve(VIDEO)
    assert whole.status == 200 and whole.body == BODY
    late = r.serve(VIDEO, range_header=f"bytes={len(BODY) - 100}-")  # beyond the part
    assert late.status == 206 and late.body == BODY[-100:]
    assert late.header("Content-Range") == f"bytes {len(BODY) - 100}-{len(BODY) - 1}/{len(BODY)}"


def test_parts_of_another_capture_are_not_mixed_in(library: Library) -> None:
    first = ArchiveWriter(library, "imports/first.warc.gz")
    _part(first, 0, KIB64 - 1)
    first.commit()
    second = ArchiveWriter(library, "imports/second.warc.gz")
    _part(second, KIB64, len(BODY) - 1, hour=1)
    second.commit()
    got = Replayer.for_library(library).serve(VIDEO)
    assert got.status == 206 and got.body == BODY[KIB64:]


@pytest.mark.parametrize(
    ("parts", "whole"),
    [
        ([(0, 9), (10, 19)], True),
        ([(10, 19), (0, 12)], True),  # out of order, overlapping
        ([(0, 19)], True),
        ([(0, 8), (10, 19)], False),  # gap
        ([(1, 19)], False),  # does not start at 0
        ([(0, 9)], False),  # does not reach the end
    ],
)
def test_stitch(parts: list[tuple[int, int]], whole: bool) -> None:
    data = bytes(range(20))
    got = stitch(Part(a, b, 20, data[a : b + 1]) for a, b in parts)
    assert got == (data if whole else None)


def test_stitch_refuses_short_bodies_and_mixed_totals() -> None:
    data = bytes(range(20))
    assert stitch([Part(0, 9, 20, data[:9]), Part(10, 19, 20, data[10:])]) is None
    assert stitch([Part(0, 9, 20, data[:10]), Part(10, 19, 30, data[10:])]) is None
    assert parse_content_range("bytes 0-9/*") is None
    assert parse_content_range("bytes 9-0/20") is None
    assert parse_content_range("bytes 0-20/20") is None
    assert parse_content_range(" bytes 0-9/20") == (0, 9, 20)
