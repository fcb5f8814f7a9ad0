"""``archiver offload --older-than 1y``: free laptop space once drives hold enough copies."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from archiver_app.commands.drives_cmd import add_scan_root, progress_printer

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("offload", help="free laptop space for old snapshots safely on drives")
    p.add_argument(
        "--older-than",
        required=True,
        metavar="AGE",
        help="snapshots captured before now minus AGE: 1y (years), 6m (months), 2w, 30d, 12h",
    )
    p.add_argument("--dry-run", action="store_true", help="say what would be freed")
    add_scan_root(p)
    p.set_defaults(func=cmd_offload)


def cmd_offload(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.jobs import JobKind
    from archiver_app.jobs.foreground import run_as_job
    from archiver_app.jobs.operations import offload_config
    from archiver_app.mirror.offload import OffloadResult, offload, parse_age

    age = parse_age(args.older_than)
    with ctx.open_library() as lib:
        r: OffloadResult
        if args.dry_run:  # a report only: nothing to record or resume
            r = offload(lib, age, dry_run=True, scan_roots=args.scan_root)
        else:
            r = run_as_job(
                lib,
                JobKind.OFFLOAD,
                offload_config(age, scan_roots=args.scan_root),
                name=f"Free space: older than {args.older_than}",
                progress=progress_printer(ctx.err),
            )
    for line in r.describe():
        print(line, file=ctx.out)
    return 0
