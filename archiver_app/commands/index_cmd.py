"""``archiver index rebuild``: the full-text index written again from the page text files.

Runs as a ``reindex`` job (:mod:`archiver_app.search.reindex`): progress on standard
error, resumable. Run again after Ctrl-C or a failure, it continues where the last
unfinished rebuild stopped (``--restart`` starts from the first snapshot again).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "index",
        help="maintain the full-text search index",
        description="Maintenance of the index that full-text search reads.",
    )
    actions = p.add_subparsers(dest="index_action", metavar="ACTION", required=True)
    r = actions.add_parser(
        "rebuild",
        help="index every page's text again from its text.txt",
        description="Write the search index again from each snapshot's text.txt (title, "
        "address and tags from the database), on SQLite and PostgreSQL alike. A snapshot "
        "without a text file keeps the text already indexed. Safe to interrupt: run it again "
        "and it continues where it stopped.",
    )
    r.add_argument(
        "--missing",
        action="store_true",
        help="only snapshots that have no text in the index (for instance pages captured "
        "on PostgreSQL before full-text search existed there)",
    )
    r.add_argument(
        "--restart",
        action="store_true",
        help="start from the first snapshot, not where an unfinished rebuild stopped",
    )
    r.set_defaults(func=cmd_index_rebuild)


def cmd_index_rebuild(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.commands.drives_cmd import progress_printer
    from archiver_app.jobs import JobKind
    from archiver_app.jobs.foreground import run_as_job
    from archiver_app.search.reindex import ReindexReport, reindex_config, unfinished_cursor
    from archiver_app.tasks import CancelToken

    cancel = CancelToken()
    with ctx.open_library() as lib:
        after = 0 if args.restart else unfinished_cursor(lib, missing_only=args.missing)
        if after:
            print(f"continuing after snapshot {after}", file=ctx.err)
        try:
            report: ReindexReport = run_as_job(
                lib,
                JobKind.REINDEX,
                reindex_config(missing_only=args.missing, after_id=after),
                name="Rebuild the search index",
                progress=progress_printer(ctx.err),
                cancel=cancel,
            )
        except KeyboardInterrupt:
            cancel.cancel()
            raise
    print(
        f"indexed {counted(report.checked, 'snapshot')}: {report.from_file} from their text file, "
        f"{report.kept} kept their indexed text, {report.without_text} have no text",
        file=ctx.out,
    )
    return 0
