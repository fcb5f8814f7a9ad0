"""``archiver verify-export FILE.wacz``: were the export's files changed, and who signed it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "verify-export",
        help="check a WACZ export's hashes and signature",
        description="Check every file of a WACZ against its datapackage.json, and its "
        "signature when it is signed; say what differs, who signed it (the public key's "
        "fingerprint) and when. Exits 1 when anything differs.",
    )
    p.add_argument("wacz", type=Path, metavar="FILE.wacz")
    p.set_defaults(func=cmd_verify_export)


def cmd_verify_export(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.export.signing import fingerprint, verify_wacz

    report = verify_wacz(args.wacz)
    for problem in report.problems:
        print(f"changed: {problem}", file=ctx.out)
    if report.signed:
        who = fingerprint(report.public_key) if report.public_key else "no key"
        state = "valid" if report.signature_valid else "NOT valid"
        print(f"signature: {state}; key {who}; signed {report.signed_at} by {report.software}",
              file=ctx.out)  # fmt: skip
    else:
        print("not signed", file=ctx.out)
    verdict = "intact" if report.ok else "NOT intact"
    print(f"{args.wacz}: {verdict} ({report.files_checked} files checked)", file=ctx.out)
    return 0 if report.ok else 1
