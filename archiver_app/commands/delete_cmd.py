"""``archiver delete``: delete captures; members of an accepted edition are refused.

At a terminal it names the captures and asks first (no is the default), as the app does;
``--yes`` deletes without asking. Without a terminal to ask on (input piped or redirected:
``echo n | archiver delete 6``, a script) it deletes nothing unless given ``--yes``: what is
piped in is not taken for a person's answer, and no answer is not taken for a yes.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from archiver_app.errors import InputError

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
    p.add_argument(
        "--yes",
        action="store_true",
        help="do not ask first (needed without a terminal: piped input is not an answer)",
    )
    p.set_defaults(func=cmd_delete)


def cmd_delete(args: argparse.Namespace, ctx: Context) -> int:
    asks = not args.yes
    if asks and not sys.stdin.isatty():
        print(
            "archiver: not deleted: no terminal to ask on; add --yes to delete without asking",
            file=ctx.err,
        )
        return InputError.exit_code
    with ctx.open_library() as lib:
        if asks:
            for snapshot_id in args.ids:
                target = lib.snapshots.replay_target(snapshot_id)
                shown = f"{target.title} ({target.url})" if target else "no such capture"
                print(f"  #{snapshot_id} {shown}", file=ctx.out)
            what = "this capture" if len(args.ids) == 1 else f"these {len(args.ids)} captures"
            print(
                f"Delete {what}? Files on this computer are removed; copies on drives stay. [y/N] ",
                end="",
                file=ctx.out,
                flush=True,
            )
            if sys.stdin.readline().strip().lower() not in ("y", "yes"):
                print("nothing was deleted", file=ctx.out)
                return 1
        result, _changes = lib.snapshots.delete(args.ids)
    for o in result.outcomes:
        print(o.message, file=ctx.err if o in result.refused else ctx.out)
    for name in result.editions_to_review:
        print(f"edition {name} needs review: it lost a member", file=ctx.out)
    for path in result.left:
        print(f"archiver: warning: could not remove {lib.abspath(path)}", file=ctx.err)
    return 1 if result.refused or result.left else 0
