"""``archiver import PATH ...``: WARC/ARC/WACZ files and folders, bookmarks, URL lists."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archiver_app.commands import collection_slug
from archiver_app.errors import InputError
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.importers.outcome import FileOutcome


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "import",
        help="import WARC/ARC/WACZ files, bookmarks, URL lists or browser history",
        description="WARC/ARC/WACZ files and folders are indexed into the library; "
        "bookmarks, URL lists ('-' reads standard input) and browser history files queue "
        "capture jobs.",
    )
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    p.add_argument(
        "--collection",
        type=collection_slug,
        metavar="SLUG",
        help="the collection to import into (default: 'default', or for an Archiver export "
        "the collections its pages list names)",
    )
    p.add_argument("--tag", action="append", default=[], metavar="T", help="tag every import")
    p.add_argument(
        "--link",
        action="store_true",
        help="index WARC/ARC files where they are instead of copying them into the library",
    )
    p.add_argument(
        "--archivebox",
        type=Path,
        metavar="PATH",
        help="register an ArchiveBox data folder for (lazy) import",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per input file")
    p.set_defaults(func=cmd_import)


def _print(outcome: FileOutcome, ctx: Context, as_json: bool) -> None:
    if as_json:
        import json

        from archiver_app.jobs.kinds import to_plain

        print(
            json.dumps(
                {
                    "path": str(outcome.path),
                    "kind": outcome.kind,
                    "state": str(outcome.state),
                    "reason": outcome.reason,
                    "records": outcome.records,
                    "pages": outcome.pages,
                    "urls": outcome.urls,
                    "job_id": outcome.job_id,
                    "folder": outcome.folder,
                    "problems": outcome.problems,
                    "notes": outcome.notes,
                    "package": to_plain(outcome.package),  # a WACZ's differences, signature
                }
            ),
            file=ctx.out,
        )
        return
    what = {
        "imported": f"{counted(outcome.records, 'record')}, {counted(outcome.pages, 'page')}"
        + (f"; {outcome.reason}" if outcome.reason else ""),
        "queued": f"{counted(outcome.urls, 'URL')} queued as capture job {outcome.job_id}",
        "skipped": outcome.reason,
        "failed": outcome.reason,
    }[str(outcome.state)]
    print(f"{outcome.state:<8} {outcome.kind:<9} {outcome.path}: {what}", file=ctx.out)
    for note in outcome.notes:  # good news, before any problem
        print(f"         {note}", file=ctx.out)
    problems = [p for p in outcome.problems if p != what]  # the reason is not said twice
    for problem in problems[:20]:
        print(f"         - {problem}", file=ctx.out)
    if len(problems) > 20:
        print(f"         - ... and {len(problems) - 20} more", file=ctx.out)


def cmd_import(args: argparse.Namespace, ctx: Context) -> int:
    if not args.paths and args.archivebox is None:
        raise InputError("nothing to import: give one or more paths, '-', or --archivebox PATH")
    with ctx.open_library(create=True) as lib:
        if args.archivebox is not None:
            from archiver_app.layout.archivebox import register_archivebox
            from archiver_app.library import DEFAULT_COLLECTION

            source = register_archivebox(
                lib,
                args.archivebox,
                collection=args.collection or DEFAULT_COLLECTION,
                mode="link" if args.link else "copy",
            )
            print(
                f"registered ArchiveBox folder {args.archivebox} (import source {source.id}); "
                "its snapshots come in while the app is open and idle, or now with:"
                " archiver migrate",
                file=ctx.out,
            )
        if not args.paths:
            return 0
        from archiver_app.importers.outcome import FileOutcome
        from archiver_app.importers.run import STDIN
        from archiver_app.jobs import JobKind
        from archiver_app.jobs.foreground import run_as_job
        from archiver_app.jobs.operations import import_config

        def show(event: object) -> None:
            if isinstance(event, FileOutcome):
                _print(event, ctx, args.json)

        # what '-' reads is taken in now, so the job holds everything it needs to resume
        stdin_text = sys.stdin.read() if STDIN in args.paths else None
        report = run_as_job(
            lib,
            JobKind.IMPORT,
            import_config(
                args.paths,
                collection=args.collection,
                link=args.link,
                tags=args.tag,
                stdin_text=stdin_text,
            ),
            name=f"Import of {args.paths[0]}"
            + (f" (+{len(args.paths) - 1})" if len(args.paths) > 1 else ""),
            collection=args.collection,
            emit=show,
        )
    if not args.json:
        print(report.describe()[0], file=ctx.out)
        if any(o.job_id is not None for o in report.outcomes):
            print("run the queued captures: archiver worker --once (or Run in the app's Jobs)",
                  file=ctx.out)  # fmt: skip
    return 1 if report.failed else 0
