"""``archiver login NAME URL``: log in to a site by hand in a visible browser window.

The window runs on the named profile (made if new) in the library's private folder; when
the user closes it, the profile keeps the session, and captures, crawls and watches given
``--profile NAME`` use it (docs/logins.md).
"""

from __future__ import annotations

import argparse
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "login",
        help="log in to a site in a visible browser window, kept as a named profile",
        description="Open a browser window on profile NAME (made if new) at URL. Log in as "
        "usual, then close the window: captures given --profile NAME use the session.",
    )
    p.add_argument("name", metavar="NAME", help="profile name, for example university")
    p.add_argument("url", metavar="URL", help="the page to start on (a login page)")
    p.set_defaults(func=cmd_login)


def cmd_login(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.commands._signals import first_ctrl_c
    from archiver_app.profiles import check_name
    from archiver_app.validation import validate_capture_url

    check_name(args.name)
    url = validate_capture_url(args.url, to_be="opened")
    stop = threading.Event()  # Ctrl+C: the window loop ends (it looks every 250 ms)

    def report(sentence: str) -> None:
        print(sentence, file=ctx.out, flush=True)

    with first_ctrl_c(stop.set), ctx.open_library(create=True) as lib:
        result = lib.profiles.login(args.name, url, report=report, cancelled=stop.is_set)
    print(result.message, file=ctx.out)
    print(
        f"capture with it: archiver capture --profile {args.name} URL",
        file=ctx.out,
    )
    return 0
