"""``archiver migrate`` (background layout migration) and ``archiver update`` (reconcile)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from archiver_app.commands import at_least
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.tasks import ProgressUpdate


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "migrate",
        help="move old-layout snapshots and registered imports to the current layout",
        description="Imports registered sources (e.g. ArchiveBox data folders) and moves "
        "snapshots of older folder layouts to the current one, in batches, resumably. "
        "Safe to interrupt at any moment.",
    )
    p.add_argument("--continuous", action="store_true", help="keep running; Ctrl-C stops it")
    p.add_argument(  # checked here: a bad size must not leave a failed job behind
        "--batch-size", type=at_least(1), default=200, metavar="N", help="per commit (200)"
    )
    p.add_argument(
        "--resume-from",
        metavar="CURSOR",
        help="start after this cursor (<fs_version>:<snapshot id>, as printed)",
    )
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser(
        "update",
        help="reconcile index.json files with the database; merge exact duplicates",
        description="Runs a migration pass, rewrites every index.json from the database "
        "(merging what the files know), and merges snapshots with the same URL and time.",
    )
    p.add_argument(
        "--import-orphans",
        action="store_true",
        help="also import snapshot folders that have no database row; folders that cannot "
        "be understood are moved to invalid/<yyyymmdd>/",
    )
    p.set_defaults(func=cmd_update)


def _printer(ctx: Context, quiet: bool) -> Any:
    from archiver_app.tasks import ThrottledProgress

    def show(update: ProgressUpdate) -> None:
        total = f"/{update.total}" if update.total is not None else ""
        print(f"{update.message}: {update.done}{total}", file=ctx.err, flush=True)

    return ThrottledProgress(None if quiet else show, interval=1.0)


def cmd_migrate(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.jobs import JobKind
    from archiver_app.jobs.foreground import run_as_job
    from archiver_app.jobs.operations import migrate_config
    from archiver_app.layout.migrator import MigrationReport
    from archiver_app.tasks import CancelToken

    cancel = CancelToken()
    with ctx.open_library() as lib:
        try:
            report: MigrationReport = run_as_job(
                lib,
                JobKind.MIGRATE,
                migrate_config(
                    batch_size=args.batch_size,
                    resume_from=args.resume_from,
                    continuous=args.continuous,
                ),
                name="Layout migration",
                progress=_printer(ctx, args.quiet),
                cancel=cancel,
            )
        except KeyboardInterrupt:
            cancel.cancel()
            raise
    imp = report.imported
    print(
        f"migrated {counted(report.migrated, 'snapshot')} ({counted(report.files, 'file')}, "
        f"{counted(report.bytes, 'byte')}); "
        f"imported {imp.imported}, merged {imp.merged}, set aside {imp.invalid} as invalid; "
        f"{report.remaining} left at older layouts",
        file=ctx.out,
    )
    for line in report.failed + imp.failed:
        print(f"failed: {line}", file=ctx.out)
    for line in imp.refused:
        print(f"refused: {line}", file=ctx.out)
    if report.cursor:
        print(f"cursor: {report.cursor}", file=ctx.out)
    return 1 if report.failed or imp.failed else 0


def cmd_update(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.layout.update import update_library

    with ctx.open_library() as lib:
        report = update_library(
            lib, with_orphans=args.import_orphans, progress=_printer(ctx, False)
        )
    if report.orphans is not None:
        o = report.orphans
        print(
            f"orphans: scanned {o.scanned} folders, imported {o.imported}, merged {o.merged}, "
            f"salvaged {o.salvaged} interrupted captures, "
            f"set aside {len(o.invalid)} as invalid",
            file=ctx.out,
        )
        for line in o.invalid:
            print(f"invalid: {line}", file=ctx.out)
        for line in o.stray + o.refused:
            print(f"refused: {line}", file=ctx.out)
    m = report.migration
    if m is not None:
        print(
            f"migrated {counted(m.migrated, 'snapshot')}; {m.remaining} left at older layouts",
            file=ctx.out,
        )
    print(
        f"reconciled {report.reconciled}, rewrote {report.rewritten} missing index.json, "
        f"merged {report.duplicates_merged} duplicates",
        file=ctx.out,
    )
    for line in report.problems:
        print(f"problem: {line}", file=ctx.out)
    return 0
