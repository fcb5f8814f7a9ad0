"""What a finished job's result says about it, for its row and log: how many parts failed,
what it left undone, how much of its planned work it did, and its own lines; and for a
crawl or capture, how many of its pages failed (:func:`failed_pages`).

A result (or each item of a list of results) is read by duck typing, so that the runtime
needs no import of the kinds' modules: ``failures`` (int), ``unmet`` (text or None),
``units_done`` and ``units_planned`` (ints), ``describe()`` or ``lines()``.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from archiver_app.store.models import CRAWL_KIND_NAMES, Page, PageState

log = logging.getLogger(__name__)


#: Lines of a result's description written to the job's log (an import of many files).
MAX_RESULT_LINES = 50


def result_failures(result: Any) -> int:
    """How many parts of a finished job failed (an import's inputs, a mirror's copies), as
    its result counts them in ``failures``: the job's error count in ``archiver jobs`` and
    the Jobs panel, where a completed job read as clean."""
    items = result if isinstance(result, list) else [result]
    return sum(n for item in items if isinstance(n := getattr(item, "failures", 0), int))


def page_failed(state: str) -> bool:
    """Whether a crawl's or capture's page failed: its attempts are over and none got it
    (an error at each one; a 5xx answer at the last, its error page kept, included). A page
    is one failure however many attempts it took: a retried attempt is an attempt."""
    return state == PageState.FAILED


def failed_pages(s: Session, job_ids: Collection[int]) -> dict[int, int]:
    """How many pages failed (:func:`page_failed`) in each of the crawls and captures
    ``job_ids``: THE failure count of such a job, that ``archiver jobs`` (errors),
    ``archiver job show``, the Jobs panel (Failed) and ``archiver watch run`` all say.
    A job without a failed page is left out."""
    ids = list(dict.fromkeys(job_ids))
    counts: dict[int, int] = {}
    for start in range(0, len(ids), 500):
        rows = s.execute(
            select(Page.job_id, func.count())
            .where(Page.job_id.in_(ids[start : start + 500]), Page.state == PageState.FAILED)
            .group_by(Page.job_id)
        )
        counts.update({int(job_id): int(n) for job_id, n in rows})
    return counts


def job_failures(kind: str, error_count: int, failed: dict[int, int], job_id: int) -> int:
    """A job's failure count: its failed pages for a crawl or capture (``failed``, from
    :func:`failed_pages`; its ``error_count`` counts each failed attempt), the parts its
    result counted failed (``error_count``: :func:`result_failures`) for any other kind."""
    return failed.get(job_id, 0) if kind in CRAWL_KIND_NAMES else error_count


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
