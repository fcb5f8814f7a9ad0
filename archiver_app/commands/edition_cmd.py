"""``archiver edition``: a collection's frozen, reviewed, citable releases (docs/editions.md)."""

from __future__ import annotations

import argparse
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archiver_app.commands import collection_slug
from archiver_app.errors import InputError
from archiver_app.units import counted
from archiver_app.urls import display_host, display_text, display_url

if TYPE_CHECKING:
    from archiver_app.api.editions import EditionsManager, StateChange
    from archiver_app.cli import Context
    from archiver_app.library import Library
    from archiver_app.tasks import ProgressUpdate


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "edition",
        help="editions: a collection's reviewed, citable release over a period, with coverage",
        description="An edition gathers what a collection's jobs captured in a period (a year "
        "or a date range), tracks every intended URL, and is accepted once each gap has a "
        "reason; accepted, its captures cannot be deleted until it is reopened (offload keeps "
        "the retention policy's verified copies of them, as of any capture).",
    )
    actions = p.add_subparsers(dest="edition_action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="create an edition of a collection")
    create.add_argument(
        "collection", type=collection_slug, metavar="COLLECTION", help="the collection's slug"
    )
    create.add_argument(
        "name", metavar="NAME", help="the edition's name: letters, digits, '.', '-', '_'"
    )
    create.add_argument("--year", type=int, help="the calendar year (UTC)")
    create.add_argument(
        "--from", dest="start", type=_date, metavar="DATE", help="first day (YYYY-MM-DD)"
    )
    create.add_argument("--to", dest="end", type=_date, metavar="DATE", help="last day, included")
    create.add_argument(
        "--targets", type=Path, metavar="FILE", help="intended URLs, one a line (# comments)"
    )
    lst = actions.add_parser("list", help="every edition and its state")
    lst.add_argument("--collection", type=collection_slug, metavar="SLUG")
    show = actions.add_parser("show", help="coverage: counts per state and domain, the gaps")
    show.add_argument("name", metavar="NAME")
    form = show.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="the coverage report as JSON")
    form.add_argument("--markdown", action="store_true", help="the coverage report")
    gap = actions.add_parser("gap", help="say why an intended URL is not in the edition")
    gap.add_argument("name", metavar="NAME")
    gap.add_argument("url", metavar="URL")
    gap.add_argument("--reason", required=True, metavar="TEXT", help="empty clears it")
    choose = actions.add_parser("choose", help="let another capture of a URL represent it")
    choose.add_argument("name", metavar="NAME")
    choose.add_argument("url", metavar="URL")
    choose.add_argument("capture", type=int, metavar="ID", help="a complete capture of URL")
    for action, text in (
        (
            "accept",
            "accept the coverage (every gap needs a reason): the edition is frozen; "
            "of an accepted edition flagged for review, clears the flag",
        ),
        ("reopen", "unfreeze an accepted edition; it needs review again"),
    ):
        actions.add_parser(action, help=text).add_argument("name", metavar="NAME")
    export = actions.add_parser("export", help="one WACZ of the members, reports beside it")
    export.add_argument("name", metavar="NAME")
    export.add_argument("output", type=Path, nargs="?", metavar="OUT.wacz")
    export.add_argument(
        "-o",
        "--output",
        type=Path,
        dest="output_option",
        metavar="OUT.wacz",
        help="where to write it, as `archiver export -o` (or give OUT.wacz)",
    )
    export.add_argument("--sign", action="store_true", help="sign the WACZ with your key")
    export.add_argument(
        "--timestamp",
        nargs="?",
        const="",
        default=None,
        metavar="URL",
        help="with --sign: a trusted RFC 3161 timestamp of the signature from the authority "
        "at URL (default: `archiver export timestamp-authority`); without network the "
        "release is written signed and the timestamp waits for `archiver export "
        "timestamp-pending`",
    )
    export.add_argument("--overwrite", action="store_true")
    missing = actions.add_parser("capture-missing", help="queue the missing URLs as one job")
    missing.add_argument("name", metavar="NAME")
    missing.add_argument("--run", action="store_true", help="capture them now, in this process")
    p.set_defaults(func=cmd_edition)


def cmd_edition(args: argparse.Namespace, ctx: Context) -> int:
    with ctx.open_library() as lib:
        eds = lib.editions
        action = args.edition_action
        if action == "create":
            return _create(args, ctx, eds)
        if action == "list":
            editions = eds.list(args.collection)
            if not editions:
                print("no editions yet; make one with `archiver edition create COLLECTION "
                      "NAME --year YEAR`", file=ctx.out)  # fmt: skip
            for e in editions:
                flag = "\tflagged for review" if e.flagged else ""
                print(f"{e.name}\t{e.collection}\t{e.period_label}\t{e.state.value}{flag}",
                      file=ctx.out)  # fmt: skip
            return 0
        if action == "show":
            return _show(args, ctx, eds)
        if action == "gap":
            result = eds.explain_gap(args.name, args.url, args.reason)
            print(result.edit.message, file=ctx.err if result.refused else ctx.out)
            return 1 if result.refused else 0
        if action == "choose":
            result = eds.choose_member(args.name, args.url, args.capture)
            print(result.edit.message, file=ctx.err if result.refused else ctx.out)
            return 1 if result.refused else 0
        if action in ("accept", "reopen"):
            return _state_change(eds.accept(args.name) if action == "accept" else
                                 eds.reopen(args.name), args.name, ctx)  # fmt: skip
        if action == "export":
            return _export(args, ctx, lib)
        return _capture_missing(args, ctx, lib)


def _create(args: argparse.Namespace, ctx: Context, eds: EditionsManager) -> int:
    text = None
    if args.targets is not None:
        try:
            text = args.targets.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the target list {args.targets}: {exc}") from exc
    eds.create(args.collection, args.name, year=args.year, start=args.start, end=args.end,
               targets_text=text)  # fmt: skip
    e, c = eds.get(args.name), eds.coverage(args.name).counts
    print(
        f"edition {e.name} of {e.collection} ({e.period_label}): "
        f"{counted(c.intended, 'intended URL')}, "
        f"{c.captured} captured, {c.failed} failed, {c.pending + c.missing} missing, "
        f"{c.excluded} excluded; {e.state.value}",
        file=ctx.out,
    )
    return 0


def _show(args: argparse.Namespace, ctx: Context, eds: EditionsManager) -> int:
    eds.refresh(args.name)
    if args.json or args.markdown:
        text = eds.coverage_json(args.name) if args.json else eds.coverage_markdown(args.name)
        ctx.out.write(text)
        return 0
    e, cov = eds.get(args.name), eds.coverage(args.name)
    c = cov.counts
    print(f"edition {e.name} of {e.collection}, {e.period_label}: {e.state.value}", file=ctx.out)
    if e.flagged:
        print(
            f"  flagged for review, still accepted and frozen: {e.review_note}; once you "
            f"have looked, `archiver edition accept {e.name}` clears the flag",
            file=ctx.out,
        )
    elif e.review_note:
        print(f"  needs review: {e.review_note}", file=ctx.out)
    print(f"  {'domain':<30} intended captured failed missing excluded", file=ctx.out)
    domains = [(display_host(d), n) for d, n in cov.by_domain.items()]
    for label, n in [("(all)", c), *domains]:
        print(f"  {label:<30} {n.intended:>8} {n.captured:>8} {n.failed:>6} "
              f"{n.pending + n.missing:>7} {n.excluded:>8}", file=ctx.out)  # fmt: skip
    for rule, count in cov.excluded_by_rule.items():
        print(f"  excluded by {rule}: {count}", file=ctx.out)
    for t in cov.gaps:
        reason = t.gap_reason or "(no reason given)"
        print(f"  gap {t.state.value:<8} {display_url(t.url)}  {reason}", file=ctx.out)
    for t in cov.targets:
        if t.error_answer:
            print(f"  captured {t.http_status}  {display_url(t.url)}  (the server answered "
                  "with an error)",
                  file=ctx.out)  # fmt: skip
    _show_releases(e.name, eds, ctx)
    return 0


def _show_releases(name: str, eds: EditionsManager, ctx: Context) -> None:
    """Every release on record, newest first: the one ``archiver cite`` quotes marked
    ``cited``, each other with why it is not."""
    releases = eds.releases(name)
    if not releases:
        print(f"  no release yet: `archiver edition export {name} OUT.wacz` writes one",
              file=ctx.out)  # fmt: skip
        return
    print(f"  releases, newest first (`archiver cite {name}` quotes the one marked cited):",
          file=ctx.out)  # fmt: skip
    for r in releases:
        when = f"{r.released_at:%Y-%m-%d %H:%M} UTC" if r.released_at else "(date unknown)"
        why = f"  ({r.why})" if r.why else ""
        print(f"  release {'cited' if r.cited else '':<5}  {when}  "
              f"{'signed' if r.signed else 'unsigned':<8}  {r.path}  sha256 {r.sha256}{why}",
              file=ctx.out)  # fmt: skip


def _state_change(change: StateChange, name: str, ctx: Context) -> int:
    t = change.transition
    if t.refused:
        print(f"edition {name}: refused, {t.message}", file=ctx.err)
        for url in t.unexplained:
            print(f"  no reason: {display_url(url)}", file=ctx.err)
        if t.unexplained:
            print(f"give one with: archiver edition gap {name} URL --reason TEXT", file=ctx.err)
        return 1
    print(f"edition {name}: {t.message}, now {t.state.value}", file=ctx.out)
    if t.changed:
        print(f"{counted(len(t.changed), 'member')} changed (a URL captured again since is "
              f"represented by its newest capture; `archiver edition choose {name} URL ID` "
              "picks another):", file=ctx.out)  # fmt: skip
    for moved in t.changed:
        print(f"  {moved}", file=ctx.out)
    return 0


def _export(args: argparse.Namespace, ctx: Context, lib: Library) -> int:
    from archiver_app.commands.export_cmd import _authority, _print_stamp
    from archiver_app.editions.release import ReleaseResult, release_config
    from archiver_app.jobs import JobKind
    from archiver_app.jobs.foreground import run_as_job

    if args.timestamp is not None and not args.sign:
        raise InputError("--timestamp stamps the signature: add --sign")
    if args.output is None and args.output_option is None:
        raise InputError(
            "say where to write the release: "
            f"archiver edition export {args.name} OUT.wacz (or -o OUT.wacz)"
        )
    if args.output is not None and args.output_option is not None:
        raise InputError(
            f"say once where to write the release: {args.output} or -o "
            f"{args.output_option}, not both"
        )
    args.output = args.output or args.output_option
    e = lib.editions.get(args.name)
    config = release_config(args.name, args.output, sign=args.sign, overwrite=args.overwrite,
                            timestamp=_authority(lib, args.timestamp))  # fmt: skip
    result: ReleaseResult = run_as_job(
        lib, JobKind.EXPORT, config,
        name=f"Release of edition {args.name} to {args.output}", collection=e.collection,
    )  # fmt: skip
    w = result.wacz
    print(
        f"wrote {w.path}: {counted(w.pages, 'page')}, {counted(w.records, 'record')}", file=ctx.out
    )
    if result.sha256:
        print(f"sha256 {result.sha256}", file=ctx.out)
    if w.signer:
        print(f"signed with key {w.signer}", file=ctx.out)
    if result.sha256:
        print(result.citation(), file=ctx.out)
    if w.timestamp is not None:
        _print_stamp(w.timestamp, ctx)
    for path in result.files:
        print(f"wrote {path}", file=ctx.out)
    if result.state != "research_ready":
        print(f"note: edition {args.name} is {result.state}, not accepted", file=ctx.err)
    for problem in w.problems:
        print(f"  ! {problem}", file=ctx.err)
    return 1 if w.problems else 0


def _capture_missing(args: argparse.Namespace, ctx: Context, lib: Library) -> int:
    queued = lib.editions.capture_missing(args.name)
    if queued.job_id is None:
        print(queued.message, file=ctx.err)
        return 1
    print(queued.message, file=ctx.out)
    if not args.run:
        print("run it with: archiver worker --once", file=ctx.out)
        return 0
    from archiver_app.crawl.api import page_list
    from archiver_app.crawl.inline import run_job_inline

    def show(update: ProgressUpdate) -> None:
        print(f"[{update.done}/{update.total or '?'}] {display_text(update.message)}",
              file=ctx.out, flush=True)  # fmt: skip

    run = run_job_inline(lib, queued.job_id, progress=show)
    lib.editions.refresh(args.name)
    print(f"job {run.job_id} {run.status}: {run.pages_done} captured, {run.pages_failed} "
          "failed", file=ctx.out)  # fmt: skip
    for page in page_list(lib, run.job_id, states=["failed", "ready", "claimed"]):
        print(f"failed: {display_url(page.url)}: {page.reason or 'not captured'}", file=ctx.err)
    return 0 if run.pages_failed == 0 else 1
