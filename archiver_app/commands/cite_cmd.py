"""``archiver cite ID...``: cite captures as BibTeX, CSL-JSON, RIS, Robust Links or a style;
``archiver cite NAME``: cite an edition (:mod:`archiver_app.cite.edition`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from archiver_app.errors import InputError

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.library import Library


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "cite",
        help="cite captures or an edition: BibTeX, CSL-JSON, RIS, Robust Links, APA, Chicago, MLA",
        description="Print a citation of each capture (by id or uid) with its original URL, "
        "title, site, capture time and the archived copy's identifier; or of each edition "
        "(by name) with its collection, period, state, and its last release's date and "
        "WACZ SHA-256 (an accepted edition's: one made since it was accepted, never a draft). "
        "A capture id or uid is looked up first. The urn:archiver: identifier a citation "
        "gives names the capture or edition too.",
    )
    p.add_argument(
        "captures",
        nargs="+",
        metavar="ID",
        help="capture id, uid or urn:archiver: identifier; or an edition's name or identifier",
    )
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
    from archiver_app.capture_ref import other_library
    from archiver_app.cite import citation, render
    from archiver_app.cite.edition import edition_citation, render_editions

    with ctx.open_library() as lib:
        kinds = {ref: _kind(lib, ref) for ref in args.captures}
        if unknown := [ref for ref, kind in kinds.items() if kind is None]:
            raise InputError(f"no capture or edition {unknown[0].strip()!r} in this library"
                             + other_library(lib, unknown[0]))  # fmt: skip
        editions = [name for name in kinds.values() if name]  # None: refused above
        if editions and len(editions) < len(kinds):
            raise InputError("cite editions and captures in separate commands")
        if editions:
            names = dict.fromkeys(editions)  # each once, in the order given
            cited = [edition_citation(lib, n) for n in names]
            text = render_editions(cited, args.format)
            for e in (e for e in cited if e.unreleased and e.accepted_at is not None):
                print(f"archiver: edition {e.name} has no release since it was accepted on "
                      f"{e.accepted_at:%Y-%m-%d}, so no SHA-256 to cite: `archiver edition "
                      f"export {e.name} OUT.wacz` writes one", file=ctx.err)  # fmt: skip
        else:
            refs = [citation(lib, ref, version_base=args.version_base) for ref in args.captures]
            once = {r.uid: r for r in reversed(refs)}  # a capture given twice (id, uid) once
            text = render([r for r in refs if once.get(r.uid) is r], args.format)
    print(text, end="", file=ctx.out)
    return 0


#: What :func:`_kind` says of a reference to a capture.
CAPTURE = ""


def _kind(lib: Library, ref: str) -> str | None:
    """:data:`CAPTURE` when ``ref`` is a capture's id, uid or identifier (a capture wins),
    the edition's name when it names an edition by its name or identifier, None when
    neither."""
    from archiver_app.capture_ref import find_capture, parse_urn
    from archiver_app.editions.service import EditionNotFoundError

    try:
        find_capture(lib, ref)
        return CAPTURE
    except InputError:
        pass
    urn = parse_urn(ref)
    name = (urn.edition if urn is not None and urn.library == lib.id.lower() else None) or ref
    try:
        return lib.editions.get(name).name
    except EditionNotFoundError:
        return None
