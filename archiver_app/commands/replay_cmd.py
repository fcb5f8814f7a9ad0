"""``archiver replay URL``: open a capture offline (or screenshot it); ``archiver serve``:
serve the library to an external browser on 127.0.0.1 behind a per-run token (the entry
address sets it as a cookie; see ``replay/server.py`` for the isolation); ``--memento``
also answers Memento clients and Robust Links, which cannot carry the token."""

from __future__ import annotations

import argparse
import errno
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archiver_app.errors import InputError

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "replay",
        help="open a capture offline in the replay view, or render it to a PNG",
        description="Open the capture of URL nearest to --at (newest by default) in the "
        "offline replay view. With --screenshot, render it offscreen, write the PNG, print "
        "one line per URL the page requested, and exit.",
    )
    p.add_argument("url", help="the original address of the page")
    p.add_argument("--at", metavar="TIME", help="capture time wanted: YYYY[MM[DD[hhmmss]]]")
    p.add_argument("--screenshot", metavar="PNG", type=Path, help="render offscreen to PNG")
    p.add_argument("--width", type=int, default=1280, help="viewport width (default 1280)")
    p.add_argument("--height", type=int, default=800, help="viewport height (default 800)")
    p.add_argument(
        "--viewport-only", action="store_true", help="screenshot the viewport, not the full page"
    )
    p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait (default 60)")
    p.set_defaults(func=cmd_replay)

    s = sub.add_parser(
        "serve",
        help="serve the library to your own browser on 127.0.0.1 (token-protected)",
        description="Serve archived pages over HTTP on 127.0.0.1 only, behind a random token "
        "made for this run: the printed address sets it as a cookie, so page addresses "
        "carry no token. Pages are sandboxed and cannot reach the live web. Stops with "
        "Ctrl+C. Off unless you run this command.",
    )
    s.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    s.add_argument(
        "--memento",
        action="store_true",
        help="also answer Memento (RFC 7089) TimeGates, TimeMaps and mementos without the "
        "token, read-only, so Memento clients and Robust Links resolve here",
    )
    s.set_defaults(func=cmd_serve)


def _check_at(value: str | None) -> str | None:
    if value is None:
        return None
    from archiver_app.warc.timestamps import normalise_ts

    digits = "".join(ch for ch in value if ch.isdigit())
    try:
        return normalise_ts(digits)
    except ValueError as exc:
        raise InputError(
            f"--at {value!r} is not a time: use YYYY, YYYYMMDD or YYYYMMDDhhmmss"
        ) from exc


def cmd_replay(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.validation import validate_capture_url

    url = validate_capture_url(args.url, to_be="replayed")
    at = _check_at(args.at)
    library = ctx.open_library()
    try:
        if args.screenshot is not None:
            return _screenshot(library, url, at, args, ctx)
        return _window(library, url, at)
    finally:
        library.close()


def _screenshot(
    library: Any, url: str, at: str | None, args: argparse.Namespace, ctx: Context
) -> int:
    from archiver_app.gui.replay.standalone import render_to_file
    from archiver_app.urls import display_url

    result: Any = render_to_file(
        library,
        url,
        args.screenshot,
        at=at,
        width=args.width,
        height=args.height,
        full_page=not args.viewport_only,
        timeout=args.timeout,
    )
    for entry in result.requests:
        print(request_line(entry.outcome, entry.url, entry.detail), file=ctx.out)
    if not result.ok:
        print(
            f"archiver: the page could not be replayed ({result.page_kind}); "
            f"the PNG shows the message",
            file=ctx.err,
        )
        return 1
    if result.went_on_to:  # the page was shown: it is archived (exit 0, as docs/replay.md says)
        print(
            f"archiver: the page went on to {display_url(result.went_on_to)}, which is not "
            "archived; the PNG shows the message saying so, not the page",
            file=ctx.err,
        )
    made = f", capture {result.capture_ts[:14]}" if result.capture_ts else ""
    print(f"wrote {args.screenshot} ({result.size[0]}x{result.size[1]}{made})", file=ctx.out)
    return 0


def _cannot_listen(port: int, exc: OSError) -> str:
    """One line for a port ``serve`` cannot listen on."""
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} is in use on 127.0.0.1; choose another with --port"
    return f"cannot listen on 127.0.0.1 port {port}: {exc.strerror or exc}"


def _window(library: Any, url: str, at: str | None) -> int:
    from archiver_app.gui.replay.standalone import run_window

    return run_window(library, url, at)


def cmd_serve(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.replay.server import ReplayServer

    library = ctx.open_library()
    try:
        server = ReplayServer(library, port=args.port, memento=args.memento)
    except OSError as exc:
        library.close()
        raise InputError(_cannot_listen(args.port, exc)) from exc
    print(f"serving {library.root} at {server.base_url}", file=ctx.out)
    print("open pages as <that address><timestamp or 'latest'>/<original URL>", file=ctx.out)
    print(
        f"(once opened, {server.origin}/<timestamp>/<URL> works without the token in that browser)",
        file=ctx.out,
    )
    print(f"example: {server.url_for('https://example.org/')}", file=ctx.out, flush=True)
    if args.memento:
        print(
            f"Memento: TimeGate {server.origin}/timegate/<URL>, TimeMap "
            f"{server.origin}/timemap/link/<URL>, mementos {server.origin}/<timestamp>/<URL>"
            " (no token needed)",
            file=ctx.out,
            flush=True,
        )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        library.close()
    return 0


def request_line(outcome: str, url: str, detail: str) -> str:
    """One line of ``replay --screenshot``'s listing: ``OUTCOME<TAB>URL  (detail)``, the
    addresses shown readable as everywhere else a person reads them."""
    from archiver_app.urls import display_text, display_url

    shown = f"  ({display_text(detail)})" if detail else ""
    return f"{outcome}\t{display_url(url)}{shown}"
