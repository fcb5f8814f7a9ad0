"""``archiver browse [URL]``: capture while browsing, in a visible browser, until stopped.

Runs the ``browse`` job in the foreground (:mod:`archiver_app.capture.browse`): each page
is printed as it is saved. Ctrl+C or closing the browser ends the session with every page
saved; a second Ctrl+C interrupts at once (what was not saved is reported as interrupted
at the next start).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from archiver_app.commands import collection_slug
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "browse",
        help="capture while browsing: every page you visit in a browser window is saved",
        description="Open a browser window; every page you visit there (and everything it "
        "loads as you scroll, click and expand) is saved as a capture when you leave it. "
        "Stop with Ctrl+C or by closing the browser.",
    )
    p.add_argument("url", nargs="?", metavar="URL", help="page to open first")
    p.add_argument(
        "--profile", metavar="NAME", help="browse on this logged-in browser profile of the library"
    )
    p.add_argument(
        "--collection",
        default="default",
        type=collection_slug,
        metavar="SLUG",
        help="collection name",
    )
    p.set_defaults(func=cmd_browse)


def cmd_browse(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.capture.browse import BrowseReport, BrowseSession, SavedPage
    from archiver_app.commands._signals import first_ctrl_c
    from archiver_app.jobs import JobKind
    from archiver_app.jobs.foreground import run_as_job
    from archiver_app.jobs.operations import browse_config
    from archiver_app.tasks import CancelToken
    from archiver_app.validation import validate_capture_url, validate_slug

    validate_slug(args.collection)
    url = validate_capture_url(args.url) if args.url else None
    cancel = CancelToken()

    def stop() -> None:
        print("stopping: saving the pages still open…", file=ctx.out, flush=True)
        cancel.cancel()

    def show(event: object) -> None:
        if isinstance(event, BrowseSession):
            print(
                "browsing: each page is saved when you leave it; "
                "press Ctrl+C or close the browser to stop",
                file=ctx.out,
                flush=True,
            )
        elif isinstance(event, SavedPage):
            if event.ok:
                title = f" — {event.title}" if event.title else ""
                line = f"saved {event.url}{title} ({counted(event.responses, 'response')})"
            else:
                line = f"failed {event.url}: {event.error}"
            print(line, file=ctx.out, flush=True)

    with first_ctrl_c(stop), ctx.open_library(create=True) as lib:
        report: BrowseReport = run_as_job(
            lib,
            JobKind.BROWSE,
            browse_config(start_url=url, collection=args.collection, profile=args.profile),
            name=f"Browsing{f' from {url}' if url else ''}",
            collection=args.collection,
            emit=show,
            cancel=cancel,
        )
    summary, *rest = report.describe()
    print(summary, file=ctx.out)
    for line in rest:  # the pages that failed, then the session's notes
        print(line, file=ctx.err)
    return 1 if any(not page.ok for page in report.pages) else 0
