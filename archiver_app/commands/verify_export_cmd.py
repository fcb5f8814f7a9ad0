"""``archiver verify-export FILE.wacz``: were the export's files changed, who signed it, and
when a trusted authority saw the signature (``--tsa-cert ROOT.pem`` checks its chain)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "verify-export",
        help="check a WACZ export's hashes, signature and timestamp",
        description="Check every file of a WACZ against its datapackage.json, and its "
        "signature when it is signed; say what differs, who signed it (the public key's "
        "fingerprint) and when, and when a time-stamping authority saw the signature. Exits 1 "
        "when anything differs or the timestamp does not verify.",
    )
    p.add_argument("wacz", type=Path, metavar="FILE.wacz")
    p.add_argument(
        "--tsa-cert",
        type=Path,
        metavar="ROOT.pem",
        help="the trust root (PEM, one or more certificates) the timestamp's authority must "
        "chain up to; without it the timestamp is checked against the signature only",
    )
    p.set_defaults(func=cmd_verify_export)


def cmd_verify_export(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.export.signing import fingerprint, verify_wacz
    from archiver_app.export.timestamps import TimestampState, load_roots

    roots = load_roots(args.tsa_cert) if args.tsa_cert else None
    report = verify_wacz(args.wacz, tsa_roots=roots)
    for problem in report.problems:
        print(f"changed: {problem}", file=ctx.out)
    if report.signed:
        who = fingerprint(report.public_key) if report.public_key else "no key"
        state = "valid" if report.signature_valid else "NOT valid"
        print(f"signature: {state}; key {who}; signed {report.signed_at} by {report.software}",
              file=ctx.out)  # fmt: skip
        stamp = report.timestamp
        if stamp.state is not TimestampState.NONE:
            when = stamp.time.strftime("%Y-%m-%dT%H:%M:%SZ") if stamp.time else "?"
            print(f"timestamp: {stamp.state}; {when} by {stamp.authority or '?'}: "
                  f"{stamp.message}", file=ctx.out)  # fmt: skip
        else:
            print("timestamp: none", file=ctx.out)
    else:
        print("not signed", file=ctx.out)
    verdict = "intact" if report.ok else "NOT intact"
    print(f"{args.wacz}: {verdict} ({report.files_checked} files checked)", file=ctx.out)
    return 0 if report.ok else 1
