"""``archiver cite ID...``: cite captures as BibTeX, CSL-JSON, RIS, Robust Links or a style."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "cite",
        help="cite captures: BibTeX, CSL-JSON, RIS, Robust Links, APA, Chicago, MLA",
        description="Print a citation of each capture (by id or uid) with its original URL, "
        "title, site, capture time and the archived copy's identifier.",
    )
    p.add_argument("captures", nargs="+", metavar="ID", help="capture id or uid")
    p.add_argument(
        "--format",
        default="apa",
        metavar="FORMAT",
        help="bibtex, csl-json, ris, robust-link, or a style: apa (default), chicago, mla, "
        "or any CSL style name",
    )
    p.add_argument(
        "--version-base",
        metavar="URL",
        help="cite the archived copy under this replay address (e.g. archiver serve's or "
        "your own pywb's) instead of its urn:archiver: identifier",
    )
    p.set_defaults(func=cmd_cite)


def cmd_cite(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.cite import citation, render

    with ctx.open_library() as lib:
        refs = [citation(lib, ref, version_base=args.version_base) for ref in args.captures]
    print(render(refs, args.format), end="", file=ctx.out)
    return 0
