"""``archiver verify-export FILE.wacz``: were the export's files changed, who signed it, and
when a trusted authority saw the signature (``--tsa-cert ROOT.pem`` checks its chain)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.library import Library


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "verify-export",
        help="check a WACZ export's hashes, signature and timestamp",
        description="Check every file of a WACZ against its datapackage.json, and its "
        "signature when it is signed; say what differs, who signed it (the public key's "
        "fingerprint) and when, and when a time-stamping authority saw the signature; print "
        "the file's SHA-256. Exits 1 when anything differs, the timestamp does not verify or "
        "(--tsa-cert) is missing, (--key) it is not signed by the given key, or (--sha256) "
        "its SHA-256 is not the one given.",
    )
    p.add_argument("wacz", type=Path, metavar="FILE.wacz")
    p.add_argument(
        "--tsa-cert",
        type=Path,
        metavar="ROOT.pem",
        help="the trust root (PEM, one or more certificates) the timestamp's authority must "
        "chain up to; without it the timestamp is checked against the signature only. With it, "
        "an export that has no timestamp exits 1",
    )
    p.add_argument(
        "--key",
        metavar="FINGERPRINT",
        help="require a valid signature by this key (the fingerprint printed after a signed "
        "export, 32 hexadecimal digits; colons and case do not matter): an unsigned export, "
        "or one signed by another key, is not intact",
    )
    p.add_argument(
        "--sha256",
        metavar="HEX",
        help="the SHA-256 of the file meant (a citation's, as `archiver cite` quotes a "
        "release's): a file of another SHA-256 is not that file, byte for byte (exit 1)",
    )
    p.set_defaults(func=cmd_verify_export)


def cmd_verify_export(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.export.signing import verify_wacz
    from archiver_app.export.timestamps import load_roots

    roots = load_roots(args.tsa_cert) if args.tsa_cert else None
    how = {"tsa_roots": roots, "key": args.key, "sha256": args.sha256}
    lib = _library(ctx)
    if lib is None:
        report = verify_wacz(args.wacz, **how)
    else:
        with lib:  # which of its editions' releases the file is
            report = lib.exports.verify(args.wacz, **how)
    for line in report.lines():
        print(line, file=ctx.out)
    return 0 if report.ok else 1


def _library(ctx: Context) -> Library | None:
    """The library, when there is one where the command looks (``--library``, the
    environment, the default): its editions' releases are what a file is compared with.
    None when there is none; one that cannot be opened is said, and the file still checked."""
    from archiver_app.errors import ArchiverError
    from archiver_app.library import META_NAME

    if ctx.database_url is None and not (ctx.library_root / META_NAME).is_file():
        return None
    try:
        return ctx.open_library()
    except ArchiverError as exc:
        print(f"archiver: the releases of the library were not looked at: {exc}", file=ctx.err)
        return None
