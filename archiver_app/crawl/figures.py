"""THE page figures of a crawl or capture: what every front end says of its pages.

A job's pages fall in four sets, each page in one:

* **captured**: done (a page answering 404 is captured, as the server's answer);
* **failed**: its attempts are over and none got it;
* **excluded**: left out by a rule or a limit (scope, depth, ignore, max pages, max bytes,
  max duration): skipped, and not because the job was aborted;
* **not attempted**: intended but never captured nor failed: waiting, in flight, or left
  waiting when the job was aborted (``aborted`` counts those).

**intended** is captured + failed + not attempted. The end line of ``archiver crawl``,
``archiver jobs`` (done/total: captured of intended), ``archiver job show``, the app's Jobs
panel and the coverage report all read :func:`page_figures`, so they say the same numbers
in the same words. The job's ``items_queued`` counter is not one of them: it counts the
pages ever accepted into the queue (what ``--max-pages`` limits), including those a byte
or time limit, or the abort, skipped later.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from archiver_app.store.models import Page, PageState

#: The start of a page's skip reason when the job was aborted before it was attempted.
ABORTED = "aborted:"


@dataclass(frozen=True)
class PageFigures:
    captured: int = 0
    failed: int = 0
    excluded: int = 0
    #: waiting, in flight, or left waiting by an abort (``aborted`` of them)
    not_attempted: int = 0
    aborted: int = 0

    @property
    def intended(self) -> int:
        return self.captured + self.failed + self.not_attempted

    def summary(self) -> str:
        """``8 captured, 0 failed, 3 excluded, 9 not attempted (aborted)``: excluded and
        not attempted only when there are some."""
        parts = [f"{self.captured} captured", f"{self.failed} failed"]
        if self.excluded:
            parts.append(f"{self.excluded} excluded")
        if self.not_attempted:
            waiting = self.not_attempted - self.aborted
            why = "aborted" if not waiting else f"{self.aborted} aborted" if self.aborted else ""
            parts.append(f"{self.not_attempted} not attempted" + (f" ({why})" if why else ""))
        return ", ".join(parts)

    def to_json(self) -> dict[str, int]:
        return {**asdict(self), "intended": self.intended}


def page_figures(s: Session, job_ids: Collection[int]) -> dict[int, PageFigures]:
    """The :class:`PageFigures` of each of ``job_ids`` (a job without pages: all zero)."""
    ids = list(dict.fromkeys(job_ids))
    counts: dict[int, dict[str, Any]] = {i: {} for i in ids}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for job_id, state, n in s.execute(
            select(Page.job_id, Page.state, func.count())
            .where(Page.job_id.in_(chunk))
            .group_by(Page.job_id, Page.state)
        ):
            counts[int(job_id)][str(state)] = int(n)
        for job_id, n in s.execute(  # only the skipped pages are read for their reason
            select(Page.job_id, func.count())
            .where(
                Page.job_id.in_(chunk),
                Page.state == PageState.SKIPPED,
                Page.skip_reason.startswith(ABORTED, autoescape=True),
            )
            .group_by(Page.job_id)
        ):
            counts[int(job_id)]["aborted"] = int(n)
    return {job_id: _figures(c) for job_id, c in counts.items()}


def _figures(c: dict[str, int]) -> PageFigures:
    aborted = c.get("aborted", 0)
    waiting = c.get(PageState.READY.value, 0) + c.get(PageState.CLAIMED.value, 0)
    return PageFigures(
        captured=c.get(PageState.DONE.value, 0),
        failed=c.get(PageState.FAILED.value, 0),
        excluded=c.get(PageState.SKIPPED.value, 0) - aborted,
        not_attempted=waiting + aborted,
        aborted=aborted,
    )


def job_page_figures(s: Session, job_id: int) -> PageFigures:
    return page_figures(s, [job_id])[job_id]
