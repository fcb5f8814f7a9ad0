"""``archiver delete``: delete captures; members of an accepted edition are refused."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "delete",
        help="delete captures (rows, search entry, laptop files; drive copies stay)",
        description="Delete captures by id. A member of an accepted edition is refused until "
        "the edition is reopened (archiver edition reopen NAME); a capture whose payloads "
        "later captures reuse is refused too.",
    )
    p.add_argument("ids", nargs="+", type=int, metavar="ID")
    p.set_defaults(func=cmd_delete)


def cmd_delete(args: argparse.Namespace, ctx: Context) -> int:
    with ctx.open_library() as lib:
        result, _changes = lib.snapshots.delete(args.ids)
    for o in result.outcomes:
        print(o.message, file=ctx.err if o in result.refused else ctx.out)
    for name in result.editions_to_review:
        print(f"edition {name} needs review: it lost a member", file=ctx.out)
    return 1 if result.refused else 0
