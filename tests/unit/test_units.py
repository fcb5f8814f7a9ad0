"""Figures as people read them: the capture times of one list stay distinct."""

from __future__ import annotations

from datetime import UTC, datetime

from archiver_app.units import capture_times


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
