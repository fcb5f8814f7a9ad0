"""``archiver browser``: show which browser captures use, or install one."""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("browser", help="find or install the browser used for captures")
    actions = p.add_subparsers(dest="browser_action", metavar="ACTION")
    actions.add_parser("show", help="print the browser captures will use (default)")
    install = actions.add_parser(
        "install",
        help="get a browser: Playwright's Chromium, else the system package (as root)",
    )
    install.add_argument(
        "--if-missing", action="store_true", help="do nothing when a browser is already found"
    )
    p.set_defaults(func=cmd_browser)


def cmd_browser(args: argparse.Namespace, ctx: Context) -> int:
    from archiver_app.capture.browser import find_browser, install_hint

    if args.browser_action == "install":
        return install_browser(ctx, only_if_missing=args.if_missing)
    found = find_browser(with_version=True)
    if found is None:
        print("no browser found. Get one with: " + install_hint(), file=ctx.out)
        return 1
    print(found.describe(), file=ctx.out)
    if not found.headless_shell:
        print(shell_hint() or "", end="", file=ctx.out)
    return 0


def shell_hint() -> str | None:
    """A line about an installed headless shell the user has not chosen, or None."""
    from archiver_app.capture.browser import BROWSER_ENV, find_headless_shell

    shell = find_headless_shell()
    if shell is None:
        return None
    return (
        f"also installed: Chromium's headless shell at {shell}: crawls take about two thirds "
        "of the time, but pages can tell it from a person's browser; "
        f"choose it with {BROWSER_ENV}={shell} or in Settings\n"
    )


def _run(cmd: list[str], ctx: Context, env: dict[str, str] | None = None) -> bool:
    print("$ " + " ".join(cmd), file=ctx.out, flush=True)
    try:
        return subprocess.run(cmd, check=False, env=env).returncode == 0
    except OSError as exc:
        print(f"  failed: {exc}", file=ctx.err)
        return False


def playwright_install_command() -> tuple[list[str], dict[str, str] | None]:
    """``playwright install chromium``, also from a frozen build (no ``python -m`` there)."""
    if not getattr(sys, "frozen", False):
        return [sys.executable, "-m", "playwright", "install", "chromium"], None
    from playwright._impl._driver import compute_driver_executable, get_driver_env

    node, cli = compute_driver_executable()
    return [node, cli, "install", "chromium"], get_driver_env()


def install_browser(ctx: Context, *, only_if_missing: bool) -> int:
    from archiver_app.capture.browser import find_browser, install_hint

    found = find_browser()
    if found is not None and only_if_missing:
        print(f"browser: {found.describe()}", file=ctx.out)
        return 0
    command, env = playwright_install_command()
    if _run(command, ctx, env):
        found = find_browser()
    elif platform.system() == "Linux" and shutil.which("apt-get") and os.geteuid() == 0:
        print("Playwright's download failed; installing the system package instead", file=ctx.out)
        _run(["apt-get", "install", "-y", "chromium"], ctx)
        found = find_browser()
    if found is None:
        print("could not install a browser. Get one with: " + install_hint(), file=ctx.err)
        return 1
    print(f"browser: {found.describe()}", file=ctx.out)
    return 0
