"""When a watched page is due: hourly, daily, weekly, or a cron-like expression.

A schedule is parsed once (:func:`parse_schedule`); a bad expression is refused with the
position of the error. :meth:`Schedule.next_after` gives the first slot strictly after a
moment, in UTC; :meth:`Schedule.next_run` the slot to run at after a run, never sooner
than a tenth of a period after it. Catching up is the caller's rule, kept here as :func:`is_due`:
an item is due when that slot has passed, so a laptop that slept through five slots runs
the item once on waking, not five times.

Cron fields are ``minute hour day-of-month month day-of-week`` with ``*``, numbers, ranges
``a-b``, lists ``a,b`` and steps ``*/n`` or ``a-b/n``; day-of-week 0 and 7 are Sunday. As
in cron, when both day fields are restricted a day matching either one counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from archiver_app.errors import InputError

NAMED = {
    "hourly": "0 * * * *",
    "daily": "0 3 * * *",
    "weekly": "0 3 * * 1",
}

_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12),
           ("day of week", 0, 7))  # fmt: skip

#: How far ahead a slot is looked for (an expression such as "0 0 30 2 *" never matches).
_HORIZON_DAYS = 366 * 5


#: ``jobs.config`` key of a paused schedule: it keeps its schedule, no slot comes round
#: (``next_run_at`` is None) until it is resumed.
SCHEDULE_PAUSED = "schedule_paused"
#: ``jobs.config`` key of a watch made due by hand (Capture Now, ``watch run JOB``): its
#: next run is logged as asked for, not as scheduled, and the key goes with that run.
ASKED_NOW = "capture_now"


@dataclass(frozen=True)
class Schedule:
    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    days_restricted: bool
    weekdays_restricted: bool

    def _day_matches(self, day: datetime) -> bool:
        if day.month not in self.months:
            return False
        dom = day.day in self.days
        dow = (day.isoweekday() % 7) in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return dom or dow
        return dom and dow

    def _slots(self, day: datetime, *, backwards: bool = False) -> list[datetime]:
        if not self._day_matches(day):
            return []
        return sorted(
            (day.replace(hour=h, minute=m) for h in self.hours for m in self.minutes),
            reverse=backwards,
        )

    def next_after(self, moment: datetime) -> datetime:
        """The first slot strictly after ``moment`` (aware; answered in UTC)."""
        if moment.tzinfo is None:
            raise ValueError("next_after needs an aware datetime")
        start = moment.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
        day = start.replace(hour=0, minute=0)
        for _ in range(_HORIZON_DAYS):
            for slot in self._slots(day):
                if slot >= start:
                    return slot
            day += timedelta(days=1)
        raise InputError(f"schedule {self.text!r} never comes round")

    def _last_until(self, moment: datetime) -> datetime | None:
        """The last slot at or before ``moment`` (within the horizon), or None."""
        end = moment.astimezone(UTC)
        day = end.replace(hour=0, minute=0, second=0, microsecond=0)
        for _ in range(_HORIZON_DAYS):
            for slot in self._slots(day, backwards=True):
                if slot <= end:
                    return slot
            day -= timedelta(days=1)
        return None

    def next_run(self, moment: datetime) -> datetime:
        """When to run next after a run at ``moment``: the first slot after it, unless that
        comes sooner than a tenth of the gap between the slots around ``moment``, then the
        slot after it. An hourly page captured at 13:59 is captured again at 15:00, not a
        minute later; one captured at 13:50, at 14:00; a daily one (03:00) captured at
        02:50, the next day; at 22:00, at 03:00."""
        first = self.next_after(moment)
        before = self._last_until(moment)
        if before is None or first - moment >= (first - before) / 10:
            return first
        return self.next_after(first)


#: How :func:`describe_schedule` words the named schedules.
_WORDS = {
    "hourly": "every hour",
    "daily": "every day at 03:00 UTC",
    "weekly": "every Monday at 03:00 UTC",
}


def describe_schedule(text: str) -> str:
    """A schedule as a person reads it: the named ones in words, cron fields as they are."""
    source = text.strip()
    return _WORDS.get(source.lower()) or f"cron {source} (UTC)"


def parse_schedule(text: str) -> Schedule:
    """``hourly``, ``daily``, ``weekly`` or five cron fields; errors name the position."""
    source = text.strip()
    expression = NAMED.get(source.lower(), source)
    fields = expression.split()
    if len(fields) != 5:
        raise InputError(
            f"schedule {text!r}: expected hourly, daily, weekly or five fields "
            f"(minute hour day month weekday), got {len(fields)}"
        )
    offset = 0
    parsed: list[frozenset[int]] = []
    for field, (name, low, high) in zip(fields, _FIELDS, strict=True):
        position = expression.index(field, offset)
        parsed.append(_parse_field(field, name, low, high, text=text, position=position))
        offset = position + len(field)
    minutes, hours, days, months, weekdays = parsed
    return Schedule(
        text=source,
        minutes=minutes,
        hours=hours,
        days=days,
        months=months,
        weekdays=frozenset(7 % 7 if d == 7 else d for d in weekdays),
        days_restricted=fields[2] != "*",
        weekdays_restricted=fields[4] != "*",
    )


def _parse_field(
    field: str, name: str, low: int, high: int, *, text: str, position: int
) -> frozenset[int]:
    values: set[int] = set()
    at = position
    for part in field.split(","):
        values |= _parse_part(part, name, low, high, text=text, position=at)
        at += len(part) + 1
    return frozenset(values)


def _parse_part(part: str, name: str, low: int, high: int, *, text: str, position: int) -> set[int]:
    def fail(why: str, where: int = position) -> InputError:
        # Positions count from 0 under a caret, as for invalid patterns (crawl.rules).
        return InputError(
            f"schedule {text!r}: {name} {why} at position {where}",
            details=f"{text}\n{' ' * where}^",
        )

    base, _, step_text = part.partition("/")
    step = 1
    if step_text:
        if not step_text.isdigit() or int(step_text) == 0:
            raise fail(f"step {step_text!r} is not a positive number", position + len(base) + 1)
        step = int(step_text)
        if step > high - low:  # */61 for minutes: only the first value, as if no step
            raise fail(
                f"step {step} is larger than its range {low}-{high}", position + len(base) + 1
            )
    if base == "*":
        first, last = low, high
    elif "-" in base:
        a, _, b = base.partition("-")
        if not (a.isdigit() and b.isdigit()):
            raise fail(f"range {base!r} is not two numbers")
        first, last = int(a), int(b)
        if first > last:
            raise fail(f"range {base!r} runs backwards")
    elif base.isdigit():
        first = last = int(base)
        if step_text:
            last = high
    else:
        raise fail(f"{base!r} is not a number, a range or *")
    if first < low or last > high:
        raise fail(f"{base!r} is outside {low}-{high}")
    return set(range(first, last + 1, step))


def is_due(schedule: Schedule, last_run: datetime | None, now: datetime) -> bool:
    """Whether an item last run at ``last_run`` is due at ``now`` (never run: due)."""
    if last_run is None:
        return True
    return schedule.next_run(last_run) <= now
