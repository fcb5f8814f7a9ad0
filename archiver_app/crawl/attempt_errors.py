"""What a page attempt that raised is said to have failed with: one short line.

A database error's text holds its SQL and its parameters (SQLAlchemy adds them on lines
of their own): quoted whole, a failed insert made a progress line of 4 KB. The line, the
attempt's row and the job's coverage get the exception's class and first line; the whole
text goes to the worker's log. An attempt that failed without a word (a fetcher's result
with no error) is said by :func:`failure_reason`, never with an empty reason.
"""

from __future__ import annotations

#: The longest an attempt's error is said in one line (a long first line is cut, "…").
LIMIT = 300

#: Why a failed attempt whose result says nothing, and answered no error status, failed.
NO_REASON = "no error was reported"


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


def failure_reason(error: str | None, http_status: int | None) -> str:
    """Why an attempt failed, never empty: its ``error``; else the error status the page
    answered (``HTTP 503``); else :data:`NO_REASON`, with the status it answered if any."""
    if error and error.strip():
        return error
    if http_status is not None and http_status >= 400:
        return f"HTTP {http_status}"
    answered = f" (the page answered HTTP {http_status})" if http_status is not None else ""
    return NO_REASON + answered
