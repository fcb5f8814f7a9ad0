"""Watched pages: capture jobs with a schedule, re-run when due, each new capture compared.

A watch is a job with a ``schedule`` (a capture of one or more addresses, or an existing
crawl): the job itself is the first run; when a slot comes round,
:func:`~archiver_app.crawl.jobs.start_due_schedules` queues a new run of its seeds (once,
however many slots a sleeping laptop missed; the database's write lock and a re-check of the
due date make sure two processes never queue the same slot). :func:`run_due` is what
``archiver watch run`` does from a timer: queue what is due, run it in the foreground, and
compare every new capture with the previous one of its address (:mod:`archiver_app.compare`).
A job that is no watch's run compares what it captured of watched addresses as it ends
(:func:`compare_watched`, called by the crawl's ending steps).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from archiver_app.compare.changes import previous_capture, record_changes, stored_changes
from archiver_app.compare.redirects import landed, redirect_note
from archiver_app.compare.snapshots import ChangeSummary, compare_captures, is_error
from archiver_app.compare.text import compile_ignore_patterns
from archiver_app.crawl.jobs import abort_if_queued, create_job, start_due_schedules, watch_id_of
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.scope import Scope, validate_seeds
from archiver_app.errors import InputError
from archiver_app.jobs.results import page_failed
from archiver_app.library import Library
from archiver_app.store.models import (
    Job,
    JobStatus,
    Page,
    PageAttempt,
    PageState,
    Snapshot,
    SnapshotChange,
    SnapshotState,
)
from archiver_app.tasks import CancelToken, Progress, null_progress
from archiver_app.watch.answers import answered_well
from archiver_app.watch.schedule import (
    ASKED_NOW,
    SCHEDULE_PAUSED,
    describe_schedule,
    parse_schedule,
)

#: Where a watch keeps its own settings in ``jobs.config``.
WATCH_KEY = "watch"


@dataclass(frozen=True)
class WatchRow:
    job_id: int
    name: str
    seeds: tuple[str, ...]
    schedule: str
    next_run_at: datetime | None
    ignore: tuple[str, ...]
    profile: str | None = None  # captured in this browser profile (logged in)
    # its first capture has not run yet: the next run captures it, whatever next_run_at says
    first_capture_due: bool = False
    paused: bool = False  # keeps its schedule, captured only by Capture Now until resumed


@dataclass(frozen=True)
class PageOutcome:
    url: str
    snapshot_id: int | None
    failed: str | None  # why the capture failed: reported, never a change
    change: ChangeSummary | None  # None: first capture of the address, or failed
    http_status: int | None = None  # the page's answer (4xx, 5xx: an error page captured)
    # "now redirects to …", "no longer redirects …", "redirects to …" (first seen): the
    # address the browser landed on, against the capture before (None: no news)
    redirect: str | None = None
    # the watch's last capture of the address before this one whose answer was no error
    # (None: it never answered well; an error page then may be a mistyped address)
    answered_well: int | None = None
    # its attempts ran out without a good answer (a 5xx at the last, its error page kept:
    # ``capture``): one failed page, as its job counts it (``jobs.results.page_failed``)
    gave_up: bool = False

    @property
    def answered_error(self) -> bool:
        return is_error(self.http_status)


@dataclass(frozen=True)
class WatchRunReport:
    runs: tuple[int, ...]  # the jobs run
    pages: tuple[PageOutcome, ...]

    @property
    def changed(self) -> list[PageOutcome]:
        return [p for p in self.pages if p.change is not None and p.change.changed]

    @property
    def failed(self) -> list[PageOutcome]:
        """Pages that failed, each once: nothing captured, or a 5xx answer at every attempt
        (its error page kept), as ``archiver jobs`` and the Jobs panel count them."""
        return [p for p in self.pages if p.failed or p.gave_up]

    @property
    def errors(self) -> list[PageOutcome]:
        """Pages captured, whose answer was an HTTP error (a 404 is captured as it is)."""
        return [p for p in self.pages if p.answered_error]


def add_watch(
    lib: Library,
    urls: Sequence[str],
    *,
    schedule: str = "daily",
    ignore: Sequence[str] = (),
    collection: str = "default",
    tags: Sequence[str] = (),
    page_timeout: float = 60.0,
    profile: str | None = None,
) -> int:
    """Watch ``urls`` on ``schedule`` (captured in browser profile ``profile``, if given);
    the first capture is queued now. Returns the job id."""
    if not urls:
        raise InputError("no addresses to watch")
    _check_ignore(ignore)  # refuse a bad pattern before anything is written
    parse_schedule(schedule)
    rules = Rules(attempts=2, ignore_sets=(), page_timeout=page_timeout, concurrency=2)
    _refuse_watched(lib, validate_seeds(urls, Scope.PAGE, rules), profile)
    job_id = create_job(
        lib,
        urls,
        scope="page",
        rules=rules,
        collection=collection,
        tags=tags,
        name="watch " + urls[0] + (f" (+{len(urls) - 1})" if len(urls) > 1 else ""),
        schedule=schedule,
        max_retries=0,
        profile=profile,
    )
    with lib.write() as s:
        job = s.get(Job, job_id)
        assert job is not None
        job.config = {**job.config, WATCH_KEY: {"ignore": list(ignore)}}
    return job_id


def _check_ignore(patterns: Sequence[str]) -> None:
    """Refuse a pattern that does not compile, or an empty one: it would leave nothing out
    (no ignored text at all is an empty list)."""
    if any(not p for p in patterns):
        raise InputError("an empty ignore pattern leaves nothing out: give none to ignore nothing")
    compile_ignore_patterns(patterns)


def refuse_watched(lib: Library, urls: Sequence[str], profile: str | None) -> None:
    """Raise :class:`InputError` naming the watch when one of ``urls`` (as a new job would
    normalise them) is watched already in ``profile``: check before queueing a job that is
    to be watched, or it would stay queued as a one-off run once refused."""
    _refuse_watched(lib, validate_seeds(urls, Scope.PAGE, Rules(ignore_sets=())), profile)


def _refuse_watched(
    lib: Library, urls: Sequence[str], profile: str | None, *, besides: int | None = None
) -> None:
    """An address watched already (in the same browser profile) is refused, naming its
    watch: two watches would capture the page twice each time. (``besides``: the watch
    being changed, which may keep its own addresses.)"""
    for row in list_watches(lib):
        if row.job_id == besides:
            continue
        both = [u for u in urls if u in row.seeds]
        if both and row.profile == (profile or None):
            raise InputError(
                f"{both[0]} is watched already (job {row.job_id}, "
                f"{describe_schedule(row.schedule)}); change that watch instead"
            )


def watch_job(
    lib: Library, job_id: int, schedule: str | None, *, ignore: Sequence[str] | None = None
) -> None:
    """Give an existing crawl or capture job a schedule (None: stop watching it, as
    :func:`stop_watch`), and its comparisons the text patterns ``ignore`` leaves out when
    given. A watch given its own schedule again keeps its next slot. A job whose addresses
    another watch watches already is refused, as in :func:`add_watch`."""
    if not schedule:
        stop_watch(lib, job_id)
        return
    text = parse_schedule(schedule).text
    _check_ignore(ignore or ())  # refuse a bad pattern before anything is written
    with lib.session() as s:
        found = s.get(Job, job_id)
        if found is None:
            raise InputError(f"no job {job_id}")
        seeds, profile = found.config.get("seeds") or (), found.config.get("profile")
    _refuse_watched(lib, seeds, profile, besides=job_id)
    now = lib.clock()
    with lib.write() as s:
        job = s.get(Job, job_id)
        if job is None:
            raise InputError(f"no job {job_id}")
        if job.config.get(SCHEDULE_PAUSED):
            job.next_run_at = None
        elif job.schedule != text or job.next_run_at is None:
            job.next_run_at = parse_schedule(text).next_run(now)
        # else the same schedule: its next slot stays (a Capture Now due is not put off)
        job.schedule = text
        settings = job.config.get(WATCH_KEY) or {"ignore": []}
        before = list(settings.get("ignore") or ())
        if ignore is not None:
            settings = {**settings, "ignore": list(ignore)}
        job.config = {**job.config, WATCH_KEY: settings}
    if ignore is not None and list(ignore) != before:
        _compare_again(lib, job_id, ignore)


def _compare_again(lib: Library, watch_id: int, ignore: Sequence[str]) -> None:
    """The kept comparisons made with the watch's ignored text, made again with ``ignore``
    (the Changes list and ``archiver diff`` give the same figures); the looks they measured
    are kept (patterns do not reach pixels)."""
    with lib.session() as s:
        seeds = list((s.get(Job, watch_id) or Job(config={})).config.get("seeds") or ())
        runs = select(Job.id).where(Job.config["scheduled_from"].as_integer() == watch_id)
        compared = s.scalars(
            select(SnapshotChange.snapshot_id)
            .join(Snapshot, Snapshot.id == SnapshotChange.snapshot_id)
            .where(
                Snapshot.url.in_(seeds) | Snapshot.job_id.in_(runs) | (Snapshot.job_id == watch_id)
            )
        ).all()
    ours = [sid for sid in compared if (w := watch_ignore_of(lib, sid)) and w.watch_id == watch_id]
    record_changes(lib, ours, ignore=compile_ignore_patterns(ignore), again=True)


@dataclass(frozen=True)
class StoppedWatch:
    """What became of a watch's captures when it was stopped or paused (captures are kept)."""

    job_id: int
    cancelled: tuple[int, ...]  # its runs still queued for a slot: cancelled, never run
    running: tuple[int, ...]  # its runs under way: they finish
    still_queued: bool  # the watched job itself (its first capture) has not run: it runs once


def stop_watch(lib: Library, job_id: int) -> StoppedWatch:
    """Stop watching ``job_id``: no slot is queued again, and its runs still queued (not
    started) are cancelled. A run under way finishes; the watched job itself, if it has
    not run yet, is left queued (it may be a crawl made before it was watched): the result
    says so. A job that is no watch (a one-off run, a watch's run, one stopped already) is
    refused."""
    with lib.write() as s:
        job = s.get(Job, job_id)
        if job is None:
            raise InputError(f"no job {job_id}")
        if job.schedule is None:
            origin = job.config.get("scheduled_from")
            raise InputError(
                f"job {job_id} is not a watch"
                + (f" (it is a run of watch {origin})" if origin else "")
                + "; `archiver watch list` lists the watches"
            )
        job.schedule = None  # no slot is queued from here on (start_due_schedules checks)
        job.next_run_at = None
        still_queued = job.status == JobStatus.QUEUED
    cancelled, running = _cancel_runs(lib, job_id, "stopped")
    return StoppedWatch(job_id, cancelled, running, still_queued)


def _cancel_runs(lib: Library, job_id: int, how: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Cancel the runs of watch ``job_id`` still queued; return them, and those under way
    (they finish)."""
    with lib.session() as s:
        active = s.execute(select(Job.id, Job.config).where(Job.status.in_(_UNDER_WAY))).all()
    runs = [rid for rid, config in active if (config or {}).get("scheduled_from") == job_id]
    cancelled: list[int] = []
    running: list[int] = []
    for run in sorted(runs):
        why = f"watch {job_id} was {how} before this run started"
        (cancelled if abort_if_queued(lib, run, why=why) else running).append(run)
    return tuple(cancelled), tuple(running)


def pause_watch(lib: Library, job_id: int, paused: bool = True) -> StoppedWatch:
    """Pause the watch ``job_id`` (``paused`` False: resume it). A paused watch keeps its
    schedule and ignored text but no slot comes round: its runs still queued are cancelled
    (as by :func:`stop_watch`; the result says which, and what still runs). Capture Now
    still captures it once. Resuming makes its next slot the schedule's next one from now
    (slots missed while paused are not made up)."""
    with lib.write() as s:
        job = s.get(Job, job_id)
        if job is None or job.schedule is None:
            raise InputError(f"job {job_id} is not a watch (`archiver watch list` lists them)")
        config = dict(job.config)
        if paused:
            config[SCHEDULE_PAUSED] = True
            job.next_run_at = None
        else:
            config.pop(SCHEDULE_PAUSED, None)
            job.next_run_at = parse_schedule(job.schedule).next_run(lib.clock())
        job.config = config
        still_queued = job.status == JobStatus.QUEUED
    if not paused:
        return StoppedWatch(job_id, (), (), still_queued)
    cancelled, running = _cancel_runs(lib, job_id, "paused")
    return StoppedWatch(job_id, cancelled, running, still_queued)


#: A watch with a run in one of these states is being captured already.
_UNDER_WAY = (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.INDEXING, JobStatus.CANCELLING)


@dataclass(frozen=True)
class DueNow:
    """What Capture Now did with each watch asked for."""

    made: tuple[int, ...]  # due now: the next run captures them
    busy: tuple[int, ...]  # a capture of it is under way: left as it is
    not_watches: tuple[int, ...]  # no watch (stopped since, or never one): nothing to do
    queued: tuple[int, ...] = ()  # a capture of it is queued: the next run makes it


def due_now(lib: Library, job_ids: Sequence[int]) -> DueNow:
    """Make the watches ``job_ids`` due now (Capture Now): the next :func:`run_due`
    captures them, after which each goes back to its schedule. A watch whose run is
    queued or under way is left as it is (no second capture of the same pages at once);
    a job that is no watch (stopped elsewhere meanwhile) is named apart."""
    now = lib.clock()
    made: list[int] = []
    busy: list[int] = []
    queued: list[int] = []
    with lib.write() as s:
        active = s.execute(
            select(Job.id, Job.config, Job.status).where(Job.status.in_(_UNDER_WAY))
        ).all()
        runs = {(config or {}).get("scheduled_from") or jid: st for jid, config, st in active}
        for job in s.scalars(select(Job).where(Job.id.in_(job_ids), Job.schedule.is_not(None))):
            if job.id not in runs:
                job.next_run_at = now
                job.config = {**job.config, ASKED_NOW: True}  # its run's log says so
                made.append(job.id)
            else:
                (queued if runs[job.id] == JobStatus.QUEUED else busy).append(job.id)
    told = {*made, *busy, *queued}
    gone = [jid for jid in dict.fromkeys(job_ids) if jid not in told]
    return DueNow(tuple(made), tuple(busy), tuple(gone), tuple(queued))


def list_watches(lib: Library) -> list[WatchRow]:
    first = set(_never_run(lib))
    with lib.session() as s:
        jobs = s.scalars(select(Job).where(Job.schedule.is_not(None)).order_by(Job.id)).all()
        return [
            WatchRow(
                job_id=job.id,
                name=job.name,
                seeds=tuple(job.config.get("seeds") or ()),
                schedule=job.schedule or "",
                next_run_at=job.next_run_at,
                ignore=tuple((job.config.get(WATCH_KEY) or {}).get("ignore") or ()),
                profile=job.config.get("profile") or None,
                first_capture_due=job.id in first,
                paused=bool(job.config.get(SCHEDULE_PAUSED)),
            )
            for job in jobs
        ]


def watch_of(lib: Library, job_id: int) -> WatchRow | None:
    """The watch job ``job_id`` is, or is a run of (None: neither, or it was stopped)."""
    with lib.session() as s:
        job = s.get(Job, job_id)
        if job is None:
            return None
        origin = watch_id_of(job)
    return next((w for w in list_watches(lib) if w.job_id == origin), None)


def _never_run(lib: Library) -> list[int]:
    """Watched jobs still queued since they were made (their first capture)."""
    with lib.session() as s:
        return list(
            s.scalars(
                select(Job.id).where(
                    Job.schedule.is_not(None),
                    Job.status == JobStatus.QUEUED,
                    Job.kind.in_(("capture", "crawl")),
                )
            )
        )


def anything_due(lib: Library, *, now: datetime | None = None) -> bool:
    """Whether :func:`run_due` would capture anything now (one query of the jobs table: cheap enough
    for the app to ask every minute before it starts a background process)."""
    now = now or lib.clock()
    with lib.session() as s:
        due = s.scalar(
            select(Job.id).where(Job.schedule.is_not(None), Job.next_run_at <= now).limit(1)
        )
    return due is not None or bool(_never_run(lib))


def run_due(
    lib: Library,
    *,
    now: datetime | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    concurrency: int = 2,
) -> WatchRunReport:
    """Queue the watches that are due, run them here, and compare each new capture
    (``cancel``: stop after the page in hand; what is left is due again at the next run)."""
    from archiver_app.crawl.inline import run_job_inline

    runs = [*_never_run(lib), *start_due_schedules(lib, now=now)]
    pages: list[PageOutcome] = []
    for job_id in runs:
        if cancel is not None and cancel.cancelled:
            break
        ran = run_job_inline(lib, job_id, concurrency=concurrency, progress=progress, cancel=cancel)
        # only the pages captured here: another machine running the same due watches at
        # the same moment reports those it captured
        pages.extend(compare_run(lib, job_id, worker=ran.worker_id))
    return WatchRunReport(tuple(runs), tuple(pages))


def compare_run(lib: Library, job_id: int, *, worker: str | None = None) -> list[PageOutcome]:
    """What became of each page of watch run ``job_id``, one outcome a page (its last
    attempt): its capture's change since the capture before the run, or why it failed
    (``worker``: only the pages that worker attempted).

    A page answering 5xx is tried again, and each attempt keeps the error page it got:
    those captures are one page, not one each; when its last attempt answers 5xx too the
    page failed (once, as its job counts it), its last error page compared all the same.
    The run's end compared its captures (:func:`compare_watched`); one it did not reach
    (the run was cancelled, the comparison failed) is compared here.
    """
    with lib.session() as s:
        job = s.get(Job, job_id)
        assert job is not None
        watch = _job_watch(s, job)
        snaps = {
            sid: (url, state, status)
            for sid, url, state, status in s.execute(
                select(Snapshot.id, Snapshot.url, Snapshot.state, Snapshot.http_status).where(
                    Snapshot.job_id == job_id
                )
            )
        }
        pages = s.execute(
            select(Page.id, Page.url, Page.state, Page.skip_reason, Page.last_error,
                   Page.snapshot_id).where(Page.job_id == job_id).order_by(Page.id)
        ).all()  # fmt: skip
        attempts = s.execute(
            select(
                PageAttempt.page_id,
                PageAttempt.snapshot_id,
                PageAttempt.worker_id,
            )
            .where(PageAttempt.job_id == job_id)
            .order_by(PageAttempt.page_id, PageAttempt.attempt, PageAttempt.id)
        ).all()
    ignore = compile_ignore_patterns(watch.patterns if watch is not None else ())
    complete = [sid for sid, (_u, state, _st) in snaps.items() if state == SnapshotState.COMPLETE]
    changes = stored_changes(lib, complete)
    missing = [sid for sid in complete if sid not in changes]  # (first captures: cheap)
    changes.update(record_changes(lib, missing, ignore=ignore))
    last: dict[int, int | None] = {}  # page -> its last attempt's capture (None: none made)
    made: dict[int, list[int]] = {}  # page -> the captures its attempts made, in order
    tried: dict[int, bool] = {}  # page -> whether ``worker`` attempted it
    for page_id, sid, by in attempts:
        last[page_id] = sid
        tried[page_id] = tried.get(page_id, False) or by == worker
        if sid is not None:
            made.setdefault(page_id, []).append(sid)
    outcomes: list[PageOutcome] = []
    kept = set(complete)
    for page_id, url, state, skipped, error, page_sid in pages:
        if worker is not None and tried.get(page_id) is False:
            continue  # captured by another process, which reports it
        sid = last.get(page_id, page_sid)
        if sid is not None and sid in kept:
            runs = made.get(page_id) or [sid]
            change = changes.get(sid) if len(runs) < 2 else _since(lib, runs[0], sid, ignore)
            note = _redirect_note(lib, sid)
            gave_up = page_failed(state)
            outcomes.append(
                PageOutcome(url, sid, None, change, snaps[sid][2], note, gave_up=gave_up)
            )
        elif state in (PageState.FAILED, PageState.READY, PageState.CLAIMED):
            outcomes.append(PageOutcome(url, None, skipped or error or "not captured", None))
    told = {sid for sids in made.values() for sid in sids} | {p.snapshot_id for p in pages}
    outcomes += [  # captures no page holds (none, as crawls record them): each its own
        PageOutcome(snaps[sid][0], sid, None, changes.get(sid), snaps[sid][2])
        for sid in complete
        if sid not in told
    ]
    errors = [p.snapshot_id for p in outcomes if p.answered_error and p.snapshot_id]
    well = answered_well(lib, watch.watch_id, errors) if watch is not None and errors else {}
    return [replace(p, answered_well=well.get(p.snapshot_id or 0)) for p in outcomes]


def _redirect_note(lib: Library, snapshot_id: int) -> str | None:
    """What the address's redirect does now against the capture before it
    (:func:`~archiver_app.compare.redirects.redirect_note`)."""
    before = previous_capture(lib, snapshot_id)
    return redirect_note(landed(lib, [before, snapshot_id]), before, snapshot_id)


def _since(
    lib: Library, first: int, last: int, ignore: Sequence[re.Pattern[str]]
) -> ChangeSummary | None:
    """The change of ``last`` since the capture before ``first`` (a page's attempts in one
    run: what the run found, not what its last retry found against the one before it)."""
    before = previous_capture(lib, first)
    if before is None:
        return None  # the page's first capture
    return compare_captures(lib, before, last, ignore=ignore).summary


@dataclass(frozen=True)
class WatchIgnore:
    """The text a watch's comparisons leave out: which watch, and its patterns."""

    watch_id: int
    patterns: tuple[str, ...]


def _job_watch(s: Session, job: Job) -> WatchIgnore | None:
    """The watch ``job`` is, or is a run of (its ignored text); None: not a watch's job."""
    watch = watch_id_of(job)
    if watch is None:
        return None
    origin = s.get(Job, watch) or job
    return WatchIgnore(origin.id, tuple((origin.config.get(WATCH_KEY) or {}).get("ignore") or ()))


def _address_watches(s: Session) -> dict[str, WatchIgnore]:
    """Each watched address and its watch (the oldest, when two profiles watch it)."""
    found: dict[str, WatchIgnore] = {}
    rows = s.execute(select(Job.id, Job.config).where(Job.schedule.is_not(None)).order_by(Job.id))
    for job_id, config in rows:
        ignore = tuple(((config or {}).get(WATCH_KEY) or {}).get("ignore") or ())
        for seed in (config or {}).get("seeds") or ():
            found.setdefault(seed, WatchIgnore(job_id, ignore))
    return found


def watch_ignore_of(lib: Library, snapshot_id: int) -> WatchIgnore | None:
    """The watch whose ignored text applies when capture ``snapshot_id`` is compared with
    the capture before it: the watch its job is or is a run of, else the watch of its
    address; None: neither. The one rule, shared by :func:`compare_watched` (the Changes
    list) and every comparison a person asks for (``archiver diff``, the Compare view)."""
    with lib.session() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is None:
            return None
        job = s.get(Job, snap.job_id) if snap.job_id is not None else None
        own = _job_watch(s, job) if job is not None else None
        return own if own is not None else _address_watches(s).get(snap.url)


def compare_watched(lib: Library, job_id: int) -> dict[int, ChangeSummary]:
    """Compare each complete capture job ``job_id`` made of a watched address with the
    capture before it, with the watch's ignore patterns (:func:`watch_ignore_of`), as the
    job ends: a watch's own run (whoever ran it: the watch runner, a worker, the Jobs
    panel), and a watched page captured by hand or by a crawl, so all show in the Changes
    view and the timeline."""
    with lib.session() as s:
        job = s.get(Job, job_id)
        if job is None:
            return {}
        own = _job_watch(s, job)
        by_address = _address_watches(s) if own is None else {}
        captured = s.execute(
            select(Snapshot.id, Snapshot.url).where(
                Snapshot.job_id == job_id, Snapshot.state == SnapshotState.COMPLETE
            )
        ).all()
    kept: dict[int, ChangeSummary] = {}
    for sid, url in captured:
        watch = own if own is not None else by_address.get(url)
        if watch is not None:
            patterns = compile_ignore_patterns(watch.patterns)
            kept.update(record_changes(lib, [sid], ignore=patterns))
    return kept
