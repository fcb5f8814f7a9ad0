"""``archiver watch``: re-capture pages on a schedule and say what changed.

A page that answers an HTTP error (4xx, 5xx) is still a capture (the error page is what the
site served, compared as any capture). ``watch run`` says so apart from a change: a page
that starts answering an error is "now answers an error" (HTTP 200 -> 404), one that
answers again after an error "answers again", and every other capture that answered an
error, a watch's first included, is a warning line (a mistyped address is not "unchanged"
forever): it asks whether the address is right only of a page the watch never saw answer
well, and names the capture that did answer well otherwise; the last line counts them.
One line a page, for its last attempt (a page answering 5xx is tried again: its attempts
are one page, each progress line an error answer: ``crawl.worker.progress_line``). A page
still answering 5xx at its last attempt failed, once, as ``archiver jobs``, ``job show``
and the Jobs panel count it (``jobs.results.failed_pages``): its line says so after what
its error page shows. A changed page's line gives what changed (the figures of ``watch
changes``); an unchanged one names a look or the page's own HTML that differ all the same
(what ignored text or a hidden token moves). The exit code is 1 when a page failed, 0
otherwise, 4xx answers included (a timer's run that captured what the site served did its
job; the warning lines are what to read). ``watch changes`` leads a line with the HTTP
status change when there is one.
"""

from __future__ import annotations

import argparse
import shlex
from typing import TYPE_CHECKING, Any

from archiver_app.commands import at_least, collection_slug
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.compare.snapshots import ChangeSummary
    from archiver_app.tasks import ProgressUpdate
    from archiver_app.watch.runner import PageOutcome, StoppedWatch, WatchRow


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "watch",
        help="re-capture pages on a schedule and compare each capture with the last",
        description="Watch pages: each is captured now and again on its schedule (hourly, "
        "daily, weekly or five cron fields, in UTC); every new capture is compared with the "
        "previous one. Run `archiver watch run` from a timer (docs/watch.md).",
    )
    actions = p.add_subparsers(dest="watch_action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="watch one or more addresses")
    add.add_argument("urls", nargs="+", metavar="URL")
    add.add_argument("--schedule", default="daily", metavar="WHEN", help="default: daily")
    add.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="REGEX",
        help="text that changes without mattering (dates, counters); repeatable",
    )
    add.add_argument("--collection", default="default", type=collection_slug, metavar="SLUG")
    add.add_argument("--tag", action="append", default=[], metavar="T")
    add.add_argument(
        "--profile", metavar="NAME", help="capture in this browser profile (`archiver login`)"
    )
    job = actions.add_parser("job", help="watch an existing crawl or capture job")
    job.add_argument("job_id", type=int, metavar="JOB")
    job.add_argument(
        "--schedule",
        metavar="WHEN",
        help="default: a watch keeps its schedule; a job not yet watched is weekly",
    )
    job.add_argument(
        "--ignore",
        action="append",
        default=None,
        metavar="REGEX",
        help="text its comparisons leave out (replaces the watch's); repeatable; "
        "--ignore '' alone: none",
    )
    stop = actions.add_parser("remove", help="stop watching (captures are kept)")
    stop.add_argument("job_id", type=int, metavar="JOB")
    for name, what in (("pause", "no capture until resumed"), ("resume", "from its next slot")):
        paused = actions.add_parser(name, help=f"{name} a watch ({what})")
        paused.add_argument("job_id", type=int, metavar="JOB")
    actions.add_parser("list", help="every watch, its schedule and next run")
    run = actions.add_parser("run", help="capture what is due now, then say what changed")
    run.add_argument(
        "now", nargs="*", type=int, metavar="JOB", help="watches to capture now, due or not"
    )
    changes = actions.add_parser("changes", help="the most recent captures that changed")
    changes.add_argument("--limit", type=at_least(1), default=20)
    p.set_defaults(func=cmd_watch)


def cmd_watch(args: argparse.Namespace, ctx: Context) -> int:
    with ctx.open_library(create=args.watch_action == "add") as lib:
        if args.watch_action == "add":
            job_id = lib.jobs.watch(
                args.urls,
                schedule=args.schedule,
                ignore=args.ignore,
                collection=args.collection,
                tags=args.tag,
                profile=args.profile,
            )
            print(
                f"watching as job {job_id} ({args.schedule}); "
                "the first capture runs with `archiver watch run` or in the app",
                file=ctx.out,
            )
            return 0
        if args.watch_action == "job":
            return _watch_job(lib, ctx, args.job_id, args.schedule, args.ignore)
        if args.watch_action == "remove":
            return _remove(lib, ctx, args.job_id)
        if args.watch_action in ("pause", "resume"):
            return _pause(lib, ctx, args.job_id, args.watch_action == "pause")
        if args.watch_action == "list":
            return _list(lib, ctx)
        if args.watch_action == "changes":
            return _changes(lib, ctx, args.limit)
        return _run(lib, ctx, args.now)


def _watch_job(
    lib: Any, ctx: Context, job_id: int, schedule: str | None, ignore: list[str] | None
) -> int:
    """Watch job ``job_id`` or change its watch: an option not given keeps the watch's
    value (``--ignore`` alone leaves its schedule as it is); a job not yet watched is
    captured weekly unless ``--schedule`` says otherwise. ``--ignore ''`` alone clears the
    watch's ignored text."""
    if ignore == [""]:
        ignore = []
    elif ignore is not None and "" in ignore:
        from archiver_app.errors import InputError

        raise InputError("--ignore '' clears the ignored text: give it alone")
    if schedule is None:
        watch = lib.jobs.watch_of(job_id)
        is_watch = watch is not None and watch.job_id == job_id  # not a run of one
        schedule = watch.schedule if is_watch else "weekly"
    lib.jobs.set_schedule(job_id, schedule, ignore=ignore)
    print(f"job {job_id} is watched ({schedule})", file=ctx.out)
    if ignore == []:
        print("  its comparisons leave nothing out", file=ctx.out)
    return 0


def _remove(lib: Any, ctx: Context, job_id: int) -> int:
    stopped = lib.jobs.stop_watching(job_id)  # a job that is no watch: an input error (2)
    print(f"job {job_id} is no longer watched; its captures are kept", file=ctx.out)
    _runs_left(ctx, stopped)
    return 0


def _pause(lib: Any, ctx: Context, job_id: int, pause: bool) -> int:
    stopped = lib.jobs.pause_watching(job_id, pause)  # no watch: an input error (2)
    if not pause:
        row = lib.jobs.watch_of(job_id)
        print(f"watch {job_id} resumed; next capture {next_capture(row)}", file=ctx.out)
        return 0
    print(
        f"watch {job_id} is paused: no capture until `archiver watch resume {job_id}` "
        f"(`archiver watch run {job_id}` captures it once)",
        file=ctx.out,
    )
    _runs_left(ctx, stopped)
    return 0


def _runs_left(ctx: Context, stopped: StoppedWatch) -> None:
    for run in stopped.cancelled:
        print(f"  its queued capture (job {run}) is cancelled", file=ctx.out)
    for run in stopped.running:
        print(f"  its capture under way (job {run}) finishes", file=ctx.out)
    if stopped.still_queued:
        print(
            f"  its first capture (job {stopped.job_id}) is still queued and will run once; "
            f"`archiver job abort {stopped.job_id}` cancels it",
            file=ctx.out,
        )


def _list(lib: Any, ctx: Context) -> int:
    from archiver_app.watch.schedule import describe_schedule

    rows = lib.jobs.watches()
    if not rows:
        print("nothing is watched; add a page with `archiver watch add URL`", file=ctx.out)
    for row in rows:
        every = describe_schedule(row.schedule)
        print(f"{row.job_id:>5}  {every:<26} next {next_capture(row)}  {row.name}", file=ctx.out)
        if row.profile:
            print(f"       in browser profile {row.profile}", file=ctx.out)
        if row.ignore:
            print(
                f"       ignored in comparisons: {' '.join(map(shlex.quote, row.ignore))}",
                file=ctx.out,
            )
    return 0


def next_capture(row: WatchRow) -> str:
    """When a watch is next captured: "now" while its first capture has not run (the next
    `watch run`, or the app, captures it at once), else its next slot."""
    if row.first_capture_due:
        return "now (first capture)"
    if row.paused:
        return "paused"
    return f"{row.next_run_at:%Y-%m-%d %H:%M} UTC" if row.next_run_at else "-"


def _changes(lib: Any, ctx: Context, limit: int) -> int:
    from archiver_app.compare.changes import recent_changes

    rows = recent_changes(lib, limit=limit)
    if not rows:
        print("no capture has changed yet (`archiver watch list`: what is watched)", file=ctx.out)
    for row in rows:
        compare = (
            f"`archiver diff {row.previous_id} {row.snapshot_id}`"
            if row.previous_id is not None
            else f"capture {row.snapshot_id}; the capture before it was deleted since"
        )
        print(
            f"{row.captured_at:%Y-%m-%d %H:%M}  {row.url}  ({', '.join(figures(row.summary))}; "
            f"{compare})",
            file=ctx.out,
        )
    return 0


def figures(s: ChangeSummary, *, redirect: bool = True) -> list[str]:
    """What changed, in a few figures: where the address now leads (unless ``redirect`` is
    False: said already), the HTTP status and the title first, then the text, the look and
    the resources (those that now answer an error named apart)."""
    from archiver_app.commands.diff_cmd import quoted
    from archiver_app.units import share_text

    out = [s.redirect] if s.redirect and redirect else []
    if s.status_changed:
        error = " (now an error)" if s.now_error else ""
        out.append(f"HTTP {s.old_status} -> {s.new_status}{error}")
    if s.title_changed:
        out.append(f"title {quoted(s.old_title)} -> {quoted(s.new_title)}")
    if s.text_share is not None:
        out.append(f"text {share_text(s.text_share)}")
    if s.pixel_share is not None:
        out.append(f"look {share_text(s.pixel_share)}")
    out.append(f"resources +{s.resources_added} -{s.resources_removed} ~{s.resources_changed}")
    if s.resources_now_error:
        verb = "answers" if s.resources_now_error == 1 else "answer"
        out.append(f"{counted(s.resources_now_error, 'resource')} now {verb} an error")
    return out


def _run(lib: Any, ctx: Context, now: list[int]) -> int:
    from archiver_app.watch.runner import run_due

    if now:
        _refuse_not_watches(lib, now)
        due = lib.jobs.watch_now(now)
        for job_id in due.busy:  # (a watch only queued is captured by this very run)
            print(f"job {job_id}: being captured already", file=ctx.out)
        for job_id in due.not_watches:  # stopped since it was looked up
            print(f"job {job_id}: not a watch (`archiver watch list` lists them)", file=ctx.err)

    def show(update: ProgressUpdate) -> None:
        print(f"  {update.message}", file=ctx.out, flush=True)

    report = run_due(lib, progress=show)
    if not report.runs:
        print("nothing is due", file=ctx.out)
        return 0
    for page in report.pages:
        print(_outcome(page) + _gave_up(page), file=ctx.out)
    errors = f", {len(report.errors)} answered an HTTP error" if report.errors else ""
    print(
        f"{counted(len(report.pages), 'page')}: {len(report.changed)} changed, "
        f"{len(report.failed)} failed{errors}",
        file=ctx.out,
    )
    return 1 if report.failed else 0


def _gave_up(page: PageOutcome) -> str:
    """What ends the line of a page that failed though an error page was kept: its
    attempts ran out (a 5xx answer at the last), so the run counts it failed."""
    if not page.gave_up or page.failed:
        return ""
    return f"; failed: no attempts left (HTTP {page.http_status} at the last)"


def _refuse_not_watches(lib: Any, job_ids: list[int]) -> None:
    """A job named to capture now that is no watch is a mistake: refused (exit code 2, as
    ``watch pause``) before anything is made due or captured."""
    from archiver_app.errors import InputError

    watched = {row.job_id for row in lib.jobs.watches()}
    missing = [job_id for job_id in dict.fromkeys(job_ids) if job_id not in watched]
    if missing:
        jobs = ", ".join(map(str, missing))
        what = f"job {jobs} is not a watch" if len(missing) == 1 else f"jobs {jobs} are not watches"
        raise InputError(f"{what}: nothing was captured (`archiver watch list` lists them)")


def _outcome(page: PageOutcome) -> str:
    """The one line of a page (its last attempt): failed, a change, or the same as before;
    a page that answered an HTTP error says so on it, unless its HTTP status change does."""
    from archiver_app.compare.snapshots import is_error

    change = page.change
    if page.failed:
        return f"failed: {page.url}: {page.failed} (not counted as a change)"
    lead = f"{page.redirect}; " * bool(page.redirect)  # where the page now leads, first
    capture = f"capture {page.snapshot_id}"
    if change is not None and change.status_changed:
        http = f"{lead}HTTP {change.old_status} -> {change.new_status}, {capture}"
        if change.now_error:
            return f"now answers an error: {page.url} ({http})"
        if is_error(change.old_status) and not is_error(change.new_status):
            return f"answers again: {page.url} ({http})"
    if change is not None and change.changed:
        error = f"answered HTTP {page.http_status}; " * (
            page.answered_error and not change.status_changed
        )
        said = ", ".join(figures(change, redirect=False))  # (the lead names the redirect)
        return f"changed: {page.url} ({lead}{said}; {error}{capture})"
    what = "first capture" if change is None else "unchanged"
    if page.redirect and not page.answered_error:
        return f"{what}: {page.url} ({lead}{capture})"
    if page.answered_error:
        return (
            f"warning: {page.url} answered HTTP {page.http_status} ({lead}{capture}, {what}): "
            f"an error page was captured; {_error_hint(page)}"
        )
    measured = uncounted(change) if change is not None else []
    if measured:
        return (
            f"unchanged: {page.url} ({lead}{', '.join(measured)}: not counted as a change: "
            f"the text and the subresources are the same; {capture})"
        )
    return f"{what}: {page.url}"


def _error_hint(page: PageOutcome) -> str:
    """What an error page captured may mean: the site failing, when the watch captured
    the page answering well before; else perhaps a mistyped address."""
    if page.answered_well is not None:
        return f"the page answered fine before (capture {page.answered_well}); the site may be down"
    if page.change is None:
        return "is the address right?"
    return "it never answered well in this watch: is the address right?"


def uncounted(s: ChangeSummary) -> list[str]:
    """What differs in a capture that is not changed: the page's own HTML bytes (a hidden
    token) and, where the watch's ignore patterns left text out, its look are measured and
    shown but do not decide (a counter moves pixels and bytes too)."""
    from archiver_app.units import share_text

    if s.changed:
        return []
    out = []
    if s.pixel_share:
        out.append(f"look {share_text(s.pixel_share)}")
    if s.resources_changed:
        out.append(f"{counted(s.resources_changed, 'resource')} with other content")
    return out
