"""``archiver mirror [--dry-run]``: print the plan, then copy to the mounted drives.

Exit status: 0 when every file has the copies its policy asks for (after a dry run: would
have, once the plan is copied), 1 when any file is left short, whatever the reason (a
drive absent, busy, read-only, full or gone, a failed copy, a cancel); 2 for bad input.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from archiver_app.commands.drives_cmd import add_scan_root, progress_printer

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.mirror.run import MirrorResult


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("mirror", help="copy files to the mounted drives until the policy holds")
    p.add_argument("--dry-run", action="store_true", help="print the plan, copy nothing")
    p.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for a drive another run is writing to (default: skip)",
    )
    add_scan_root(p)
    p.set_defaults(func=cmd_mirror)


def cmd_mirror(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.jobs import JobKind
    from archiver_app.jobs.foreground import run_as_job
    from archiver_app.jobs.operations import mirror_config
    from archiver_app.mirror import run_mirror
    from archiver_app.mirror.director import Plan

    def show(plan: object) -> None:
        if isinstance(plan, Plan):
            for line in plan.describe():
                print(line, file=ctx.out, flush=True)

    with ctx.open_library() as lib:
        result: MirrorResult
        if args.dry_run:  # a plan only: nothing to record or resume
            result = run_mirror(lib, dry_run=True, scan_roots=args.scan_root, on_plan=show)
        else:
            result = run_as_job(
                lib,
                JobKind.MIRROR,
                mirror_config(scan_roots=args.scan_root, lock_wait=args.wait),
                name="Mirror to drives",
                progress=progress_printer(ctx.err),
                emit=show,
            )
    for line in result.describe():
        print(line, file=ctx.out)
    return 0 if result.policy_holds else 1
