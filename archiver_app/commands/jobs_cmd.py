"""``archiver jobs`` and ``archiver job show|pause|resume|abort|retry|rules|log ID``."""

from __future__ import annotations

import argparse
import json
import shlex
from typing import TYPE_CHECKING, Any

from archiver_app.commands import at_least
from archiver_app.units import counted, human_bytes
from archiver_app.urls import display_text, display_url

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.crawl.api import JobSummary, LogLine
    from archiver_app.crawl.figures import PageFigures
    from archiver_app.library import Library
    from archiver_app.watch.runner import WatchRow


def register(sub: argparse._SubParsersAction[Any]) -> None:
    from archiver_app.commands.crawl_cmd import add_rule_options

    p = sub.add_parser(
        "jobs",
        help="list jobs of every kind (capture, crawl, import, mirror ...) with their progress",
    )
    p.add_argument("--status", action="append", help="only jobs in this status (repeatable)")
    p.add_argument("--limit", type=at_least(1), default=50, help="at most this many (newest first)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_jobs)

    job = sub.add_parser("job", help="show or control one job")
    actions = job.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="counters, page states, rules and the log tail")
    show.add_argument("id", type=int)
    show.add_argument("--log", type=at_least(0), default=10, metavar="N", help="last N log lines")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_show)
    for name, text in (
        ("pause", "stop claiming new pages (pages in flight finish)"),
        ("resume", "continue a paused crawl; run an interrupted job of another kind here"),
        ("abort", "skip every waiting page and end the job (other kinds: cancel it)"),
        (
            "retry",
            "put failed (and aborted) pages back in the queue; a mirror or verify that fell"
            " short: run it again here, as a new job",
        ),
    ):
        a = actions.add_parser(name, help=text)
        a.add_argument("id", type=int)
        a.set_defaults(func=cmd_action, action_name=name)
    rules = actions.add_parser("rules", help="edit a job's rules, live (a new rules version)")
    rules.add_argument("id", type=int)
    rules.add_argument("--ignore", action="append", default=[], metavar="REGEX", help="add")
    rules.add_argument("--unignore", action="append", default=[], metavar="REGEX", help="remove")
    rules.add_argument("--ignore-sets", metavar="A,B", help="built-in ignore sets ('' for none)")
    rules.add_argument("--priority", type=int, help="lower runs first")
    add_rule_options(rules)
    rules.set_defaults(func=cmd_rules)
    log = actions.add_parser("log", help="print the job log")
    log.add_argument("id", type=int)
    log.add_argument("--after", type=int, default=0, metavar="LINE_ID")
    log.set_defaults(func=cmd_log)


def _is_crawl(j: JobSummary) -> bool:
    from archiver_app.store.models import CRAWL_KIND_NAMES

    return j.kind in CRAWL_KIND_NAMES


def _done(j: JobSummary) -> str:
    """Pages captured of intended for a crawl (the figures of its coverage report);
    progress done of total for other kinds."""
    from archiver_app.crawl.figures import PageFigures

    if _is_crawl(j):
        pages = j.pages or PageFigures()
        return f"{pages.captured:>6}/{pages.intended:<6}"
    total = "?" if j.progress_total is None else str(j.progress_total)
    return f"{j.progress_done:>6}/{total:<6}"


def _status(j: JobSummary) -> str:
    """The status as the Jobs panel shows it ("incomplete" for a mirror that stopped short)."""
    from archiver_app.api.jobs_view import shown_status

    return shown_status(
        j.status, j.kind, j.last_error, j.progress_done, j.progress_total, errors=j.error_count
    )


def _line(j: JobSummary) -> str:
    size = human_bytes(j.bytes_downloaded) if _is_crawl(j) else ""
    return (
        f"{j.id:>5}  {j.kind:<8} {_status(j):<12} {_done(j)} {size:>10} {j.error_count:>6}"
        f"  {display_text(j.name)}"
    )


def cmd_jobs(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.crawl.api import list_jobs, summary_dict
    from archiver_app.errors import InputError
    from archiver_app.jobs import default_registry, recover_interrupted
    from archiver_app.store.models import JobStatus

    known = [str(v) for v in JobStatus]
    if unknown := [v for v in args.status or [] if v not in known]:
        raise InputError(f"no job status {unknown[0]!r}; the statuses are {', '.join(known)}")
    with ctx.open_library() as lib:
        # a job whose process was killed shows as such, not as still running
        recover_interrupted(lib, default_registry())
        jobs = list_jobs(lib, statuses=args.status, limit=args.limit)
    if args.json:
        print(json.dumps([summary_dict(j) for j in jobs], indent=2), file=ctx.out)
        return 0
    if not jobs:
        print("no jobs", file=ctx.out)
        return 0
    print(f"{'id':>5}  {'kind':<8} {'status':<12} {'done/total':<13} {'bytes':>10} "
          f"{'failed':>6}  name", file=ctx.out)  # fmt: skip
    for j in jobs:
        print(_line(j), file=ctx.out)
    if waiting := [j.id for j in jobs if _waits_to_resume(j)]:
        print(f"interrupted and queued to resume: {', '.join(map(str, waiting))}; the app "
              f"resumes them when it opens the library (Run in its Jobs panel if it is open), "
              f"or: {_resume(waiting[0])}",
              file=ctx.out)  # fmt: skip
    if halted := [j.id for j in jobs if _is_crawl(j) and j.status == "queued" and j.started_at]:
        print(f"started, then interrupted or paused, waiting for a worker: "
              f"{', '.join(map(str, halted))}; run one here with: archiver worker --once "
              f"--job {halted[0]} (or Run in the app's Jobs panel)", file=ctx.out)  # fmt: skip
    return 0


def _resume(job_id: int) -> str:
    """The command that runs an interrupted job here (``archiver worker`` runs crawls)."""
    return f"archiver job resume {job_id}"


def _waits_to_resume(j: JobSummary) -> bool:
    """A job of the runtime that ran, was interrupted and waits to run again."""
    return not _is_crawl(j) and j.status == "queued" and j.started_at is not None


def cmd_show(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.crawl.api import job_detail, summary_dict, tail_log
    from archiver_app.jobs import default_registry, recover_interrupted

    with ctx.open_library() as lib:
        recover_interrupted(lib, default_registry())
        d = job_detail(lib, args.id)
        watch = lib.jobs.watch_of(args.id)
        log = tail_log(lib, args.id, limit=1_000_000)[-args.log :] if args.log else []
        root = lib.root
    if not _is_crawl(d.summary):
        return _show_operation(d.summary, log, ctx, as_json=args.json)
    if args.json:
        out = {
            **summary_dict(d.summary),
            "limits": d.spec.to_json()["limits"],
            "profile": d.spec.profile,
            "rules": d.rules.to_json(),
            "watch": None if watch is None else {
                "job_id": watch.job_id, "schedule": watch.schedule, "ignore": list(watch.ignore)
            },
            "page_states": d.page_states,
            "coverage_json": d.coverage_json,
            "log": [{"id": x.id, "at": x.at.isoformat(), "level": x.level, "message": x.message}
                    for x in log],
        }  # fmt: skip
        print(json.dumps(out, indent=2), file=ctx.out)
        return 0
    s = d.summary
    rows = [
        ("job", f"{s.id} {display_text(s.name)} ({s.kind})"),
        ("status", _status(s) + (f" ({display_text(s.last_error)})" if s.last_error else "")),
        ("scope", f"{s.scope}: {', '.join(map(display_url, s.seeds))}"),
        ("profile", d.spec.profile or "none (a fresh browser)"),
        ("limits", ", ".join(f"{k}={v}" for k, v in d.spec.to_json()["limits"].items() if v)
         or "none"),
        ("rules", f"v{s.ruleset_version} (settings age {s.settings_age}), "
                  f"concurrency {d.rules.concurrency}, ignore URLs {list(d.rules.ignore)}"),
        ("pages", _pages_line(s.pages)),
        ("states", ", ".join(f"{n} {st}" for st, n in d.page_states.items())),
        ("counters", f"{s.items_downloaded} downloaded, "
                     f"{human_bytes(s.bytes_downloaded)}, 1xx {s.r1xx} 2xx {s.r2xx} 3xx {s.r3xx} "
                     f"4xx {s.r4xx} 5xx {s.r5xx} unknown {s.runk}, "
                     f"{counted(s.error_count, 'page')} failed "
                     f"({counted(s.attempts_failed, 'attempt')} failed), "
                     f"{s.concurrency} in flight"),
        ("retries", f"{s.retry_count} of {s.max_retries}"),
        ("coverage", str(root / d.coverage_md) if d.coverage_md else "not yet"),
    ]  # fmt: skip
    if watch is not None:
        rows.insert(4, ("watch", _watch_line(watch, args.id)))
    for key, value in rows:
        print(f"{key + ':':<10} {value}", file=ctx.out)
    for line in log:
        print(f"  {line.at:%H:%M:%S} {line.level:<7} {display_text(line.message)}", file=ctx.out)
    return 0


def _pages_line(pages: PageFigures | None) -> str:
    """What ``archiver crawl`` ends with and the coverage report counts."""
    from archiver_app.crawl.figures import PageFigures

    pages = pages or PageFigures()
    return f"{pages.summary()}; {pages.intended} intended"


def _watch_line(watch: WatchRow, job_id: int) -> str:
    """A watch's schedule and the text its comparisons leave out (not the URL patterns
    of the crawl's rules)."""
    from archiver_app.watch.schedule import describe_schedule

    which = "" if watch.job_id == job_id else f"a run of watch {watch.job_id}, "
    ignored = " ".join(map(shlex.quote, watch.ignore)) or "nothing"
    return f"{which}{describe_schedule(watch.schedule)}; ignored in comparisons: {ignored}"


def _show_operation(s: JobSummary, log: list[LogLine], ctx: Context, *, as_json: bool) -> int:
    """``job show`` for a job of the runtime (import, mirror ...): progress and result."""
    from archiver_app.crawl.api import summary_dict

    if as_json:
        out = {
            **summary_dict(s),
            "log": [{"id": x.id, "at": x.at.isoformat(), "level": x.level, "message": x.message}
                    for x in log],
        }  # fmt: skip
        print(json.dumps(out, indent=2), file=ctx.out)
        return 0
    total = "" if s.progress_total is None else f" of {s.progress_total}"
    rows = [
        ("job", f"{s.id} {display_text(s.name)} ({s.kind})"),
        ("status", _status(s) + (f" ({display_text(s.last_error)})" if s.last_error else "")),
        ("progress", f"{s.progress_done}{total}"
                     + (f": {display_text(s.progress_message)}" if s.progress_message else "")),
    ]  # fmt: skip
    if s.result is not None:
        rows.append(("result", json.dumps(s.result)[:2000]))
    if _waits_to_resume(s):
        rows.append((
            "next",
            "the app resumes it when it opens the library (Run in its Jobs panel if it is"
            f" open), or: {_resume(s.id)}",
        ))  # fmt: skip
    for key, value in rows:
        print(f"{key + ':':<10} {value}", file=ctx.out)
    for line in log:
        print(f"  {line.at:%H:%M:%S} {line.level:<7} {display_text(line.message)}", file=ctx.out)
    return 0


def cmd_action(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.crawl import jobs
    from archiver_app.crawl.api import job_detail

    with ctx.open_library() as lib:
        if not _is_crawl(job_detail(lib, args.id).summary):
            return _control_operation(args, ctx, lib)
        if args.action_name == "pause":
            jobs.pause_job(lib, args.id)
            print(f"job {args.id} paused", file=ctx.out)
        elif args.action_name == "resume":
            jobs.resume_job(lib, args.id)
            print(f"job {args.id} resumed: queued for a worker", file=ctx.out)
        elif args.action_name == "abort":
            jobs.abort_job(lib, args.id)
            print(f"job {args.id} aborted", file=ctx.out)
        else:
            n = jobs.retry_job(lib, args.id)
            print(f"job {args.id} queued again: {counted(n, 'page')} to retry", file=ctx.out)
        if args.action_name in {"resume", "retry"}:  # a running worker takes it up
            print(f"without a worker running: archiver worker --once --job {args.id}", file=ctx.out)
    return 0


_PAST = {"pause": "paused"}


def _control_operation(args: argparse.Namespace, ctx: Context, lib: Library) -> int:
    """Jobs of the runtime are cancelled through their row and resumed by running them
    here (one whose process died was queued again); a mirror or verify that fell short is
    retried as the Jobs panel retries it (``lib.jobs.run_again``), then run here; they
    have no pages to pause."""
    from archiver_app.errors import InputError
    from archiver_app.jobs import CancelOutcome, request_cancel

    if args.action_name == "resume":
        return _resume_operation(args.id, ctx, lib)
    if args.action_name == "retry":  # as the Jobs panel's Retry: a new job, run here
        again = lib.jobs.run_again(args.id)
        print(f"job {args.id} queued again as job {again}", file=ctx.out)
        return _resume_operation(again, ctx, lib)
    if args.action_name != "abort":
        raise InputError(
            f"job {args.id} is not a crawl: it can be cancelled (job abort) or resumed, not "
            f"{_PAST[args.action_name]}; run its command again to redo it"
        )
    outcome = request_cancel(lib, args.id)
    text = {
        CancelOutcome.CANCELLED: f"job {args.id} cancelled",
        CancelOutcome.ASKED: f"job {args.id}: cancel asked; it stops at its next check",
        CancelOutcome.ENDED: f"job {args.id} had already ended",
    }[outcome]
    print(text, file=ctx.out)
    return 0


def _resume_operation(job_id: int, ctx: Context, lib: Library) -> int:
    """Run a queued job here (one interrupted job was queued again), in the foreground."""
    from archiver_app.commands.drives_cmd import progress_printer
    from archiver_app.jobs import default_registry, recover_interrupted, run_job
    from archiver_app.store.models import JobStatus

    registry = default_registry()
    recover_interrupted(lib, registry)
    run = run_job(lib, job_id, registry, progress=progress_printer(ctx.err))
    short = "; ".join(_shortfall(run.result)) if run.status == JobStatus.COMPLETED else ""
    print(f"job {job_id} {run.status}" + (f"; {short}" if short else ""), file=ctx.out)
    return 0 if run.status == JobStatus.COMPLETED and not short else 1


def _shortfall(result: object) -> list[str]:
    """What a completed run left undone, as its own command says it by exiting 1 (a
    mirror's "the retention policy is not met"): a resumed one exits 1 then too."""
    from archiver_app.jobs.results import result_failures, result_unmet

    failures = result_failures(result)
    return [f"{failures} failed"] * bool(failures) + result_unmet(result)


def cmd_rules(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.commands.crawl_cmd import rule_changes
    from archiver_app.crawl import jobs
    from archiver_app.errors import InputError

    changes = rule_changes(args)
    if args.ignore_sets is not None:
        changes["ignore_sets"] = [x.strip() for x in args.ignore_sets.split(",") if x.strip()]
    with ctx.open_library() as lib:
        if args.priority is not None:
            jobs.set_priority(lib, args.id, args.priority)
        if not changes and not args.ignore and not args.unignore:
            if args.priority is None:
                raise InputError("nothing to change: give --ignore, --concurrency ...")
            print(f"job {args.id} priority {args.priority}", file=ctx.out)
            return 0
        version = jobs.update_rules(
            lib, args.id, add_ignore=args.ignore, remove_ignore=args.unignore, **changes
        )
    print(f"job {args.id} rules v{version} saved; running workers pick them up", file=ctx.out)
    return 0


def cmd_log(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.crawl.api import job_detail, tail_log

    with ctx.open_library() as lib:
        job_detail(lib, args.id)  # a clear error for an unknown job
        for line in tail_log(lib, args.id, after_id=args.after, limit=1_000_000):
            print(f"{line.id} {line.at.isoformat(timespec='seconds')} {line.level} "
                  f"{display_text(line.message)}", file=ctx.out)  # fmt: skip
    return 0
