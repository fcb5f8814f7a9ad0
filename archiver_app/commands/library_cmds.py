"""``archiver init``, ``info``, ``doctor``, ``move-library`` and ``library convert|attach``."""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, Any

from archiver_app.commands import at_least
from archiver_app.paths import LIBRARY_ENV
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.tasks import Progress, ProgressUpdate


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("init", help="create a library (or check an existing one)")
    p.add_argument(
        "--force",
        action="store_true",
        help="make a new library even in a folder this computer's library was moved away from",
    )
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("info", help="show what a library holds")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("doctor", help="check the library, the browser, Qt and disk space")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser(
        "move-library",
        help="move the library folder elsewhere (verified copy across disks) and open it there",
    )
    p.add_argument("dest", help="the new library folder (must not exist, or be empty)")
    p.set_defaults(func=cmd_move_library)

    group = sub.add_parser("library", help="move the database between SQLite and PostgreSQL")
    lib_sub = group.add_subparsers(dest="library_command", metavar="ACTION", required=True)
    p = lib_sub.add_parser(
        "convert",
        help="copy the library's database to PostgreSQL or back to SQLite, verified row by "
        "row, and switch to it (run again to resume a copy that stopped)",
    )
    p.add_argument("--to", required=True, metavar="URL", help="postgresql://... or sqlite")
    p.add_argument("--batch", type=at_least(1), default=2000, help="rows per committed batch")
    p.add_argument(
        "--start-over",
        action="store_true",
        help="drop the unfinished copy of this library in the target and copy from the start "
        "(when the library changed since the copy stopped)",
    )
    p.set_defaults(func=cmd_convert)
    p = lib_sub.add_parser(
        "attach",
        help="make an empty folder the folder of the shared library in --database-url "
        "(only while it has no captures)",
    )
    p.add_argument("path", help="the empty folder")
    p.set_defaults(func=cmd_attach)


def cmd_init(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.errors import LibraryError
    from archiver_app.known_libraries import known_library, moved_message, moved_to

    root = ctx.library_root
    existed = (root / "library.json").exists()
    moved = None if existed or args.force else moved_to(root)
    if moved is not None:  # not a new library where the user's own went from: say where
        raise LibraryError(
            f"{moved_message(root, moved)} (to start a new, empty library there instead: "
            f"archiver init --force --library {root})"
        )
    before = None if existed else known_library(root)
    with ctx.open_library(create=True, announce=False, start_over=True) as lib:
        verb = "opened existing" if existed else "created"  # it says so itself
        print(f"{verb} library {lib.id} at {lib.root}", file=ctx.out)
        if before is not None and before != lib.id:
            print(
                f"archiver: the library {before} this computer opened there before is not"
                " there now; this is a new one",
                file=ctx.err,
            )
    return 0


def cmd_info(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.api.status import status_figures

    with ctx.open_library() as lib:
        info = lib.info()
        figures = status_figures(lib, lib.clock())
    fields = {
        "library": str(info.root),
        "id": info.library_id,
        "created": info.created,
        "layout": info.layout_version,
        "schema": info.schema_revision,
        "database": info.database_url,
        "collections": info.collections,
        "snapshots": info.snapshots,
        "snapshot_states": info.by_state,
        # the GUI status bar's figures
        "migrated": figures.migration_done,
        "files_safe": figures.files_safe,
        "files_at_risk": figures.files_at_risk,
        "copies_wanted": figures.policy_copies,  # the library default's
        "policy": figures.policy_wanted,  # what files safe and at risk are counted against
    }
    if args.json:
        print(json.dumps(fields, indent=2), file=ctx.out)
    else:
        del fields["snapshot_states"]
        if set(info.by_state) - {"complete"}:  # failed or pending ones are counted too
            each = ", ".join(f"{n} {state}" for state, n in sorted(info.by_state.items()))
            fields["snapshots"] = f"{info.snapshots} ({each})"
        width = max(map(len, fields))
        for key, value in fields.items():
            print(f"{key + ':':<{width + 1}} {value}", file=ctx.out)
    return 0


def cmd_doctor(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.diagnostics import report_lines, run_doctor

    checks = run_doctor(ctx.library_root)
    for line in report_lines(checks):
        print(line, file=ctx.out)
    return 0 if all(c.ok for c in checks) else 1


def _tenths(ctx: Context) -> Progress:
    """A progress callback that prints a line at each tenth of the way."""
    last = [0.0]

    def progress(update: ProgressUpdate) -> None:
        fraction = update.fraction or 0.0
        if fraction - last[0] >= 0.1 or fraction >= 1.0:
            last[0] = fraction
            print(f"{fraction:4.0%} {update.message}", file=ctx.out, flush=True)

    return progress


def cmd_move_library(args: argparse.Namespace, ctx: Context) -> int:
    from pathlib import Path

    from archiver_app.library_move import move_library

    progress = _tenths(ctx)
    result = move_library(
        ctx.library_root, Path(args.dest), progress=progress, database_url=ctx.database_url
    )
    how = "renamed" if result.renamed else f"{counted(result.files, 'file')} copied and verified"
    if result.reused:
        how += f", {result.reused} of them by an interrupted earlier move"
    print(f"moved the library to {result.root} ({how})", file=ctx.out)
    for rel in result.left_behind:
        print(f"could not remove the old {rel}; remove it by hand", file=ctx.out)
    # The app and a bare `archiver` open the new place; a named old one is not there.
    if args.library:
        print(f"from now on, give --library {result.root}", file=ctx.out)
    elif os.environ.get(LIBRARY_ENV):
        print(f"{LIBRARY_ENV} names the old folder: set it to {result.root}", file=ctx.out)
    return 0


def cmd_convert(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.library_convert import convert_library

    progress = _tenths(ctx)
    result = convert_library(
        ctx.library_root,
        args.to,
        database_url=ctx.database_url,
        batch=args.batch,
        progress=progress,
        start_over=args.start_over,
    )
    for check in result.tables:
        print(f"verified {check.name}: {check.rows} rows, sha256 {check.digest[:16]}", file=ctx.out)
    resumed = " (resumed)" if result.resumed else ""
    print(f"the library now uses {result.database}{resumed}", file=ctx.out)
    print(f"its previous database is kept: {result.old_database}", file=ctx.out)
    return 0


def cmd_attach(args: argparse.Namespace, ctx: Context) -> int:
    from pathlib import Path

    from archiver_app.errors import InputError
    from archiver_app.library import Library
    from archiver_app.library_share import attach_folder
    from archiver_app.store.engine import make_engine

    if not ctx.database_url:
        raise InputError("attach needs the shared library's --database-url")
    engine = make_engine(ctx.database_url)
    try:
        attach_folder(engine, Path(args.path).expanduser().absolute())
    finally:
        engine.dispose()
    with Library.open(Path(args.path), create=False, database_url=ctx.database_url) as lib:
        print(f"attached {lib.root} to library {lib.id}", file=ctx.out)
    return 0
