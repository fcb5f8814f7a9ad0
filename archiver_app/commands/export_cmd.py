"""``archiver export``: a collection, a tag or a search result as WACZ or a plain folder.

``--sign --timestamp [URL]`` adds an RFC 3161 timestamp of the signature; ``archiver export
timestamp-pending`` retries the timestamps that waited for the network, and ``archiver
export timestamp-authority [URL]`` shows or sets the authority ``--timestamp`` uses by default.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archiver_app.commands import collection_slug
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("export", help="export as WACZ or as a folder of WARC + CDXJ + pages")
    p.add_argument("--format", choices=["wacz", "folder"], default="wacz")
    p.add_argument("--collection", type=collection_slug, metavar="SLUG")
    p.add_argument("--tag", metavar="T")
    p.add_argument("--query", metavar="Q", help="only the snapshots this search finds")
    p.add_argument("-o", "--output", type=Path, metavar="PATH", help="required to export")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing PATH: a file, or for --format folder an empty folder or an "
        "earlier export (never the library or a folder holding it)",
    )
    p.add_argument(
        "--sign",
        action="store_true",
        help="sign the WACZ with your key (made on first use in your configuration folder); "
        "check it with `archiver verify-export`",
    )
    p.add_argument(
        "--timestamp",
        nargs="?",
        const="",
        metavar="URL",
        help="with --sign: a trusted RFC 3161 timestamp of the signature from the time-stamping "
        "authority at URL (default: the one set with `archiver export timestamp-authority`); "
        "without network the export is written signed and the timestamp waits for "
        "`archiver export timestamp-pending`",
    )
    p.add_argument(
        "--keep-private-headers",
        action="store_true",
        help="keep Cookie, Authorization and Set-Cookie headers in the export (left out by "
        "default: they can let others act as you on the sites you were logged in to)",
    )
    p.add_argument(
        "--skip-altered",
        action="store_true",
        help="leave out the captures whose files were altered after capture (or are missing) "
        "and say which; without it such an export is refused before anything is written",
    )
    p.add_argument(
        "--bibliography",
        action="store_true",
        help="also write the captures' citations beside the export: NAME.bib (BibTeX) and "
        "NAME.csl.json (CSL-JSON, for Zotero and other reference managers)",
    )
    p.set_defaults(func=cmd_export)
    actions = p.add_subparsers(dest="export_action", metavar="ACTION")
    retry = actions.add_parser(
        "timestamp-pending", help="ask again for the timestamps that waited for the network"
    )
    retry.add_argument(
        "--forget",
        type=Path,
        metavar="WACZ",
        help="stop waiting for this export's timestamp (an authority that will never answer); "
        "the export stays signed, without a timestamp",
    )
    retry.add_argument("--list", action="store_true", help="list the waiting timestamps only")
    retry.set_defaults(func=cmd_timestamp_pending)
    tsa = actions.add_parser(
        "timestamp-authority", help="show or set the default time-stamping authority"
    )
    tsa.add_argument("url", nargs="?", metavar="URL")
    tsa.add_argument("--clear", action="store_true", help="forget the default authority")
    tsa.set_defaults(func=cmd_timestamp_authority)


def cmd_export(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.errors import InputError
    from archiver_app.export.plan import Selection, check_selection
    from archiver_app.export.writer import ExportResult
    from archiver_app.jobs import JobKind
    from archiver_app.jobs.foreground import run_as_job
    from archiver_app.jobs.operations import check_export, export_config

    if args.output is None:
        raise InputError("say where to write the export: -o PATH")
    if args.timestamp is not None and not args.sign:
        raise InputError("--timestamp stamps the signature: add --sign")
    with ctx.open_library() as lib:
        url = _authority(lib, args.timestamp)
        check_selection(lib, Selection(collection=args.collection, tag=args.tag))
        config = export_config(
            args.output,
            fmt=args.format,
            collection=args.collection,
            tag=args.tag,
            query=args.query,
            overwrite=args.overwrite,
            sign=args.sign,
            timestamp=url,
            keep_private_headers=args.keep_private_headers,
            bibliography=args.bibliography,
            skip_altered=args.skip_altered,
        )
        check_export(lib, config)  # a place it cannot write to: refused before any job
        result: ExportResult = run_as_job(
            lib,
            JobKind.EXPORT,
            config,
            name=f"Export to {args.output}",
            collection=args.collection or "default",
        )
    print(
        f"wrote {result.path} ({result.format}): {counted(result.pages, 'page')}, "
        f"{counted(result.records, 'record')}, {counted(result.bytes, 'byte')} of WARC"
        + (f", {result.originals_added} revisit originals added" if result.originals_added else ""),
        file=ctx.out,
    )
    print(result.carried, file=ctx.out)
    if result.leftovers_removed:
        print(
            f"removed {counted(len(result.leftovers_removed), 'temporary file')} a killed "
            f"export had left: {', '.join(result.leftovers_removed)}",
            file=ctx.out,
        )
    if result.signer:
        print(f"signed with key {result.signer}", file=ctx.out)
    if result.timestamp is not None:
        _print_stamp(result.timestamp, ctx)
    if result.left_out is not None:
        print("\n".join(result.left_out.describe()), file=ctx.out)
    if result.bibliography:
        print("bibliography: " + ", ".join(map(str, result.bibliography)), file=ctx.out)
    for problem in result.problems:
        print(f"  ! {problem}", file=ctx.err)
    return 1 if result.problems else 0


def _authority(lib: Any, given: str | None) -> str | None:
    """The authority to ask: ``given``, or the default when ``--timestamp`` named none."""
    from archiver_app.errors import InputError
    from archiver_app.export.pending import default_authority

    if given is None or given:
        return given
    url = default_authority(lib)
    if url is None:
        raise InputError(
            "--timestamp needs an authority's URL: give one (--timestamp URL), or set a "
            "default with `archiver export timestamp-authority URL`"
        )
    return url


def _print_stamp(stamp: Any, ctx: Context) -> None:
    from archiver_app.export.timestamps import StampCode

    if stamp.code is StampCode.STAMPED:
        when = stamp.time.strftime("%Y-%m-%dT%H:%M:%SZ") if stamp.time else "?"
        print(f"timestamped at {when} ({stamp.message})", file=ctx.out)
    elif stamp.code is StampCode.UNREACHABLE:
        print(f"timestamp waiting: {stamp.message}; written signed, the request is queued "
              "(archiver export timestamp-pending asks again)", file=ctx.out)  # fmt: skip
    else:
        print(f"  ! signed but NOT timestamped: {stamp.message}", file=ctx.err)


def cmd_timestamp_pending(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.errors import InputError
    from archiver_app.export.pending import RetryCode, forget, pending, retry_pending
    from archiver_app.units import counted

    with ctx.open_library() as lib:
        if args.forget is not None:
            if not forget(lib, args.forget):
                raise InputError(f"no timestamp is waiting for {args.forget}")
            print(f"{args.forget}: no longer waiting for its timestamp", file=ctx.out)
            return 0
        waiting = pending(lib)
        if not waiting:
            print("no timestamps are waiting", file=ctx.out)
            return 0
        if args.list:
            for e in waiting:
                tries = counted(e.attempts, "try", "tries")
                line = f"{e.path}: from {e.url}, since {e.queued_at}, {tries}"
                print(f"{line}: {e.last_error}" if e.last_error else line, file=ctx.out)
            return 0
        results = retry_pending(lib)
    for r in results:
        stream = ctx.err if r.code is RetryCode.GAVE_UP else ctx.out
        print(f"{r.path}: {r.code}: {r.message}", file=stream)
    failed = (RetryCode.WAITING, RetryCode.NOT_WRITTEN, RetryCode.GAVE_UP)
    return 1 if any(r.code in failed for r in results) else 0


def cmd_timestamp_authority(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.errors import InputError
    from archiver_app.export.pending import default_authority, set_default_authority

    with ctx.open_library() as lib:
        if args.clear or args.url:
            if args.url and not args.url.startswith(("http://", "https://")):
                raise InputError(f"{args.url!r} is not an http(s) address")
            set_default_authority(lib, None if args.clear else args.url)
        url = default_authority(lib)
    print(url or "no default time-stamping authority", file=ctx.out)
    return 0
