"""``archiver verify``: every archive file against the digest its capture recorded.

Says, per file that is not intact, whether it was altered after capture (left as it is),
rotted and was repaired from a drive (naming the drive), is missing, or had no capture-time
digest yet (recorded now, marked "recorded later"). Runs as a verify job; every verdict
printed is also in the job's report, ``jobs/<id>/verdicts.jsonl`` under the library. An
accepted edition holding a damaged file is flagged for review (still accepted and frozen),
and is named.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.integrity import IntegrityReport
    from archiver_app.library import Library


def register(sub: argparse._SubParsersAction[Any]) -> None:
    from archiver_app.commands.drives_cmd import add_scan_root

    p = sub.add_parser(
        "verify",
        help="check every capture's files against the digests recorded when it was captured",
        description="Hash every WARC, screenshot, DOM, text and PDF file of the library on "
        "this computer and compare it with the digest recorded at capture or import. A file "
        "that differs is repaired from a drive copy that still holds the captured bytes (bit "
        "rot); when only drives not plugged in do, they are named; when no drive does, it is "
        "reported as altered after capture and left as it is. "
        "Files older than capture-time digests get theirs now (recorded later). An accepted "
        "edition holding a damaged file is flagged for review (it stays accepted and "
        "frozen). Exits 1 when a file is altered, missing or left rotten.",
    )
    p.add_argument("--no-repair", action="store_true", help="report bit rot without repairing it")
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object: files checked, counts by verdict, every verdict, the report",
    )
    add_scan_root(p)
    p.set_defaults(func=cmd_verify)


def cmd_verify(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.commands.drives_cmd import progress_printer
    from archiver_app.integrity import IntegrityCode
    from archiver_app.jobs import JobKind
    from archiver_app.jobs.foreground import run_as_job
    from archiver_app.jobs.operations import verify_config

    config = {**verify_config(repair=not args.no_repair, scan_roots=args.scan_root)}
    config["integrity"] = True
    with ctx.open_library() as lib:
        report: IntegrityReport = run_as_job(
            lib,
            JobKind.VERIFY,
            config,
            name="Verify captures against their capture-time digests",
            progress=progress_printer(ctx.err),
        )
    if args.json:
        _print_json(report, lib, ctx)
        return 0 if report.ok else 1
    for v in report.verdicts:
        print(f"{v.code}: {v.path}: {v.message}", file=ctx.out)
    counts = ", ".join(f"{n} {code}" for code in IntegrityCode if (n := report.counts[code]))
    verdict = "all as captured" if report.ok else "NOT all as captured"
    print(f"{counted(report.checked, 'file')} checked: {counts or 'none'}; {verdict}", file=ctx.out)
    if report.offloaded:
        print(
            f"not checked here: {counted(report.offloaded, 'file')} offloaded to drives "
            "(archiver drives verify checks the copies there)",
            file=ctx.out,
        )
    if report.report is not None and report.verdicts:
        print(f"every verdict: {lib.abspath(report.report)}", file=ctx.out)
    if report.editions_to_review:
        print(
            f"editions needing review: {', '.join(report.editions_to_review)} (an accepted "
            "one stays accepted and frozen, flagged: archiver edition show NAME)",
            file=ctx.out,
        )
    return 0 if report.ok else 1


def _print_json(report: IntegrityReport, lib: Library, ctx: Context) -> None:
    import json

    from archiver_app.integrity.report import as_row

    found = {
        "checked": report.checked,
        "ok": report.ok,
        "counts": {code.value: n for code, n in report.counts.items() if n},
        "verdicts": [as_row(v) for v in report.verdicts],
        "report": str(lib.abspath(report.report)) if report.report else None,
        "editions_to_review": report.editions_to_review,
    }
    print(json.dumps(found, ensure_ascii=False, indent=2), file=ctx.out)
