"""``archiver capture URL [URL ...]``: capture pages with the browser into the library."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.tasks import ProgressUpdate


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "capture",
        help="capture web pages with a real browser",
        description="Capture each URL (WARC, screenshot, DOM and text) into the library. "
        "Use '-' to read URLs from standard input, one per line.",
    )
    p.add_argument("urls", nargs="+", metavar="URL", help="http(s) URL, or - for stdin")
    p.add_argument("--collection", default="default", metavar="SLUG", help="collection name")
    p.add_argument("--tag", action="append", default=[], metavar="T", help="tag (repeatable)")
    p.add_argument(
        "--timeout", type=float, default=60.0, metavar="SECONDS", help="time limit per page"
    )
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


def cmd_capture(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.capture.browser import require_browser
    from archiver_app.capture.engine import PageRules, capture_urls
    from archiver_app.errors import InputError
    from archiver_app.validation import validate_slug

    urls = read_urls(args.urls, sys.stdin)
    if not urls:
        raise InputError("no URLs to capture")
    validate_slug(args.collection)
    if args.timeout <= 0:
        raise InputError("--timeout must be a positive number of seconds")
    browser = require_browser()
    total = len(urls)

    def show(update: ProgressUpdate) -> None:
        print(f"[{update.done}/{total}] {update.message}", file=ctx.out, flush=True)

    with ctx.open_library(create=True) as lib:
        results = capture_urls(
            lib,
            urls,
            collection=args.collection,
            tags=args.tag,
            rules=PageRules(page_timeout=args.timeout),
            progress=show,
            browser=browser,
        )
    failed = [r for r in results if not r.ok]
    print(
        f"captured {total - len(failed)} of {total} page(s) into collection {args.collection!r}",
        file=ctx.out,
    )
    for r in failed:
        print(f"failed: {r.url}: {r.error}", file=ctx.err)
    return 1 if failed else 0
