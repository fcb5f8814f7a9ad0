"""``archiver diff A B``: what changed between two captures (text, look, resources).

Two captures of a watched address are compared with the watch's ignored text, as the
Changes list compared them (``--ignore`` adds to it; ``--no-watch-ignore`` leaves it in),
and the header's ``ignored:`` line says which text was left out. The header names each
capture's HTTP status when either is not a 2xx answer ("B answered
HTTP 404"), so a page that went missing is not read as a page rewritten; ``--json``
carries ``http_status`` for ``a`` and ``b`` always (null: not recorded). The exit code is
0 for any comparison made, error answers included: it says whether the captures could be
compared, not what they hold.
"""

from __future__ import annotations

import argparse
import json
import shlex
from typing import TYPE_CHECKING, Any

from archiver_app.commands import at_least

if TYPE_CHECKING:
    from archiver_app.api.comparing import ComparedCaptures
    from archiver_app.cli import Context
    from archiver_app.compare import Comparison


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "diff",
        help="what changed between two captures of a page",
        description="Compare two captures (by id or uid): the page text as a line diff, the "
        "screenshots as changed regions, and the resources added, removed or changed. Only "
        "complete captures are compared; A is the older of the two, whatever the order given.",
    )
    p.add_argument("old", metavar="A", help="a capture id or uid")
    p.add_argument("new", metavar="B", help="another capture of the same address")
    p.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="REGEX",
        help="text to leave out of the comparison, such as dates or counters (repeatable; "
        "added to the watch's ignored text)",
    )
    p.add_argument(
        "--no-watch-ignore",
        dest="watch_ignore",
        action="store_false",
        help="the raw comparison: leave the watch's ignored text in (only --ignore applies)",
    )
    p.add_argument("--any-url", action="store_true", help="compare captures of different addresses")
    p.add_argument(
        "--context",
        type=at_least(0),
        default=2,
        metavar="N",
        help="unchanged lines shown around a change",
    )
    p.add_argument(
        "--overlay", metavar="PNG", help="write B's screenshot with the changed regions outlined"
    )
    p.add_argument("--json", action="store_true", help="the figures and the diff as JSON")
    p.set_defaults(func=cmd_diff)


def cmd_diff(args: argparse.Namespace, ctx: Context) -> int:
    lib = ctx.open_library()
    try:
        compared = lib.snapshots.compare(
            args.old,
            args.new,
            ignore=args.ignore,
            watch_ignore=args.watch_ignore,
            any_url=args.any_url,
        )
        result = compared.comparison
        if args.overlay and result.visual is not None:
            _write_overlay(lib, result, args.overlay)
    finally:
        lib.close()
    if args.overlay:  # on stderr: --json keeps stdout to the JSON
        if result.visual is not None:
            print(f"overlay written (B's screenshot, changes outlined): {args.overlay}",
                  file=ctx.err)  # fmt: skip
        else:
            print("no overlay written: a capture has no screenshot to compare", file=ctx.err)
    if args.json:
        print(json.dumps(_as_json(compared), indent=2), file=ctx.out)
    else:
        _print(compared, ctx, context=args.context)
    return 0


def _write_overlay(lib: Any, result: Comparison, path: str) -> None:
    from pathlib import Path

    from archiver_app.compare import overlay
    from archiver_app.compare.snapshots import screenshot
    from archiver_app.durable import atomic_write

    shot = screenshot(lib, result.new.id)
    assert shot is not None and result.visual is not None
    atomic_write(Path(path), overlay(shot, result.visual.boxes))


def _when(result: Comparison) -> tuple[str, str]:
    """A's and B's times (to the second when they share their minute) and ids."""
    from archiver_app.units import capture_times

    refs = (result.old, result.new)
    times = capture_times([r.captured_at for r in refs])
    a, b = (f"{t} UTC (capture {r.id})" for t, r in zip(times, refs, strict=True))
    return a, b


def _print(compared: ComparedCaptures, ctx: Context, *, context: int) -> None:
    from archiver_app.compare import unified
    from archiver_app.units import counted, share_text
    from archiver_app.urls import display_url

    result = compared.comparison
    old, new = _when(result)
    print(f"A: {display_url(result.old.url)}  {old}  (the older)", file=ctx.out)
    print(f"B: {display_url(result.new.url)}  {new}", file=ctx.out)
    ignored = ignored_line(compared)
    if ignored:
        print(ignored, file=ctx.out)
    statuses = (result.old.http_status, result.new.http_status)
    if any(status and not 200 <= status < 300 for status in statuses):
        print(", ".join(map(_answered, "AB", statuses)), file=ctx.out)
    s = result.summary
    print("changed" if s.changed else "no change between these captures", file=ctx.out)
    if s.redirect:  # the page moved, or another page took its place
        print(f"address: B {s.redirect}", file=ctx.out)
    if s.title_changed:
        print(f"title: {quoted(s.old_title)} -> {quoted(s.new_title)}", file=ctx.out)
    if result.text is not None:
        t = result.text
        print(
            f"text: {t.changed_lines} of {t.lines} lines differ "
            f"({share_text(t.share_changed)})"
            + (" (long: the end is compared as a block)" if t.truncated else ""),
            file=ctx.out,
        )
    if result.visual is not None:
        v = result.visual
        print(
            f"look: {share_text(v.share_changed)} of pixels differ, "
            f"in {counted(len(v.boxes), 'region')}",
            file=ctx.out,
        )
        for box in v.boxes[:20]:
            print(f"  region at x={box.x} y={box.y}, {box.width}x{box.height}", file=ctx.out)
    _print_resources(result, ctx)
    for note in result.notes:
        print(f"note: {note}", file=ctx.out)
    if result.text is not None and result.text.changed:
        print(f"--- A {old}\n+++ B {new}", file=ctx.out)
        for line in unified(result.text, context=context):
            print(line, file=ctx.out)


def _print_resources(result: Comparison, ctx: Context) -> None:
    """The resources line, then each resource: a changed one that now answers an error (or
    answers again) says so, with both answers, rather than "changed"."""
    r = result.resources
    failing = len(r.now_error)
    print(
        f"resources: {len(r.added)} only in B, {len(r.removed)} only in A, "
        f"{len(r.changed)} changed"
        + (
            f" ({failing} now {'answers' if failing == 1 else 'answer'} an error)"
            if failing
            else ""
        ),
        file=ctx.out,
    )
    answers = {a.url: a for a in r.answers}
    for label, urls in (("only in B", r.added), ("only in A", r.removed), ("changed", r.changed)):
        for url in urls[:20]:
            answer = answers.get(url)
            shown = label
            if answer is not None:
                shown = (
                    f"now answers {answer.new_status} (was {answer.old_status})"
                    if answer.now_error
                    else f"answers again, {answer.new_status} (was {answer.old_status})"
                )
            print(f"  {shown}: {url}", file=ctx.out)


def ignored_line(compared: ComparedCaptures) -> str | None:
    """Which text the comparison left out, and how to see it with the watch's left in
    (None: no patterns at all)."""
    watch = compared.watch
    given = " ".join(map(shlex.quote, compared.given))
    if watch is not None and compared.watch_applied:
        own = " ".join(map(shlex.quote, watch.patterns))
        also = f", and {given}" if given else ""
        return (
            f"ignored: watch {watch.watch_id}'s ignored text {own}{also} "
            "(--no-watch-ignore: compare with it left in)"
        )
    if watch is not None and watch.patterns:
        left = " ".join(map(shlex.quote, watch.patterns))
        kept = f"watch {watch.watch_id}'s ignored text {left} left in"
        return f"ignored: {given or 'nothing'} ({kept})"
    return f"ignored: {given}" if given else None


def _answered(side: str, status: int | None) -> str:
    if status is None:
        return f"{side} kept no HTTP status"
    return f"{side} answered HTTP {status}" + (" (an error)" if status >= 400 else "")


def quoted(title: str | None) -> str:
    """A page title in double quotes, white space collapsed (or "(no title)")."""
    return json.dumps(" ".join(title.split()), ensure_ascii=False) if title else "(no title)"


def _as_json(compared: ComparedCaptures) -> dict[str, Any]:
    result = compared.comparison

    def ref(r: Any) -> dict[str, Any]:
        return {
            "id": r.id,
            "uid": r.uid,
            "url": r.url,
            "captured_at": r.captured_at.isoformat(),
            "title": r.title,
            "http_status": r.http_status,
        }

    text = result.text
    visual = result.visual
    return {
        "a": ref(result.old),
        "b": ref(result.new),
        "summary": result.summary.to_json(),
        "text": None
        if text is None
        else {
            "changed_lines": text.changed_lines,
            "lines": text.lines,
            "lines_a": text.old_lines,
            "lines_b": text.new_lines,
            "share_changed": text.share_changed,
            "truncated": text.truncated,
            "hunks": [
                {
                    "op": h.op.value,
                    "a_line": h.old_start + 1,
                    "a": list(h.old),
                    "b_line": h.new_start + 1,
                    "b": list(h.new),
                }
                for h in text.changes()
            ],
        },
        "visual": None
        if visual is None
        else {
            "width": visual.width,
            "height": visual.height,
            "share_changed": visual.share_changed,
            "regions": [
                {"x": b.x, "y": b.y, "width": b.width, "height": b.height} for b in visual.boxes
            ],
        },
        "resources": {
            "added": list(result.resources.added),
            "removed": list(result.resources.removed),
            "changed": list(result.resources.changed),
            # of "changed": those whose answer went from loading to an error, or back
            "answers": [
                {
                    "url": a.url,
                    "a_status": a.old_status,
                    "b_status": a.new_status,
                    "now_error": a.now_error,
                }
                for a in result.resources.answers
            ],
        },
        "notes": list(result.notes),
        # the patterns left out of the text: the watch's (unless --no-watch-ignore), then --ignore
        "ignore": {
            "watch": compared.watch.watch_id if compared.watch is not None else None,
            "watch_applied": compared.watch_applied,
            "patterns": list(compared.patterns),
        },
    }
