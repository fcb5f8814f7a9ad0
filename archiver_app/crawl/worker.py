"""The crawl worker: takes queued jobs and captures their pages, several at once.

One worker = one process = one browser (through a :class:`PageFetcher`), capturing up to
``min(worker concurrency, job concurrency)`` pages at once. It may die at any moment
(SIGKILL included): everything it knows is in the database, its claims expire with their
lease, and the next worker carries on.

The worker keeps a heartbeat row (``workers``: pid, host, version, disk free, memory) and
renews the leases of its pages with it. It stops claiming while the library's disk has less
than ``min_free_bytes`` free, and says so in the job log. It reloads a job's rules whenever
the job's ``settings_age`` moves, so rule edits apply without a restart. Before each claim
it checks the library's folder (:meth:`Library.check_folder`): when a shared folder has
gone (the share unmounted), it stops claiming, logs why in the job log and ends with
``stats.folder_problem`` set. When the database becomes unreachable (the server stopped,
the network gone: :mod:`archiver_app.store.connection_loss`), it says "database
unreachable: …", lets the pages in flight end, and tries again with growing pauses; once
the database has been unreachable for ``reconnect_seconds`` it ends with
``stats.database_problem`` set. A page whose capture could not be recorded meanwhile is
kept, its lease renewed, and recorded or given back once the database answers
(:mod:`archiver_app.crawl.unrecorded`): no attempt is counted for the outage, nor when it
gives up holding such pages (it notes them for the next to reach the database:
:mod:`archiver_app.crawl.given_up`). Otherwise its claims are never released by hand: they
expire with their leases, and whichever worker runs next takes them; those of a worker of
this computer whose process is gone come back at once
(:mod:`archiver_app.crawl.gone_workers`), and a worker left waiting for another's pages
says whose and for how long.

Threading contract: :meth:`CrawlWorker.run` owns an asyncio loop on the calling thread;
database work runs in the default executor, one short transaction at a time. Stop it from
another thread with the ``cancel`` token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from sqlalchemy import or_, select
from sqlalchemy.exc import OperationalError

from archiver_app import __version__
from archiver_app.capture.results import given_and_final
from archiver_app.crawl import queue
from archiver_app.crawl.aborting import JobTokens, settle_cancelled
from archiver_app.crawl.attempt_errors import attempt_error, failure_reason, one_line
from archiver_app.crawl.fetcher import FetchResult, PageFetcher
from archiver_app.crawl.given_up import note_given_up, settle_given_up
from archiver_app.crawl.gone_workers import held_by_others, release_gone_workers
from archiver_app.crawl.jobs import load_context, start_due_schedules
from archiver_app.crawl.queue import AttemptOutcome
from archiver_app.crawl.results import (
    PageOutcome,
    enforce_limits,
    finish_job_if_done,
    resume_interrupted_endings,
    start_job,
    write_coverage,
)
from archiver_app.crawl.spec import JobContext
from archiver_app.crawl.unrecorded import Unrecorded, record_result, settle
from archiver_app.library import Library
from archiver_app.library_share import FolderCheck
from archiver_app.store.connection_loss import lost_connection, unreachable_message
from archiver_app.store.models import (
    CRAWL_KIND_NAMES,
    Job,
    JobStatus,
    PageState,
    Worker,
)
from archiver_app.tasks import Cancelled, CancelToken, Progress, ProgressUpdate, null_progress
from archiver_app.urls import display_url

FetcherFactory = Callable[[int], PageFetcher]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkerOptions:
    concurrency: int = 2  # most pages at once, whatever the job allows
    heartbeat_seconds: float = 5.0
    poll_seconds: float = 0.5
    min_free_bytes: int = 256 << 20  # pause claims below this much free disk
    once: bool = False  # exit when no job is runnable instead of waiting for one
    job_ids: frozenset[int] | None = None  # only these jobs (inline captures)
    reconnect_seconds: float = 60.0  # give up once the database was unreachable this long


@dataclass
class WorkerStats:
    pages_done: int = 0
    pages_failed: int = 0
    jobs_finished: dict[int, str] = field(default_factory=dict)
    #: Why the worker stopped claiming on its own: its library folder went away.
    folder_problem: FolderCheck | None = None
    #: Why the worker gave up: "database unreachable: …" for ``reconnect_seconds``.
    database_problem: str | None = None


def progress_line(result: FetchResult, *, retrying: bool = False, watched: bool = False) -> str:
    """``ok 200 high URL (#12)`` or ``failed URL: error`` (the lines ``archiver capture``
    prints; ``#12`` is the capture's id, which ``cite``, ``diff`` and ``delete`` take).
    URL is the address given, followed by ``-> FINAL`` when the page ended elsewhere.
    ``retrying``: tried again. ``watched``: a watch's job (its error page is its capture)."""
    made = f" (#{result.snapshot_id})" if result.snapshot_id is not None else ""
    shown = given_and_final(result.url, result.final_url)
    again = "; trying again" if retrying else ""
    if result.ok and result.http_status is not None and result.http_status >= 500:
        # a server error counts as a failed attempt (tried again); the answer is kept
        kept = "its error page is kept" + (f" as #{result.snapshot_id}" if made else "") + again
        if watched:  # as the run's summary counts it (docs/watch.md)
            return f"answered HTTP {result.http_status} {shown}: {kept}"
        return f"failed {shown}: HTTP {result.http_status}; {kept}"
    if result.ok:
        remark = f": {result.remark}" if result.remark else ""
        return f"ok {result.http_status} {result.fidelity} {shown}{made}{remark}"
    said = one_line(failure_reason(result.error, result.http_status))
    return f"failed {display_url(result.url)}: {said}{again}"


def disk_free_bytes(path: str) -> int:
    return shutil.disk_usage(path).free


def memory_rss() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


class CrawlWorker:
    """Runs jobs from the library's queue until there is nothing to do (``once``) or cancel."""

    def __init__(
        self,
        lib: Library,
        fetcher_factory: FetcherFactory,
        options: WorkerOptions | None = None,
        *,
        worker_id: str | None = None,
        disk_free: Callable[[str], int] = disk_free_bytes,
        cancel: CancelToken | None = None,
        progress: Progress = null_progress,
    ) -> None:
        self.lib = lib
        self.options = options or WorkerOptions()
        self.id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._factory = fetcher_factory
        self._disk_free = disk_free
        self.cancel = cancel or CancelToken()
        self._tokens = JobTokens(self.cancel)  # a job's pages in flight stop when it is aborted
        self._progress = progress
        self.stats = WorkerStats()
        self._next_at: dict[str, float] = {}
        self._host_locks: dict[str, asyncio.Lock] = {}
        self._beat_lock = threading.Lock()
        self._stopped = False
        self._held: set[int] = set()  # pages being fetched: only their leases are renewed
        self._unrecorded: list[Unrecorded] = []  # held until the database answers again
        self._low_disk_logged: set[int] = set()
        self._lease_seconds = 120.0
        self._job_id: int | None = None
        self._disk_free_now: int | None = None
        self._waiting_for: tuple[tuple[str, int], ...] = ()  # the last "waiting for" line's

    # ------------------------------------------------------------------ entry points

    def run(self) -> WorkerStats:
        return asyncio.run(self.run_async())

    async def run_async(self) -> WorkerStats:
        await asyncio.to_thread(self._heartbeat, "starting")
        try:
            async with self._factory(self.options.concurrency) as fetcher:
                beat = asyncio.create_task(self._heartbeat_loop())
                try:
                    await self._loop_reconnecting(fetcher)
                finally:
                    beat.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await beat
        finally:
            try:
                await asyncio.to_thread(self._heartbeat, "stopped")
            except Exception as exc:  # the database went away for good: nothing to tell it
                if not lost_connection(exc):
                    raise
        return self.stats

    async def _loop_reconnecting(self, fetcher: PageFetcher) -> None:
        """:meth:`_loop`, started again each time the database comes back, until it has
        been unreachable for ``reconnect_seconds`` (then ``stats.database_problem``)."""
        while True:
            try:
                await self._loop(fetcher)
                await self._settle_unrecorded()  # stopped: what it still holds goes back
                return
            except Exception as exc:
                if not lost_connection(exc):
                    raise
                message = unreachable_message(exc)
            self._job_id = None  # the job may have ended meanwhile: pick again
            if not await self._wait_for_database(message):  # what it holds: noted, not lost
                await asyncio.to_thread(note_given_up, self.lib, self.id, self._unrecorded)
                return

    async def _wait_for_database(self, message: str) -> bool:
        """Try the database with growing pauses (1 s, 2 s … 15 s); False when it stayed
        unreachable for ``reconnect_seconds`` or the worker was stopped meanwhile."""
        since = time.monotonic()
        pause = 1.0
        while True:
            left = self.options.reconnect_seconds - (time.monotonic() - since)
            if left <= 0 or self.cancel.cancelled:
                self.stats.database_problem = message
                return False
            # info, not warning: the progress line says it to the user (a warning went to
            # stderr too, through logging's last-resort handler: each retry printed twice)
            log.info("%s; trying again in %.0f s", message, min(pause, left))
            self._progress(ProgressUpdate(self._pages_seen(), message=f"{message}; retrying"))
            if await asyncio.to_thread(self.cancel.wait, min(pause, left)):
                continue
            pause = min(pause * 2, 15.0)
            try:
                await asyncio.to_thread(self._ping)
            except Exception as exc:
                if not lost_connection(exc):
                    raise
                message = unreachable_message(exc)
                continue
            log.warning("database reachable again; claiming again")
            return True

    def _ping(self) -> None:
        with self.lib.engine.connect() as conn:
            conn.execute(select(1))

    def _pages_seen(self) -> int:
        return self.stats.pages_done + self.stats.pages_failed

    # ------------------------------------------------------------------ main loop

    async def _loop(self, fetcher: PageFetcher) -> None:
        inflight: set[asyncio.Task[None]] = set()
        ctx: JobContext | None = None
        poll = self.options.poll_seconds
        try:
            while not self.cancel.cancelled:
                if self._unrecorded:
                    await self._settle_unrecorded()
                if self._job_id is None:
                    self._job_id = await asyncio.to_thread(self._pick_job)
                    ctx = None
                    if self._job_id is None:
                        if inflight:
                            await asyncio.wait(
                                inflight, timeout=poll, return_when=asyncio.FIRST_COMPLETED
                            )
                        elif self.options.once:
                            return
                        else:
                            await asyncio.to_thread(self.cancel.wait, poll)
                        continue
                job_id = self._job_id
                status, age = await asyncio.to_thread(self._job_state, job_id)
                if status != JobStatus.RUNNING:
                    if inflight:
                        if status == JobStatus.ABORTED:
                            self._tokens.abort(job_id)
                        await asyncio.wait(
                            inflight, timeout=poll, return_when=asyncio.FIRST_COMPLETED
                        )
                        continue
                    if status == JobStatus.ABORTED:  # pages in flight at the abort are in now
                        await asyncio.to_thread(write_coverage, self.lib, job_id)
                    self._job_id = None
                    continue
                if ctx is None or ctx.settings_age != age:
                    changed = ctx is not None
                    ctx = await asyncio.to_thread(self._load, job_id)
                    self._lease_seconds = ctx.spec.lease_seconds
                    if changed:
                        await asyncio.to_thread(
                            self._log,
                            job_id,
                            f"worker {self.id} picked up rules v{ctx.ruleset_version}",
                        )
                room = min(self.options.concurrency, ctx.rules.concurrency) - len(inflight)
                claimed: list[queue.ClaimedPage] = []
                if room > 0 and not await asyncio.to_thread(self._folder_ok, job_id):
                    return  # pages in flight finish below; nothing more is claimed
                if room > 0 and await asyncio.to_thread(self._disk_ok, job_id):
                    claimed = await asyncio.to_thread(self._claim, ctx, room)
                for page in claimed:
                    self._held.add(page.page_id)
                    task = asyncio.create_task(self._run_page(fetcher, ctx, page))
                    inflight.add(task)
                    task.add_done_callback(inflight.discard)
                if not inflight:
                    finished = await asyncio.to_thread(finish_job_if_done, self.lib, job_id)
                    if finished is not None:
                        self.stats.jobs_finished[job_id] = finished
                        self._job_id = None
                    elif not await asyncio.to_thread(self._others_hold, job_id):
                        await asyncio.to_thread(self.cancel.wait, poll)
                    continue
                await asyncio.wait(inflight, timeout=poll, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if inflight:
                await asyncio.gather(*inflight, return_exceptions=True)

    async def _run_page(
        self, fetcher: PageFetcher, ctx: JobContext, page: queue.ClaimedPage
    ) -> None:
        await self._politeness(ctx, page.url)
        started = time.monotonic()
        try:
            self._tokens.token(ctx.job_id).raise_if_cancelled()
            result = await fetcher.fetch(
                page.url,
                job_id=ctx.job_id,
                collection=ctx.spec.collection,
                tags=ctx.spec.tags,
                rules=ctx.rules,
                cancel=self._tokens.token(ctx.job_id),
                profile=ctx.spec.profile,
            )
        except (Cancelled, asyncio.CancelledError):
            self._held.discard(page.page_id)
            await asyncio.to_thread(self._give_back, page)
            return
        except Exception as exc:  # a browser crash must not kill the worker
            if lost_connection(exc):  # not the page's failure: kept until the database is back
                self._unrecorded.append(Unrecorded(ctx, page, unreachable_message(exc)))
                return
            log.warning("capturing %s failed", page.url, exc_info=exc)  # its whole text
            result = FetchResult(
                url=page.url,
                final_url=page.url,
                ok=False,
                http_status=None,
                error=attempt_error(exc),
                duration=time.monotonic() - started,
            )
        if result.unrecorded is not None:
            self._unrecorded.append(Unrecorded(ctx, page, result.unrecorded, result))
            return
        try:
            outcome = await self._record_with_retries(ctx, page, result)
        except Exception as exc:
            if not lost_connection(exc):
                self._held.discard(page.page_id)  # its lease lapses: retried, counted
                raise
            held = Unrecorded(ctx, page, unreachable_message(exc), result, saved=True)
            self._unrecorded.append(held)
            return
        self._held.discard(page.page_id)
        self._tell(ctx, result, outcome)

    def _tell(self, ctx: JobContext, result: FetchResult, outcome: PageOutcome) -> None:
        """Count a recorded page and say how it went (its progress line)."""
        if outcome.outcome == AttemptOutcome.DONE:
            self.stats.pages_done += 1
        else:
            self.stats.pages_failed += 1
        retrying = outcome.outcome != AttemptOutcome.DONE and outcome.state == PageState.READY
        self._progress(
            ProgressUpdate(
                done=self.stats.pages_done + self.stats.pages_failed,
                message=progress_line(result, retrying=retrying, watched=ctx.watched),
                bytes_done=result.bytes_written,
            )
        )

    async def _settle_unrecorded(self) -> None:
        """Record, or give back to the queue, the pages whose capture could not be recorded
        (:mod:`archiver_app.crawl.unrecorded`); raises while the database is unreachable."""
        while self._unrecorded:
            item = self._unrecorded[0]
            recorded = await asyncio.to_thread(settle, self.lib, item, self._record)
            self._unrecorded.pop(0)
            self._held.discard(item.page.page_id)
            if recorded is not None:
                self._tell(item.ctx, recorded[1], recorded[0])
                continue
            said = f"{item.page.url}: not recorded ({item.reason}); back in the queue"
            self._progress(ProgressUpdate(self._pages_seen(), message=said))

    async def _record_with_retries(
        self, ctx: JobContext, page: queue.ClaimedPage, result: FetchResult
    ) -> PageOutcome:
        """Record a result, retrying a few times through database hiccups (a lock timeout,
        a PostgreSQL deadlock victim); raises after that, and at once when the database
        is unreachable.

        Any other error while recording (a bug, an unreadable record) is recorded as a
        failed attempt with its reason, so the page is retried or failed like any other
        failure instead of its task dying and its lease running out.
        """
        for attempt in range(5):
            try:
                return await asyncio.to_thread(self._record, ctx, page, result)
            except OperationalError as exc:
                if attempt == 4 or lost_connection(exc):  # lost: kept until it is back
                    raise
                log.warning("recording %s failed; retrying", page.url, exc_info=True)
                await asyncio.to_thread(self.cancel.wait, 0.5 * (attempt + 1))
            except Exception as exc:
                if lost_connection(exc):
                    raise
                log.exception("recording %s failed; recording it as a failed attempt", page.url)
                failed = replace(
                    result,
                    ok=False,
                    outlinks=[],
                    error=f"recording the result failed: {attempt_error(exc)}",
                )
                return await asyncio.to_thread(self._record, ctx, page, failed)
        raise AssertionError("unreachable")

    async def _politeness(self, ctx: JobContext, url: str) -> None:
        """Wait so that two pages of one host start at least the rules' delay apart."""
        if ctx.rules.delay_max <= 0:
            return
        host = urlsplit(url).netloc
        lock = self._host_locks.setdefault(host, asyncio.Lock())
        async with lock:
            wait = self._next_at.get(host, 0.0) - time.monotonic()
            if wait > 0:
                await asyncio.to_thread(self.cancel.wait, wait)
            delay = random.uniform(ctx.rules.delay_min, ctx.rules.delay_max)
            self._next_at[host] = time.monotonic() + delay

    # ------------------------------------------------------------------ database steps (threads)

    def _pick_job(self) -> int | None:
        now = self.lib.clock()
        if self.options.job_ids is None:
            start_due_schedules(self.lib, now=now)
        resume_interrupted_endings(self.lib)
        release_gone_workers(self.lib)  # a killed worker's job and pages: no lease waited for
        with self.lib.session() as s:
            stmt = (
                select(Job.id)
                .where(
                    Job.kind.in_(CRAWL_KIND_NAMES),  # other kinds belong to the job runtime
                    or_(
                        Job.status.in_([JobStatus.RUNNING, JobStatus.QUEUED]),
                        (Job.status == JobStatus.RETRYABLE) & (Job.next_run_at <= now),
                    ),
                )
                .order_by(Job.priority, Job.id)
            )
            if self.options.job_ids is not None:
                stmt = stmt.where(Job.id.in_(self.options.job_ids))
            candidates = s.scalars(stmt.limit(20)).all()
        for job_id in candidates:
            if start_job(self.lib, job_id):
                return job_id
        return None

    def _others_hold(self, job_id: int) -> bool:
        """Nothing to claim and the job not done: pages other workers hold. Those of a
        worker whose process is gone come back at once (True: claim again now); for the
        others, say once what is waited for (their leases may take minutes to run out)."""
        if release_gone_workers(self.lib, running_here={job_id}).pages:
            return True
        holders = held_by_others(self.lib, job_id, self.id)
        key = tuple((h.worker, h.pages) for h in holders)
        if holders and key != self._waiting_for:
            text = "; ".join(h.describe() for h in holders)
            self._progress(ProgressUpdate(self._pages_seen(), message=f"waiting for {text}"))
        self._waiting_for = key
        return False

    def _job_state(self, job_id: int) -> tuple[str, int]:
        with self.lib.session() as s:
            row = s.execute(select(Job.status, Job.settings_age).where(Job.id == job_id)).one()
            return str(row.status), int(row.settings_age)

    def _load(self, job_id: int) -> JobContext:
        with self.lib.session() as s:
            return load_context(s, job_id)

    def _claim(self, ctx: JobContext, room: int) -> list[queue.ClaimedPage]:
        now = self.lib.clock()
        with self.lib.write() as s:
            if enforce_limits(s, ctx, now=now):
                return []
            return queue.claim_pages(s, ctx, self.id, room, now=now)

    def _record(self, ctx: JobContext, page: queue.ClaimedPage, result: FetchResult) -> PageOutcome:
        return record_result(self.lib, ctx, page, result)

    def _give_back(self, page: queue.ClaimedPage) -> None:
        """Give a page back untouched (the worker was stopped before it finished), or skip
        it (its job was aborted while it was being captured)."""
        settle_cancelled(self.lib, page, aborted=self._tokens.aborted(page.job_id))

    def _disk_ok(self, job_id: int) -> bool:
        free = self._disk_free(str(self.lib.root))
        self._disk_free_now = free
        low = free < self.options.min_free_bytes
        if low and job_id not in self._low_disk_logged:
            self._low_disk_logged.add(job_id)
            self._log(
                job_id,
                f"disk nearly full: {free >> 20} MiB free on the library's disk, "
                f"{self.options.min_free_bytes >> 20} MiB needed; new claims paused",
                level="warning",
            )
        elif not low and job_id in self._low_disk_logged:
            self._low_disk_logged.discard(job_id)
            self._log(job_id, f"disk space back ({free >> 20} MiB free); claims resumed")
        return not low

    def _folder_ok(self, job_id: int) -> bool:
        """Is the library's folder still the one this worker opened? A share that was
        unmounted leaves an empty mount point, or nothing: capturing into it would write
        files nobody else can find, so the worker stops claiming and says why."""
        check = self.lib.check_folder()
        if check.ok:
            return True
        self.stats.folder_problem = check
        message = f"worker {self.id} stops claiming: {check.message}"
        log.error("%s", message)
        with contextlib.suppress(Exception):  # the database may be what went away
            self._log(job_id, message, level="error")
        return False

    def _log(self, job_id: int, message: str, *, level: str = "info") -> None:
        with self.lib.write() as s:
            queue.log_line(s, job_id, message, level=level, at=self.lib.clock())

    # ------------------------------------------------------------------ heartbeat

    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.options.heartbeat_seconds)
            try:
                await asyncio.to_thread(
                    self._heartbeat, "working" if self._job_id else "idle", frozenset(self._held)
                )
            except Exception as exc:  # a missed beat is retried at the next; never stop beating
                if lost_connection(exc):  # the main loop says so, in one line
                    log.info("worker %s: heartbeat: %s", self.id, unreachable_message(exc))
                else:
                    log.warning("worker %s: heartbeat failed", self.id, exc_info=True)

    def _heartbeat(self, state: str, held: frozenset[int] = frozenset()) -> None:
        # A beat still running in its thread when the worker stops must not land after
        # "stopped": beats are serialised and none is written after it.
        with self._beat_lock:
            if self._stopped:
                return
            self._write_heartbeat(state, held)
            self._stopped = state == "stopped"

    def _write_heartbeat(self, state: str, held: frozenset[int]) -> None:
        now = self.lib.clock()
        free = self._disk_free_now
        if free is None:
            with contextlib.suppress(OSError):
                free = self._disk_free(str(self.lib.root))
        if state != "stopped":  # a given-up worker's pages, before leases count as lost
            settle_given_up(self.lib)
        with self.lib.write() as s:
            row = s.get(Worker, self.id)
            if row is None:
                row = Worker(
                    id=self.id,
                    pid=os.getpid(),
                    host=socket.gethostname(),
                    version=__version__,
                    started_at=now,
                )
                s.add(row)
            row.state = state
            row.current_job_id = self._job_id
            row.disk_free = free
            row.memory_rss = memory_rss()
            row.heartbeat_at = now
            if state != "stopped":
                queue.renew_leases(
                    s, self.id, now=now, lease_seconds=self._lease_seconds, page_ids=held
                )
            queue.recover_expired(s, now=now)
