"""What a finished job's result says about it, for its row and log: how many parts failed,
what it left undone, how much of its planned work it did, and its own lines.

A result (or each item of a list of results) is read by duck typing, so that the runtime
needs no import of the kinds' modules: ``failures`` (int), ``unmet`` (text or None),
``units_done`` and ``units_planned`` (ints), ``describe()`` or ``lines()``.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)


#: Lines of a result's description written to the job's log (an import of many files).
MAX_RESULT_LINES = 50


def result_failures(result: Any) -> int:
    """How many parts of a finished job failed (an import's inputs, a mirror's copies), as
    its result counts them in ``failures``: the job's error count in ``archiver jobs`` and
    the Jobs panel, where a completed job read as clean."""
    items = result if isinstance(result, list) else [result]
    return sum(n for item in items if isinstance(n := getattr(item, "failures", 0), int))


def result_figures(result: Any) -> tuple[int, int] | None:
    """(done, planned) of a finished job, summed over its result's parts that count them
    (``units_done`` of ``units_planned``: a mirror's copies, each drive's verify): the
    job's final progress, so a run that stopped short reads 28 of 41, and a verify of every
    drive counts them all, not the last drive's alone. None when no part counts."""
    items = result if isinstance(result, list) else [result]
    pairs = [
        (done, planned)
        for item in items
        if isinstance(planned := getattr(item, "units_planned", None), int)
        and isinstance(done := getattr(item, "units_done", None), int)
    ]
    if not pairs:
        return None
    return sum(d for d, _ in pairs), sum(p for _, p in pairs)


def result_unmet(result: Any) -> list[str]:
    """What a finished job left undone that its command reports as a failure (exit 1),
    as its result says it in ``unmet`` (a mirror: "the retention policy is not met"): the
    job ends completed, and its last log line says so where it would read as clean."""
    items = result if isinstance(result, list) else [result]
    said = (getattr(item, "unmet", None) for item in items)
    return list(dict.fromkeys(text for text in said if isinstance(text, str) and text))


def result_lines(result: Any) -> list[str]:
    """What a finished job did, as the lines its result describes itself with (a mirror's
    copies per drive, a verify's verdicts per drive, an import's files), for the job's log:
    the Jobs panel and ``archiver job N`` show them where the CLI printed them. Called
    after the work is done: a description that fails costs its lines, never the job."""
    items = result if isinstance(result, list) else [result]
    lines: list[str] = []
    for item in items:
        said = getattr(item, "describe", None) or getattr(item, "lines", None)
        if not callable(said):
            continue
        try:
            text = said()
            lines += [str(t).strip() for t in ([text] if isinstance(text, str) else text)]
        except Exception:
            log.warning("could not describe a %s result", type(item).__name__, exc_info=True)
    return [line for line in lines if line][:MAX_RESULT_LINES]
