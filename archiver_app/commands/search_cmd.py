"""``archiver search QUERY``: full-text search with filters."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from archiver_app.commands import at_least, collection_slug

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "search",
        help="search the text of every saved page",
        description='Words are ANDed; "exact phrase"; -word excludes (alone: every capture '
        "without it); a OR b; at most 200 words.",
    )
    p.add_argument("query", nargs="*", help="words to search for (empty: newest first)")
    p.add_argument("--collection", type=collection_slug, metavar="SLUG")
    p.add_argument("--tag", metavar="T")
    p.add_argument("--domain", help="example.org (also matches its subdomains)")
    p.add_argument("--url-prefix", metavar="PREFIX")
    p.add_argument("--since", metavar="DATE", help="captured on or after (YYYY-MM-DD)")
    p.add_argument(
        "--until", metavar="DATE", help="captured on or before (YYYY-MM-DD, that day included)"
    )
    p.add_argument("--mime", help="text/html, or a major type such as image/")
    p.add_argument("--status", help="HTTP status: 200 or a class such as 4xx")
    p.add_argument("--fidelity", choices=["high", "fallback", "imported"])
    p.add_argument("--limit", type=at_least(1), default=20, help="at most this many hits (20)")
    p.add_argument("--offset", type=at_least(0), default=0, help="skip this many hits first")
    p.add_argument("--json", action="store_true", help="one JSON object per hit")
    p.set_defaults(func=cmd_search)


def _date(value: str | None, flag: str, *, day_included: bool = False) -> Any:
    """``value`` as an aware datetime (UTC unless it says); with ``day_included`` a bare
    date is the end of that day, as the app's date filter takes it."""
    if value is None:
        return None
    from datetime import UTC, datetime, timedelta

    from archiver_app.errors import InputError

    try:
        at = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InputError(f"{flag}: not a date {value!r} (use YYYY-MM-DD)") from exc
    if day_included and len(value.strip()) == 10:  # YYYY-MM-DD: up to the next day
        at += timedelta(days=1)
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at


def cmd_search(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.errors import InputError
    from archiver_app.search import Query, search
    from archiver_app.search.engine import parse
    from archiver_app.urls import display_url

    query = Query(
        text=" ".join(args.query),
        collection=args.collection,
        tag=args.tag,
        domain=args.domain,
        url_prefix=args.url_prefix,
        since=_date(args.since, "--since"),
        until=_date(args.until, "--until", day_included=True),
        mime=args.mime,
        status=args.status,
        fidelity=args.fidelity,
        prefix_last=False,
    )
    query.status_range()  # validates --status before opening anything
    parse(query)  # and the words: none (only OR, '-' or punctuation), or too many
    if query.since and query.until and query.since >= query.until:
        raise InputError("--since is after --until: no capture can match")
    with ctx.open_library() as lib:
        slugs = sorted(c.slug for c in lib.collections.all())
        if args.collection and args.collection not in slugs:
            there = f"there are: {', '.join(slugs)}" if slugs else "there is none yet"
            raise InputError(f"no collection {args.collection!r}; {there}")
        hits = search(lib, query, limit=args.limit + 1, offset=args.offset)  # one more: more?
    more, hits = len(hits) > args.limit, hits[: args.limit]
    for hit in hits:
        if args.json:
            item = {
                "id": hit.snapshot_id,
                "url": hit.url,
                "captured_at": hit.captured_at.isoformat(),
                "title": hit.title,
                "snippet": hit.snippet_text,
                "collection": hit.collection,
                "status": hit.status,
                "mime": hit.mime,
                "fidelity": hit.fidelity,
                "score": hit.score,
            }
            print(json.dumps(item, ensure_ascii=False), file=ctx.out)
        else:
            when = hit.captured_at.strftime("%Y-%m-%d %H:%M")
            print(f"#{hit.snapshot_id}  {when}  {display_url(hit.url)}", file=ctx.out)
            print(f"    {hit.title or '(no title)'}", file=ctx.out)
            if hit.snippet:
                print(f"    {hit.snippet_marked('[', ']')}", file=ctx.out)
    if not hits and not args.json:
        print("no matches", file=ctx.err)
    elif more and not args.json:
        shown = args.offset + args.limit
        print(f"(more than {shown}; --offset {shown} shows the next)", file=ctx.err)
    return 0
