"""``archiver policy``: show or set the retention policy (library default or a collection)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from archiver_app.commands import collection_slug

if TYPE_CHECKING:
    from archiver_app.cli import Context
    from archiver_app.mirror.policy import Policy


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("policy", help="how many verified copies, on which drives")
    p.add_argument(
        "action",
        nargs="?",
        choices=["show", "set"],
        help="show (the default), or set: implied by any setting given",
    )
    p.add_argument(
        "--collection",
        type=collection_slug,
        metavar="SLUG",
        help="one collection (default: the library)",
    )
    p.add_argument(
        "--copies",
        type=int,
        metavar="N",
        help="minimum verified copies, counting the laptop's (2 = laptop + 1 drive)",
    )
    p.add_argument(
        "--destinations",
        metavar="NAME,...",
        help="drives allowed to hold copies, comma separated ('any' for all; with"
        " --collection, 'inherit' to follow the library default's again)",
    )
    p.add_argument(
        "--max-age",
        type=int,
        metavar="SECONDS",
        help="an unfinished copy older than this counts as missing",
    )
    p.add_argument("--batch-size", type=int, metavar="N", help="files per batch (library only)")
    p.add_argument(
        "--parallelism",
        type=int,
        metavar="N",
        help="threads per drive hashing read-back copies (library only)",
    )
    p.set_defaults(func=cmd_policy)


def _show(policy: Policy, title: str) -> str:
    dests = ", ".join(policy.destinations) if policy.destinations is not None else "any"
    return (
        f"{title}: {policy.copies} {'copy' if policy.copies == 1 else 'copies'} "
        f"(counting the laptop's), destinations: {dests}, "
        f"max age {policy.max_age_seconds}s, batch {policy.batch_size}, "
        f"parallelism {policy.parallelism}"
    )


def cmd_policy(args: argparse.Namespace, ctx: Context) -> int:
    from sqlalchemy import select

    from archiver_app.errors import InputError
    from archiver_app.mirror.policy import (
        _UNSET,
        INHERIT,
        effective_policy,
        set_policy,
        shortfall,
    )
    from archiver_app.store.models import Collection

    settings = (args.copies, args.destinations, args.max_age, args.batch_size, args.parallelism)
    given = any(v is not None for v in settings)
    if args.action == "show" and given:  # a setting shown and not set would pass unnoticed
        raise InputError("policy show changes nothing: to change the policy, use policy set")
    with ctx.open_library() as lib:
        if args.action == "set" or given:
            if not given:
                raise InputError(
                    "policy set: give at least one of --copies, --destinations, "
                    "--max-age, --batch-size, --parallelism"
                )
            dests: Any = _UNSET
            if args.destinations is not None:
                names = [n.strip() for n in args.destinations.split(",") if n.strip()]
                dests = (
                    None if names in ([], ["any"]) else INHERIT if names == ["inherit"] else names
                )
            policy = set_policy(
                lib,
                collection=args.collection,
                copies=args.copies,
                destinations=dests,
                max_age_seconds=args.max_age,
                batch_size=args.batch_size,
                parallelism=args.parallelism,
            )
            print(_show(policy, args.collection or "library default"), file=ctx.out)
            if (why := shortfall(lib, policy)) is not None:  # saved: a drive may come later
                print(f"archiver: warning: this policy {why}", file=ctx.err)
            return 0
        if args.collection:
            print(_show(effective_policy(lib, args.collection), args.collection), file=ctx.out)
            return 0
        print(_show(effective_policy(lib), "library default"), file=ctx.out)
        with lib.session() as s:
            slugs = s.scalars(
                select(Collection.slug)
                .where(
                    (Collection.policy_copies.is_not(None))
                    | (Collection.policy_destinations.is_not(None))
                    | (Collection.policy_max_age_seconds.is_not(None))
                )
                .order_by(Collection.slug)
            ).all()
        for slug in slugs:
            print(_show(effective_policy(lib, slug), f"collection {slug}"), file=ctx.out)
    return 0
