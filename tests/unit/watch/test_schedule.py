"""Schedules: named and cron-like, next slots, catching up once, errors with a position."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from archiver_app.errors import InputError
from archiver_app.watch.schedule import is_due, parse_schedule


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_named_schedules() -> None:
    assert parse_schedule("hourly").next_after(at("2026-03-01 10:15")) == at("2026-03-01 11:00")
    assert parse_schedule("Daily").next_after(at("2026-03-01 10:15")) == at("2026-03-02 03:00")
    # 2026-03-01 is a Sunday: weekly runs on Monday at 03:00.
    assert parse_schedule("weekly").next_after(at("2026-03-01 10:15")) == at("2026-03-02 03:00")
    assert parse_schedule("weekly").next_after(at("2026-03-02 03:00")) == at("2026-03-09 03:00")


def test_cron_fields() -> None:
    every_15 = parse_schedule("*/15 * * * *")
    assert every_15.next_after(at("2026-03-01 10:15")) == at("2026-03-01 10:30")
    workdays = parse_schedule("30 8-17/3 * * 1-5")
    assert workdays.next_after(at("2026-03-06 17:00")) == at("2026-03-06 17:30")
    assert workdays.next_after(at("2026-03-06 17:30")) == at("2026-03-09 08:30")  # Fri -> Mon
    assert workdays.next_after(at("2026-03-09 08:30")) == at("2026-03-09 11:30")
    sunday = parse_schedule("0 12 * * 7")
    assert sunday.next_after(at("2026-03-01 13:00")) == at("2026-03-08 12:00")
    leap = parse_schedule("0 0 29 2 *")
    assert leap.next_after(at("2026-03-01 00:00")) == at("2028-02-29 00:00")
    # Both day fields restricted: either matches (the 1st, or any Monday).
    either = parse_schedule("0 6 1 * 1")
    assert either.next_after(at("2026-03-01 07:00")) == at("2026-03-02 06:00")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0 3 * *", "five fields"),
        ("61 * * * *", "minute '61' is outside 0-59 at position 0"),
        ("0 25 * * *", "hour '25' is outside 0-23 at position 2"),
        ("0 3 * * mon", "day of week 'mon' is not a number, a range or \\* at position 8"),
        ("*/0 * * * *", "minute step '0' is not a positive number at position 2"),
        ("*/61 * * * *", "minute step 61 is larger than its range 0-59 at position 2"),
        ("0 0/24 * * *", "hour step 24 is larger than its range 0-23 at position 4"),
        ("0 5-2 * * *", "hour range '5-2' runs backwards at position 2"),
        ("0 3 1,x * *", "day of month 'x' is not a number, a range or \\* at position 6"),
    ],
)
def test_bad_expressions_name_the_position(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_schedule(text)


def test_a_schedule_that_never_comes_round_is_refused() -> None:
    with pytest.raises(InputError, match="never comes round"):
        parse_schedule("0 0 30 2 *").next_after(at("2026-01-01 00:00"))


def test_due_not_due_and_caught_up_once_after_a_pause() -> None:
    hourly = parse_schedule("hourly")
    last = at("2026-03-01 10:00")
    assert is_due(hourly, None, last)  # never run
    assert not is_due(hourly, last, at("2026-03-01 10:59"))
    assert is_due(hourly, last, at("2026-03-01 11:00"))
    # The laptop slept for five hours: due now, once; after that run, not due again until
    # the next slot.
    woke = at("2026-03-01 15:42")
    assert is_due(hourly, last, woke)
    assert not is_due(hourly, woke, woke + timedelta(minutes=5))
    assert is_due(hourly, woke, at("2026-03-01 16:00"))
    # A run at 15:57 is too close to 16:00 (under a tenth of the hour): next at 17:00.
    late = at("2026-03-01 15:57")
    assert not is_due(hourly, late, at("2026-03-01 16:00"))
    assert is_due(hourly, late, at("2026-03-01 17:00"))


def test_a_run_just_before_a_slot_does_not_run_again_at_the_slot() -> None:
    hourly, daily = parse_schedule("hourly"), parse_schedule("daily")
    assert hourly.next_run(at("2026-03-01 13:59")) == at("2026-03-01 15:00")
    assert hourly.next_run(at("2026-03-01 13:54")) == at("2026-03-01 14:00")  # a tenth: kept
    assert hourly.next_run(at("2026-03-01 13:10")) == at("2026-03-01 14:00")
    assert daily.next_run(at("2026-03-01 02:50")) == at("2026-03-02 03:00")
    assert daily.next_run(at("2026-03-01 03:00")) == at("2026-03-02 03:00")
    assert daily.next_run(at("2026-03-01 22:00")) == at("2026-03-02 03:00")
    assert daily.next_run(at("2026-03-01 15:07")) == at("2026-03-02 03:00")
    twice = parse_schedule("0 9,17 * * *")  # uneven slots: the gap the run falls in
    assert twice.next_run(at("2026-03-01 08:59")) == at("2026-03-01 17:00")
    assert twice.next_run(at("2026-03-01 16:30")) == at("2026-03-02 09:00")
    assert twice.next_run(at("2026-03-01 16:00")) == at("2026-03-01 17:00")


def test_schedules_in_words() -> None:
    from archiver_app.watch.schedule import describe_schedule

    assert describe_schedule("hourly") == "every hour"
    assert describe_schedule("Daily") == "every day at 03:00 UTC"
    assert describe_schedule("weekly") == "every Monday at 03:00 UTC"
    assert describe_schedule("*/15 * * * *") == "cron */15 * * * * (UTC)"
