"""``archiver capture URL [URL ...]``: capture pages with the browser into the library."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from archiver_app.commands import collection_slug
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.library import Library
    from archiver_app.tasks import ProgressUpdate


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "capture",
        help="capture web pages with a real browser",
        description="Capture each URL (WARC, screenshot, DOM and text) into the library. "
        "Use '-' to read URLs from standard input, one per line.",
    )
    p.add_argument("urls", nargs="+", metavar="URL", help="http(s) URL, or - for stdin")
    p.add_argument(
        "--collection",
        default="default",
        type=collection_slug,
        metavar="SLUG",
        help="collection name",
    )
    p.add_argument("--tag", action="append", default=[], metavar="T", help="tag (repeatable)")
    p.add_argument(
        "--timeout", type=float, default=60.0, metavar="SECONDS", help="time limit per page"
    )
    p.add_argument(
        "--profile",
        metavar="NAME",
        help="capture in this browser profile, logged in (see `archiver login`)",
    )
    p.add_argument(
        "--no-login-check", dest="login_check", action="store_false",
        help="keep a page that looks like a login form (a public page with a password field)",
    )  # fmt: skip
    p.set_defaults(func=cmd_capture)


def read_urls(args: list[str], stdin: Any) -> list[str]:
    """The URLs of the command line, with ``-`` replaced by the lines of ``stdin``."""
    urls: list[str] = []
    for arg in args:
        if arg == "-":
            for raw in stdin:
                line = raw.strip()
                if line and not line.startswith("#"):
                    urls.append(line)
        else:
            urls.append(arg)
    return urls


def say_if_profile_busy(
    lib: Library, profile: str | None, ctx: Context, own_job: int | None = None
) -> None:
    """Say at once that the capture waits for ``profile`` when something holds it, and
    what (the running job that captures in it, else a login window or another program):
    it waits up to five minutes, silently otherwise. ``own_job``: the caller's job."""
    from archiver_app.capture.contexts import PROFILE_WAIT_SECONDS

    if not profile or not lib.profiles.get(profile).in_use:
        return
    jobs = [i for i in lib.profiles.jobs_using(profile) if i != own_job]
    holder = f"job {', '.join(map(str, jobs))}" if jobs else "a login window or another capture"
    print(
        f"waiting for profile {profile!r}, in use by {holder}: up to"
        f" {PROFILE_WAIT_SECONDS / 60:.0f} minutes (Ctrl+C stops)",
        file=ctx.err,
        flush=True,
    )


def cmd_capture(args: argparse.Namespace, ctx: Context) -> int:
    """Capture the URLs as one job of scope ``page``, run now by an inline worker.

    The same machinery as ``archiver crawl`` (queue, attempts, counters, job log, coverage
    report); URLs that cannot be captured at all are reported first and the rest still run.
    """
    from archiver_app.capture.browser import require_browser
    from archiver_app.crawl.api import page_list
    from archiver_app.crawl.inline import CAPTURE_CONCURRENCY, create_capture_job, run_job_inline
    from archiver_app.errors import InputError, LibraryError
    from archiver_app.urls import display_url
    from archiver_app.validation import validate_slug

    urls = read_urls(args.urls, sys.stdin)
    if not urls:
        raise InputError("no URLs to capture")
    validate_slug(args.collection)
    if args.timeout <= 0:
        raise InputError("--timeout must be a positive number of seconds")
    seeds, refused = _seeds(urls)
    require_browser()
    total = len(seeds) + len(refused)
    for done, (url, error) in enumerate(refused, 1):
        print(f"[{done}/{total}] failed {url}: {error}", file=ctx.out, flush=True)

    def show(update: ProgressUpdate) -> None:
        print(f"[{update.done + len(refused)}/{total}] {update.message}", file=ctx.out, flush=True)

    failed = list(refused)
    with ctx.open_library(create=True) as lib:
        if seeds:
            job_id = create_capture_job(
                lib,
                seeds,
                collection=args.collection,
                tags=args.tag,
                page_timeout=args.timeout,
                profile=args.profile,
                login_check=args.login_check,
            )
            if args.profile:
                print(
                    f"capturing with profile {args.profile!r}: the captures may show private data",
                    file=ctx.out,
                    flush=True,
                )
                say_if_profile_busy(lib, args.profile, ctx, job_id)
            run = run_job_inline(lib, job_id, concurrency=CAPTURE_CONCURRENCY, progress=show)
            if run.folder_problem is not None:  # as `archiver worker` and `archiver crawl`
                print(f"archiver: error: {run.folder_problem}", file=ctx.err)
                return LibraryError.exit_code
            failed += [
                (display_url(p.url), p.reason or "not captured")
                for p in page_list(lib, job_id, states=["failed", "ready", "claimed"])
            ]
    print(
        f"captured {total - len(failed)} of {counted(total, 'page')} into collection "
        f"{args.collection!r}",
        file=ctx.out,
    )
    for url, error in failed:
        print(f"failed: {url}: {error}", file=ctx.err)
    return 1 if failed else 0


def _seeds(urls: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The addresses to capture, normalised and each once, and those refused with why."""
    from archiver_app.errors import InputError
    from archiver_app.urls import normalize_url
    from archiver_app.validation import validate_capture_url

    seeds: list[str] = []
    refused: list[tuple[str, str]] = []
    for url in urls:
        try:
            normal = normalize_url(validate_capture_url(url))
        except InputError as exc:
            refused.append((url, exc.message))
            continue
        if normal is None:
            refused.append((url, f"malformed URL {url!r}"))
        elif normal not in seeds:
            seeds.append(normal)
    return seeds, refused
