"""``archiver export``: a collection, a tag or a search result as WACZ or a plain folder."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("export", help="export as WACZ or as a folder of WARC + CDXJ + pages")
    p.add_argument("--format", choices=["wacz", "folder"], default="wacz")
    p.add_argument("--collection", metavar="SLUG")
    p.add_argument("--tag", metavar="T")
    p.add_argument("--query", metavar="Q", help="only the snapshots this search finds")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="PATH")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing PATH: a file, or for --format folder an empty folder or an "
        "earlier export (never the library or a folder holding it)",
    )
    p.add_argument(
        "--sign",
        action="store_true",
        help="sign the WACZ with your key (made on first use in your configuration folder); "
        "check it with `archiver verify-export`",
    )
    p.add_argument(
        "--keep-private-headers",
        action="store_true",
        help="keep Cookie, Authorization and Set-Cookie headers in the export (left out by "
        "default: they can let others act as you on the sites you were logged in to)",
    )
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.export.writer import ExportResult
    from archiver_app.jobs import JobKind
    from archiver_app.jobs.foreground import run_as_job
    from archiver_app.jobs.operations import export_config

    with ctx.open_library() as lib:
        result: ExportResult = run_as_job(
            lib,
            JobKind.EXPORT,
            export_config(
                args.output,
                fmt=args.format,
                collection=args.collection,
                tag=args.tag,
                query=args.query,
                overwrite=args.overwrite,
                sign=args.sign,
                keep_private_headers=args.keep_private_headers,
            ),
            name=f"Export to {args.output}",
            collection=args.collection or "default",
        )
    print(
        f"wrote {result.path} ({result.format}): {result.pages} pages, {result.records} "
        f"records, {result.bytes} bytes of WARC"
        + (f", {result.originals_added} revisit originals added" if result.originals_added else ""),
        file=ctx.out,
    )
    if args.sign:
        from archiver_app.export.signing import fingerprint, verify_wacz

        report = verify_wacz(result.path)
        who = fingerprint(report.public_key) if report.public_key else "?"
        print(f"signed with key {who}", file=ctx.out)
    for problem in result.problems:
        print(f"  ! {problem}", file=ctx.err)
    return 1 if result.problems else 0
