"""Figures as people read them: capture times stay distinct, a small change shows."""

from __future__ import annotations

from datetime import UTC, datetime

from archiver_app.units import capture_times, counted, share_text


def test_capture_times_show_seconds_only_where_a_minute_is_shared() -> None:
    times = [
        datetime(2026, 11, 25, 19, 47, 18, tzinfo=UTC),
        datetime(2026, 11, 25, 19, 47, 25, tzinfo=UTC),
        datetime(2026, 11, 25, 19, 48, 2, tzinfo=UTC),
    ]
    assert capture_times(times) == [
        "2026-11-25 19:47:18",
        "2026-11-25 19:47:25",
        "2026-11-25 19:48",
    ]
    assert capture_times(times[1:]) == ["2026-11-25 19:47", "2026-11-25 19:48"]
    assert capture_times([]) == []


def test_a_small_change_never_reads_as_none() -> None:
    assert share_text(0.0) == "0%"
    assert share_text(0.0002) == "<0.1%"  # 0.02% of a screenshot's pixels: not "0.0%"
    assert share_text(0.001) == "0.1%"
    assert share_text(0.5) == "50.0%"
    assert share_text(1.0) == "100.0%"


def test_upper_first_leaves_the_rest_as_it_is() -> None:
    from archiver_app.units import upper_first

    assert upper_first("mirroring to Blue drive") == "Mirroring to Blue drive"
    assert upper_first("") == ""


def test_counted_says_one_in_the_singular_and_groups_thousands() -> None:
    assert counted(1, "file") == "1 file"
    assert counted(0, "file") == "0 files"
    assert counted(1204, "copy", "copies") == "1,204 copies"
    assert counted(1, "copy", "copies") == "1 copy"
