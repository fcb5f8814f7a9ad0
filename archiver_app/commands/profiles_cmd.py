"""``archiver profiles``: list, delete, and import cookies into named browser profiles."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archiver_app.units import counted, human_bytes

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "profiles",
        help="named browser profiles: the logins captures can use",
        description="Profiles live in the library's private folder; they are never exported "
        "or mirrored. Make one with `archiver login NAME URL` (docs/logins.md).",
    )
    actions = p.add_subparsers(dest="profiles_action", metavar="ACTION", required=True)
    actions.add_parser("list", help="every profile, its last login and size")
    delete = actions.add_parser("delete", help="delete a profile and its logins for good")
    delete.add_argument("name", metavar="NAME")
    delete.add_argument(
        "--force",
        action="store_true",
        help="delete it even though a watch or an unfinished job captures in it",
    )
    cookies = actions.add_parser(
        "import-cookies", help="add the cookies of a Netscape cookies.txt file to a profile"
    )
    cookies.add_argument("name", metavar="NAME", help="profile name (made if new)")
    cookies.add_argument("file", type=Path, metavar="COOKIES.TXT")
    p.set_defaults(func=cmd_profiles)


def cmd_profiles(args: argparse.Namespace, ctx: Context) -> int:
    with ctx.open_library(create=args.profiles_action == "import-cookies") as lib:
        if args.profiles_action == "delete":
            lib.profiles.delete(args.name, force=args.force)
            print(f"deleted profile {args.name!r}", file=ctx.out)
            return 0
        if args.profiles_action == "import-cookies":
            report = lib.profiles.import_cookies(args.name, args.file)
            print(
                f"added {counted(report.added, 'cookie')} to profile {report.profile!r} "
                f"(it now holds {report.held})"
                + (f"; left out {report.expired} expired" if report.expired else ""),
                file=ctx.out,
            )
            for bad in report.bad_lines:
                print(f"  ! {args.file}: {bad}", file=ctx.err)
            return 1 if report.bad_lines else 0
        profiles = lib.profiles.all()
    if not profiles:
        print("no profiles yet; make one with `archiver login NAME URL`", file=ctx.out)
    for p in profiles:
        login = (
            f"last login {p.last_login_at:%Y-%m-%d %H:%M} at {p.last_login_url}"
            if p.last_login_at
            else "cookies imported"
            if p.cookies_imported_at
            else "never logged in"
        )
        busy = "  (in use)" if p.in_use else ""
        print(f"{p.name:<20} {human_bytes(p.size_bytes):>10}  {login}{busy}", file=ctx.out)
    return 0
