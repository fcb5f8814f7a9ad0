"""What a page attempt that raised is said to have failed with: one short line.

A database error's text holds its SQL and its parameters (SQLAlchemy adds them on lines
of their own): quoted whole, a failed insert made a progress line of 4 KB. The line, the
attempt's row and the job's coverage get the exception's class and first line; the whole
text goes to the worker's log.
"""

from __future__ import annotations

#: The longest an attempt's error is said in one line (a long first line is cut, "…").
LIMIT = 300


def one_line(text: str | None, limit: int = LIMIT) -> str:
    """The first line of ``text``, at most ``limit`` characters."""
    lines = (text or "").strip().splitlines()
    first = lines[0].strip() if lines else ""
    first = first.split(" [SQL: ", 1)[0]  # a statement on the same line, if ever
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def attempt_error(exc: BaseException, limit: int = LIMIT) -> str:
    """``Class: first line of its message`` (the class alone when it says nothing)."""
    said = one_line(str(exc), limit)
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__
