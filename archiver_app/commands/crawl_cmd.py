"""``archiver crawl URL ...``: create a crawl job and (unless ``--queue``) run it now."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from archiver_app.commands import collection_slug
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.crawl.figures import PageFigures
    from archiver_app.crawl.inline import InlineRun
    from archiver_app.library import Library

SCOPES = ("page", "prefix", "host", "domain", "custom")


def add_rule_options(p: argparse.ArgumentParser) -> None:
    """Options shared by ``crawl`` and ``job rules``."""
    p.add_argument("--concurrency", type=int, metavar="N", help="pages at once (default 2)")
    p.add_argument(
        "--delay", metavar="S|MIN-MAX", help="politeness delay between pages of one host"
    )
    p.add_argument("--user-agent", metavar="UA", help="browser user agent")
    p.add_argument("--custom-js", metavar="FILE", help="JavaScript file run after each load")
    p.add_argument(
        "--autoscroll", action=argparse.BooleanOptionalAction, default=None,
        help="scroll pages to load lazy content (default on)",
    )  # fmt: skip
    p.add_argument(
        "--login-check", action=argparse.BooleanOptionalAction, default=None,
        help="fail a page that is a login form (default on; --no-login-check keeps it)",
    )  # fmt: skip


def register(sub: argparse._SubParsersAction[Any]) -> None:
    from archiver_app.commands import limit_or_none
    from archiver_app.crawl.spec import DEFAULT_DEPTH, DEFAULT_MAX_PAGES, DEFAULT_SCOPE

    p = sub.add_parser(
        "crawl",
        help="crawl a site: a job with a scope, limits and ignore patterns",
        description="Create a crawl job from seed URLs and run it now (or only queue it for "
        "'archiver worker' with --queue). Patterns are Python regexes searched in each URL. "
        f"With no options a crawl follows the seed's folder (--scope {DEFAULT_SCOPE}), "
        f"{DEFAULT_DEPTH} links deep, up to {DEFAULT_MAX_PAGES} pages, as the app's crawl "
        "dialog does. robots.txt is not obeyed and sitemaps are not read: exclude paths "
        "with --ignore, give more seeds as URLs.",
    )
    p.add_argument("urls", nargs="+", metavar="URL", help="seed URL(s)")
    p.add_argument(
        "--scope", choices=SCOPES, default=DEFAULT_SCOPE,
        help=f"what to follow (default {DEFAULT_SCOPE}: URLs under the seed's folder)",
    )  # fmt: skip
    p.add_argument(
        "--include", action="append", default=[], metavar="REGEX",
        help="also accept URLs matching REGEX (the whole scope with --scope custom)",
    )  # fmt: skip
    p.add_argument(
        "--ignore", action="append", default=[], metavar="REGEX", help="never capture these"
    )
    p.add_argument(
        "--no-default-ignores", action="store_true",
        help="turn off the built-in trap ignore sets (calendars, session ids, pagination...)",
    )  # fmt: skip
    p.add_argument(
        "--depth", type=limit_or_none(0), default=DEFAULT_DEPTH, metavar="N|none",
        help=f"maximum link depth (seeds are 0; default {DEFAULT_DEPTH}; none: no limit)",
    )  # fmt: skip
    p.add_argument(
        "--max-pages", type=limit_or_none(1), default=DEFAULT_MAX_PAGES, metavar="N|none",
        help=f"stop queueing after N pages (default {DEFAULT_MAX_PAGES}; none: no limit)",
    )  # fmt: skip
    p.add_argument(
        "--max-bytes", metavar="SIZE", help="stop after SIZE written (500M, 2G; default none)"
    )
    p.add_argument(
        "--max-duration", metavar="TIME", help="stop after TIME (90s, 30m, 2h; default none)"
    )
    p.add_argument(
        "--attempts", type=int, default=3, metavar="N", help="attempts per page (default 3)"
    )
    p.add_argument(
        "--timeout", type=float, default=60.0, metavar="SECONDS", help="per page (default 60)"
    )
    add_rule_options(p)
    p.add_argument("--collection", default="default", type=collection_slug, metavar="SLUG")
    p.add_argument("--tag", action="append", default=[], metavar="T", help="tag (repeatable)")
    p.add_argument("--name", default="", help="a name for the job")
    p.add_argument("--priority", type=int, default=0, help="lower runs first (niceness)")
    p.add_argument("--retries", type=int, default=2, metavar="N", help="automatic job retries")
    p.add_argument(
        "--schedule",
        metavar="WHEN",
        help="re-run the seeds regularly: hourly, daily, weekly or five cron fields "
        "('0 6 * * 1-5'); due runs start with `archiver worker` or `archiver watch run`",
    )
    p.add_argument(
        "--profile",
        metavar="NAME",
        help="capture in this browser profile, logged in (see `archiver login`)",
    )
    p.add_argument("--queue", action="store_true", help="only queue the job; do not run it here")
    p.set_defaults(func=cmd_crawl)


def rule_changes(args: argparse.Namespace) -> dict[str, Any]:
    """Rules fields set on the command line (only those given)."""
    from pathlib import Path

    from archiver_app.crawl.spec import parse_delay
    from archiver_app.errors import InputError

    changes: dict[str, Any] = {}
    if args.concurrency is not None:
        changes["concurrency"] = args.concurrency
    if args.delay is not None:
        changes["delay_min"], changes["delay_max"] = parse_delay(args.delay)
    if args.user_agent is not None:
        changes["user_agent"] = args.user_agent
    if args.custom_js is not None:
        try:
            changes["custom_js"] = Path(args.custom_js).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read --custom-js {args.custom_js}: {exc}") from exc
    if args.autoscroll is not None:
        changes["autoscroll"] = args.autoscroll
    if args.login_check is not None:
        changes["login_check"] = args.login_check
    return changes


def cmd_crawl(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.commands.capture_cmd import say_if_profile_busy
    from archiver_app.crawl.jobs import create_job
    from archiver_app.crawl.rules import Rules
    from archiver_app.crawl.spec import Limits, parse_duration, parse_size
    from archiver_app.errors import LibraryError
    from archiver_app.validation import validate_slug

    validate_slug(args.collection)
    rules = Rules().changed(
        accept=args.include,
        ignore=args.ignore,
        attempts=args.attempts,
        page_timeout=args.timeout,
        **({"ignore_sets": ()} if args.no_default_ignores else {}),
        **rule_changes(args),
    )
    limits = Limits(
        max_depth=args.depth,
        max_pages=args.max_pages,
        max_bytes=parse_size(args.max_bytes) if args.max_bytes else None,
        max_duration=parse_duration(args.max_duration) if args.max_duration else None,
    )
    with ctx.open_library(create=True) as lib:
        job_id = create_job(
            lib, args.urls, scope=args.scope, rules=rules, limits=limits,
            collection=args.collection, tags=args.tag, name=args.name, priority=args.priority,
            schedule=args.schedule, max_retries=args.retries, profile=args.profile,
        )  # fmt: skip
        print(
            f"job {job_id} queued: scope {args.scope}, {counted(len(args.urls), 'seed')}",
            file=ctx.out,
        )
        if args.queue:
            print("run it with: archiver worker", file=ctx.out)
            return 0
        say_if_profile_busy(lib, args.profile, ctx, job_id)
        run = run_and_report(lib, job_id, ctx, concurrency=rules.concurrency)
    if run.folder_problem is not None:  # as `archiver worker` (docs/shared-library.md)
        print(f"archiver: error: {run.folder_problem}", file=ctx.err)
        return LibraryError.exit_code
    return 0 if run.status in ("completed", "indexed") else 1


def run_and_report(
    lib: Library, job_id: int, ctx: Context, *, concurrency: int, total: int | None = None
) -> InlineRun:
    """Run the job here with a progress line per page, then print the summary."""
    from archiver_app.capture.browser import require_browser
    from archiver_app.crawl.api import job_detail
    from archiver_app.crawl.inline import run_job_inline
    from archiver_app.tasks import ProgressUpdate

    require_browser()  # a clear error before anything starts

    def show(update: ProgressUpdate) -> None:
        of = f"/{total}" if total else ""
        print(f"[{update.done}{of}] {update.message}", file=ctx.out, flush=True)

    run = run_job_inline(lib, job_id, concurrency=concurrency, progress=show)
    detail = job_detail(lib, job_id)
    print(end_line(job_id, run.status, detail.summary.pages), file=ctx.out)
    if detail.coverage_md:
        print(f"coverage report: {lib.root / detail.coverage_md}", file=ctx.out)
    return run


def end_line(job_id: int, status: str, pages: PageFigures | None) -> str:
    """``job 5 aborted: 8 captured, 0 failed, 3 excluded, 9 not attempted (aborted)``: the
    figures and words of the job's coverage report, ``archiver jobs`` and ``job show``."""
    from archiver_app.crawl.figures import PageFigures

    return f"job {job_id} {status}: {(pages or PageFigures()).summary()}"
