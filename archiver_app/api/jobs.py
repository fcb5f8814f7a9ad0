"""Jobs for front ends (``lib.jobs``): start, watch and control every kind of long work.

Every long operation is a job of :mod:`archiver_app.jobs`: the desktop app enqueues it
(the Jobs panel and ``archiver jobs`` see it at once) and runs it in a lower-priority child
process (:meth:`JobsManager.run`); the command line runs the same kinds in the foreground.
Crawls and captures are jobs too, with their own queue of pages (:meth:`capture`,
:meth:`crawl`). Rows and log lines for the panel come from :mod:`.jobs_view`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from archiver_app.api.jobs_view import (
    RUN_AGAIN_KINDS,
    UNDER_WAY,
    JobRow,
    JobRules,
    JobStatus,
    active_kinds,
    job_log_after,
    job_row,
    job_rows,
    job_rules,
)
from archiver_app.crawl.spec import DEFAULT_DEPTH, DEFAULT_MAX_PAGES, DEFAULT_SCOPE
from archiver_app.jobs import CancelOutcome, JobKind
from archiver_app.jobs.background import ResumeReport
from archiver_app.library import DEFAULT_COLLECTION, Library
from archiver_app.tasks import CancelToken, Progress, null_progress

if TYPE_CHECKING:  # the crawl engine loads when a crawl runs, not with the window
    from archiver_app.crawl.inline import InlineRun
    from archiver_app.watch.runner import DueNow, StoppedWatch, WatchRow

__all__ = [
    "DEFAULT_DEPTH",
    "DEFAULT_MAX_PAGES",
    "DEFAULT_SCOPE",
    "UNDER_WAY",
    "CancelOutcome",
    "CrawlOptions",
    "InlineRun",
    "JobKind",
    "JobLogLine",
    "JobRow",
    "JobRules",
    "JobStatus",
    "JobsManager",
    "ResumeReport",
]

#: One line of a job's log: (id, at, level, message).
JobLogLine = tuple[int, datetime, str, str]


@dataclass(frozen=True)
class CrawlOptions:
    """A crawl's scope and limits, as the capture dialog asks for them."""

    scope: str
    ignore_patterns: tuple[str, ...] = ()
    concurrency: int = 4
    user_agent: str | None = None
    max_depth: int | None = None
    max_pages: int | None = None
    login_check: bool = True  # False: a page that looks like a login form is kept


class JobsManager:
    """``lib.jobs``: one call per thing a person does with jobs.

    :meth:`run` and :meth:`start` block until the job ends (the GUI calls them on a worker
    thread); every other call is one short transaction.
    """

    def __init__(self, library: Library) -> None:
        self._lib = library

    # ------------------------------------------------------------------ reading

    def rows(self, limit: int = 500, *, recover: bool = True) -> list[JobRow]:
        """The newest jobs. A job whose process died is found first (queued to resume,
        reported or superseded; one read when there is none), so none shows running for
        the minute its lease takes to run out, or forever when nothing else looks
        (``recover`` False: not yet; the app's start-up look does it and says what it
        found)."""
        from archiver_app.errors import LibraryBusyError
        from archiver_app.jobs import default_registry, recover_interrupted

        if recover:
            with contextlib.suppress(LibraryBusyError):  # another writer: the next look will
                recover_interrupted(self._lib, default_registry())
        return job_rows(self._lib, limit)

    def active(self, kind: JobKind) -> bool:
        """Whether a ``kind`` job is queued or running now, in any process."""
        return kind.value in active_kinds(self._lib)

    def log_after(self, job_id: int, after_id: int) -> list[JobLogLine]:
        """Log lines of ``job_id`` newer than ``after_id`` (the tail a panel appends)."""
        return job_log_after(self._lib, job_id, after_id)

    # ------------------------------------------------------------------ starting

    def enqueue(
        self,
        kind: JobKind,
        config: Mapping[str, Any],
        *,
        name: str,
        collection: str | None = None,
    ) -> int:
        from archiver_app.jobs import enqueue

        return enqueue(self._lib, kind, config, name=name, collection=collection)

    def run(
        self,
        job_id: int,
        *,
        progress: Progress = null_progress,
        cancel: CancelToken | None = None,
    ) -> Any:
        """Run the queued job ``job_id`` in a child process; its result (raises
        ``Cancelled`` when it was cancelled, what it raised when it failed)."""
        from archiver_app.jobs.background import run_in_child

        return run_in_child(self._lib, job_id, progress=progress, cancel=cancel)

    @staticmethod
    def describe(result: Any) -> list[str]:
        """What a finished job did, in the lines its log ends with (a verify's verdicts
        per drive, a mirror's copies ...): :func:`archiver_app.jobs.results.result_lines`."""
        from archiver_app.jobs.results import result_lines

        return result_lines(result)

    def start(
        self,
        kind: JobKind,
        config: Mapping[str, Any],
        *,
        name: str,
        collection: str | None = None,
        progress: Progress = null_progress,
        cancel: CancelToken | None = None,
    ) -> Any:
        """:meth:`enqueue` then :meth:`run`."""
        job_id = self.enqueue(kind, config, name=name, collection=collection)
        return self.run(job_id, progress=progress, cancel=cancel)

    def capture(
        self,
        urls: Sequence[str],
        *,
        collection: str = DEFAULT_COLLECTION,
        tags: Sequence[str] = (),
        profile: str | None = None,
        login_check: bool = True,
    ) -> int:
        """Queue a capture of ``urls`` (one attempt each, as ``archiver capture``), in the
        browser profile ``profile`` when given; ``login_check`` False keeps a page that
        looks like a login form (``--no-login-check``)."""
        from archiver_app.crawl.inline import create_capture_job

        return create_capture_job(
            self._lib,
            list(urls),
            collection=collection,
            tags=list(tags),
            profile=profile,
            login_check=login_check,
        )

    def crawl(
        self,
        seeds: Sequence[str],
        options: CrawlOptions,
        *,
        collection: str = DEFAULT_COLLECTION,
        tags: Sequence[str] = (),
        name: str | None = None,
        profile: str | None = None,
    ) -> int:
        """Queue a crawl from ``seeds`` (as ``archiver crawl``)."""
        from archiver_app.crawl.inline import create_crawl_job

        return create_crawl_job(
            self._lib,
            list(seeds),
            scope=options.scope,
            ignore_patterns=list(options.ignore_patterns),
            concurrency=options.concurrency,
            user_agent=options.user_agent,
            max_depth=options.max_depth,
            max_pages=options.max_pages,
            login_check=options.login_check,
            collection=collection,
            tags=list(tags),
            name=name,
            profile=profile,
        )

    def browse(
        self,
        *,
        start_url: str | None = None,
        collection: str = DEFAULT_COLLECTION,
        profile: str | None = None,
        progress: Progress = null_progress,
        cancel: CancelToken | None = None,
    ) -> Any:
        """Capture while browsing (``archiver browse``) as one job in a child process,
        until the user stops it or closes the browser; its report."""
        from archiver_app.jobs.operations import browse_config

        config = browse_config(start_url=start_url, collection=collection, profile=profile)
        name = f"Browsing{f' from {start_url}' if start_url else ''}"
        return self.start(
            JobKind.BROWSE,
            config,
            name=name,
            collection=collection,
            progress=progress,
            cancel=cancel,
        )

    def resume_interrupted(
        self,
        *,
        progress: Progress = null_progress,
        cancel: CancelToken | None = None,
        queued_before: datetime | None = None,
    ) -> ResumeReport:
        """At start-up: report the jobs whose process died and cannot resume; run again
        (in a child process) those that can, queued before ``queued_before`` if given."""
        from archiver_app.jobs.background import resume_interrupted

        return resume_interrupted(
            self._lib, progress=progress, cancel=cancel, queued_before=queued_before
        )

    # ------------------------------------------------------------------ watching

    def watch(
        self,
        urls: Sequence[str],
        *,
        schedule: str,
        ignore: Sequence[str] = (),
        collection: str = DEFAULT_COLLECTION,
        tags: Sequence[str] = (),
        profile: str | None = None,
    ) -> int:
        """Watch ``urls`` (as ``archiver watch add``): a capture job with ``schedule``, its
        first capture queued now; ``ignore``: text patterns a comparison leaves out."""
        from archiver_app.watch.runner import add_watch

        return add_watch(
            self._lib,
            urls,
            schedule=schedule,
            ignore=ignore,
            collection=collection,
            tags=tags,
            profile=profile,
        )

    def watches(self) -> list[WatchRow]:
        """Every watched job with its schedule and next capture."""
        from archiver_app.watch.runner import list_watches

        return list_watches(self._lib)

    def watch_of(self, job_id: int) -> WatchRow | None:
        """The watch ``job_id`` is, or is a run of (its schedule, ignored text, profile)."""
        from archiver_app.watch.runner import watch_of

        return watch_of(self._lib, job_id)

    def watch_now(self, job_ids: Sequence[int]) -> DueNow:
        """Make these watches due now (not those being captured already); the next run of
        due watches captures them. Says which were made due, which are being captured
        already and which are no watch (stopped meanwhile)."""
        from archiver_app.watch.runner import due_now

        return due_now(self._lib, job_ids)

    def set_schedule(
        self, job_id: int, schedule: str | None, *, ignore: Sequence[str] | None = None
    ) -> None:
        """Watch the crawl or capture ``job_id`` on ``schedule`` (``ignore``: as in
        :meth:`watch`; its addresses watched by another watch are refused); None stops
        watching it, as :meth:`stop_watching` (its captures are kept)."""
        from archiver_app.watch.runner import watch_job

        watch_job(self._lib, job_id, schedule, ignore=ignore)

    def refuse_watched(self, urls: Sequence[str], profile: str | None = None) -> None:
        """Raise ``InputError`` naming the watch when one of ``urls`` is watched already (in
        ``profile``): a front end asks before queueing a crawl it is to watch."""
        from archiver_app.watch.runner import refuse_watched

        refuse_watched(self._lib, urls, profile)

    def stop_watching(self, job_id: int) -> StoppedWatch:
        """Stop watching ``job_id`` (a job that is no watch is refused): its runs still
        queued are cancelled; says which, and what still runs."""
        from archiver_app.watch.runner import stop_watch

        return stop_watch(self._lib, job_id)

    def pause_watching(self, job_id: int, paused: bool = True) -> StoppedWatch:
        """Pause the watch ``job_id`` (``paused`` False: resume it from its next slot); a
        paused watch keeps its schedule, its runs still queued are cancelled."""
        from archiver_app.watch.runner import pause_watch

        return pause_watch(self._lib, job_id, paused)

    # ------------------------------------------------------------------ control

    def cancel(self, job_id: int) -> CancelOutcome:
        """Ask a running job to stop (any kind but a crawl, which :meth:`abort` stops)."""
        from archiver_app.jobs import request_cancel

        return request_cancel(self._lib, job_id)

    def pause(self, job_id: int) -> None:
        from archiver_app.crawl.jobs import pause_job

        pause_job(self._lib, job_id)

    def resume(self, job_id: int) -> None:
        from archiver_app.crawl.jobs import resume_job

        resume_job(self._lib, job_id)

    def abort(self, job_id: int) -> None:
        """Stop a crawl: its waiting pages are skipped and its coverage written."""
        from archiver_app.crawl.jobs import abort_job

        abort_job(self._lib, job_id)

    def retry(self, job_id: int) -> int:
        from archiver_app.crawl.jobs import retry_job

        return retry_job(self._lib, job_id)

    def run_again(self, job_id: int) -> int:
        """Queue a new job doing what ended job ``job_id`` (a mirror, a verify) did: Retry
        of one that stopped short or failed (:attr:`JobRow.runs_again`), in the Jobs panel
        and ``archiver job retry`` alike; return the new job's id.

        Raises:
            InputError: there is no such job, or it is not one Retry runs again (one
                under way, one that did all its work, a kind that is not run again).
        """
        from archiver_app.errors import InputError
        from archiver_app.jobs.again import enqueue_again

        row = job_row(self._lib, job_id)
        if row is not None and row.over and not row.runs_again and not row.counts_pages:
            if row.kind in RUN_AGAIN_KINDS:
                raise InputError(f"job {job_id} ({row.kind}) did all its work: nothing to retry")
            raise InputError(
                f"job {job_id} is a {row.kind}: only a mirror or verify that fell short is run"
                " again; run its command again to redo it"
            )
        return enqueue_again(self._lib, job_id)

    def rules(self, job_id: int) -> JobRules:
        """A crawl's current ignore patterns and concurrency (its newest rules version)."""
        return job_rules(self._lib, job_id)

    def update_rules(
        self,
        job_id: int,
        *,
        add_ignore: Sequence[str] = (),
        remove_ignore: Sequence[str] = (),
        concurrency: int | None = None,
    ) -> int:
        """Change a crawl's rules while it runs, as ``archiver job rules`` does: the
        patterns given are added to or removed from its current ones, everything else it
        has (other patterns, the log-out guard of a profile, ignore sets) is kept. A new
        rules version only when something changes; returns the version in force.
        """
        from archiver_app.crawl.jobs import update_rules
        from archiver_app.crawl.rules import merge_ignores

        current = job_rules(self._lib, job_id)
        changes: dict[str, Any] = {}
        if concurrency is not None and concurrency != current.concurrency:
            changes["concurrency"] = concurrency
        same_ignore = merge_ignores(current.ignore, add_ignore, remove_ignore) == current.ignore
        if not changes and same_ignore:
            return current.version
        return update_rules(
            self._lib, job_id, add_ignore=add_ignore, remove_ignore=remove_ignore, **changes
        )
