"""``archiver drives``: list, add, scan, verify (scrub), retire and reinstate destination
drives."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from archiver_app.units import counted

if TYPE_CHECKING:
    from datetime import datetime

    from archiver_app.cli import Context
    from archiver_app.tasks import ProgressUpdate


def add_scan_root(p: argparse.ArgumentParser, *, sub: bool = False) -> None:
    """``--scan-root``; on a subcommand (``sub``) its absence keeps what ``drives
    --scan-root`` gave before it (argparse would put None over it)."""
    p.add_argument(
        "--scan-root",
        metavar="PATH",
        action="append",
        type=Path,
        default=argparse.SUPPRESS if sub else None,
        help="also look for drives in PATH (its sub-folders, as in /media); repeatable",
    )


def progress_printer(stream: TextIO, interval: float = 1.0) -> Any:
    """A throttled progress sink printing one line per update (with the ETA)."""
    from archiver_app.tasks import ThrottledProgress

    def show(update: ProgressUpdate) -> None:
        print(update.message, file=stream, flush=True)

    return ThrottledProgress(show, interval=interval)


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("drives", help="destination drives: list, add, scan, verify, retire")
    add_scan_root(p)
    p.set_defaults(func=cmd_list)
    dsub = p.add_subparsers(dest="drives_command", metavar="ACTION")

    q = dsub.add_parser("list", help="every destination, mounted or not, with its counts")
    add_scan_root(q, sub=True)
    q.set_defaults(func=cmd_list)

    q = dsub.add_parser("add", help="mark a folder or mounted drive as a destination")
    q.add_argument("path", metavar="PATH")
    q.add_argument("--label", required=True, metavar="NAME", help="a name you will recognise")
    q.set_defaults(func=cmd_add)

    q = dsub.add_parser("scan", help="look for known and unknown drives on the mount points")
    add_scan_root(q, sub=True)
    q.set_defaults(func=cmd_scan)

    q = dsub.add_parser("verify", help="re-hash every copy on a drive and repair bad ones")
    q.add_argument("name", nargs="?", metavar="NAME", help="drive label (default: all mounted)")
    q.add_argument(
        "--laptop",
        action="store_true",
        help="verify this computer's copies instead (repaired from mounted drives)",
    )
    q.add_argument("--no-repair", action="store_true", help="only report, do not repair")
    add_scan_root(q, sub=True)
    q.set_defaults(func=cmd_verify)

    q = dsub.add_parser(
        "retire",
        help="take a drive out of use (lost, broken or put away): its copies stop counting"
        " and the next mirror makes them again on the drives in use",
    )
    q.add_argument("name", metavar="NAME", help="drive label")
    q.add_argument(
        "--force",
        action="store_true",
        help="retire it even though some offloaded files have their only copy on it (the drive"
        " is lost: they are recorded as lost)",
    )
    q.set_defaults(func=cmd_retire)

    q = dsub.add_parser("reinstate", help="put a retired drive back in use")
    q.add_argument("name", metavar="NAME", help="drive label")
    q.set_defaults(func=cmd_reinstate)


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value is not None else "never"


def cmd_list(args: argparse.Namespace, ctx: Context) -> int:
    """The drives panel's figures (``lib.drives``), as text."""
    from archiver_app.api.status import status_figures
    from archiver_app.mirror.outcomes import StopReason
    from archiver_app.mirror.progress import human_bytes

    with ctx.open_library() as lib:
        rows = lib.drives.list(scan_roots=args.scan_root)
        laptop = lib.drives.laptop()
        figures = status_figures(lib, lib.clock())
    print(
        f"this computer: {counted(laptop.present, 'file')} present, {laptop.corrupted} corrupted,"
        f" {laptop.offloaded} offloaded; last verified {_when(laptop.last_verified_at)}"
        f"{' (due)' if laptop.scrub_due else ''}",
        file=ctx.out,
    )
    if not rows:
        print(
            "no destinations yet; add one with: archiver drives add PATH --label NAME", file=ctx.out
        )
        return 0
    for d in rows:
        where = str(d.mount_path) if d.mounted else "absent" if d.enabled else "retired"
        free = f", {human_bytes(d.free_bytes)} free" if d.free_bytes is not None else ""
        if free and d.capacity_bytes:
            free += f" of {human_bytes(d.capacity_bytes)}"
        busy = ", busy (not safe to unplug)" if d.busy else ""
        if d.library_folder_missing:
            busy += (
                f"\n    {StopReason.NO_LIBRARY_FOLDER.message} Until it is back its copies"
                " cannot be read and none counts as safe; the figures below are as last"
                " recorded."
            )
        print(
            f"{d.label}: {where}{free}{busy}\n"
            f"    {d.present} present, {d.missing} not here, {d.corrupted} corrupted;"
            f" last verified {_when(d.last_verified_at)}{' (due)' if d.scrub_due else ''}",
            file=ctx.out,
        )
    # "not here" is no loss by itself (the policy may keep those files on another drive):
    # what counts is whether each file has its copies, as the app's status bar says.
    print(
        f"{counted(figures.files_safe, 'file')} safe, {figures.files_at_risk} at risk"
        f" ({figures.policy_wanted})",
        file=ctx.out,
    )
    return 0


def cmd_add(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.mirror import add_destination

    with ctx.open_library() as lib:
        row = add_destination(lib, args.path, args.label)
    print(f"added destination {row.label!r} ({row.uuid}) at {row.last_mount_path}", file=ctx.out)
    return 0


def cmd_scan(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.mirror.destinations import find_mounted, unknown_markers

    with ctx.open_library() as lib:
        mounted = find_mounted(lib, scan_roots=args.scan_root, rescan=True)
        unknown = unknown_markers(lib, args.scan_root)
    for d in mounted.values():
        print(f"{d.label}: mounted at {d.mount}", file=ctx.out)
    for uuid, path in unknown.items():
        print(
            f"unknown destination {uuid} at {path} (add it: archiver drives add {path} "
            "--label NAME)",
            file=ctx.out,
        )
    if not mounted and not unknown:
        print("no destination drive is mounted", file=ctx.out)
    return 0


def cmd_verify(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.errors import InputError
    from archiver_app.jobs import JobKind
    from archiver_app.jobs.foreground import run_as_job
    from archiver_app.jobs.operations import verify_config

    if args.laptop and args.name:
        raise InputError("give a drive NAME or --laptop, not both")
    with ctx.open_library() as lib:
        results = run_as_job(
            lib,
            JobKind.VERIFY,
            verify_config(
                args.name, laptop=args.laptop, repair=not args.no_repair, scan_roots=args.scan_root
            ),
            name=f"Verify {'this computer' if args.laptop else args.name or 'mounted drives'}",
            progress=progress_printer(ctx.err),
        )
    if not results:
        print("no destination drive is mounted", file=ctx.out)
        return 1
    for r in results:
        print(r.describe(), file=ctx.out)
    if report := next((r.report for r in results if r.report), None):
        print(f"every damaged copy: {lib.abspath(report)}", file=ctx.out)
    return 1 if any(r.unmet for r in results) else 0


def cmd_retire(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.mirror.retire import retire_destination

    with ctx.open_library() as lib:
        done = retire_destination(lib, args.name, force=args.force)
    print(
        f"retired drive {done.label!r}: its {counted(done.copies, 'copy', 'copies')} no longer"
        " count; archiver mirror makes them again on the drives in use. Nothing on the drive"
        f" was changed (archiver drives reinstate {done.label} puts it back).",
        file=ctx.out,
    )
    if done.lost:
        print(
            f"archiver: warning: {counted(done.lost, 'file')} had no other copy and"
            f" {'is' if done.lost == 1 else 'are'} now lost (archiver verify names them)",
            file=ctx.err,
        )
    if done.shortfall:
        print(f"archiver: warning: the retention policy {done.shortfall}", file=ctx.err)
    return 0


def cmd_reinstate(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.mirror.retire import reinstate_destination

    with ctx.open_library() as lib:
        reinstate_destination(lib, args.name)
    print(
        f"drive {args.name!r} is in use again: the next mirror copies to it what the retention"
        " policy asks (a copy still on it is checked, not written again)",
        file=ctx.out,
    )
    return 0
