"""Chromium on a profile's folder: the visible login window, and adding cookies to it.

Both run Playwright's ``launch_persistent_context`` on the profile folder, with the same
flags as captures (:func:`archiver_app.capture.browser.launch_args`: in particular
``--password-store=basic``, so the cookies a login window saves are readable by the
headless captures that use them), while holding the profile's lock (:mod:`.lock`).

Threading contract: the functions here block (Playwright's sync API); call them from a
worker thread or a child process, never from a GUI thread.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from archiver_app.capture.browser import (
    BrowserInfo,
    launch_args,
    require_browser,
    sync_driver,
)
from archiver_app.errors import BrowserNotFoundError
from archiver_app.profiles.cookies_txt import Cookie
from archiver_app.profiles.lock import hold
from archiver_app.profiles.prefs import no_password_saving
from archiver_app.profiles.store import (
    ensure_profile,
    exists,
    read_notes,
    save_session_cookies,
    session_cookies,
    update_notes,
)
from archiver_app.units import counted
from archiver_app.validation import validate_capture_url

#: The login window's size: what most laptops show comfortably.
WINDOW_FLAGS = ("--window-size=1024,768",)


class LoginEnd(StrEnum):
    """How a login window ended."""

    CLOSED = "closed"  # the user closed the window (or every tab)
    CANCELLED = "cancelled"  # Archiver was asked to stop


@dataclass(frozen=True)
class LoginResult:
    profile: str
    url: str
    end: LoginEnd
    cookies: int  # cookies the profile holds when the window closed
    sites: tuple[str, ...]  # their domains, for the summary

    @property
    def message(self) -> str:
        where = ", ".join(self.sites[:5]) + (" ..." if len(self.sites) > 5 else "")
        return (
            f"profile {self.profile!r} saved: {counted(self.cookies, 'cookie')}"
            + (f" for {where}" if where else "")
            + ("" if self.end is LoginEnd.CLOSED else " (the window was closed by Archiver)")
        )


def persistent_options(
    info: BrowserInfo,
    *,
    headless: bool,
    flags: tuple[str, ...] = (),
    user_agent: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Keyword arguments for ``launch_persistent_context``: the quiet flags plus ``flags``
    (captures add their own), and ``extra`` options (viewport ...)."""
    options: dict[str, Any] = {
        "executable_path": str(info.path),
        "args": launch_args(extra=flags),
        "headless": headless,
        "handle_sigint": False,
        "handle_sigterm": False,
        "handle_sighup": False,
        "accept_downloads": False,
    }
    if user_agent:
        options["user_agent"] = user_agent
    options.update(extra)
    return options


def run_login(
    library_root: Path,
    name: str,
    url: str,
    *,
    browser: BrowserInfo | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    report: Callable[[str], None] = lambda _sentence: None,
) -> LoginResult:
    """Open a visible Chromium on profile ``name`` at ``url`` and wait until the user closes
    it (every tab), or ``cancelled()``; the profile keeps whatever the user did.

    ``report`` gets a sentence when the window is open and each time the cookies the
    profile holds change (so the user sees the login took before closing the window).

    Raises:
        InputError: a bad profile name or URL.
        ProfileBusyError: the profile is in use.
        BrowserNotFoundError: no browser, or it would not start (no display, for example).
    """
    url = validate_capture_url(url, to_be="opened")
    info = browser or require_browser(windows=True)
    with hold(library_root, name):
        new = not exists(library_root, name)
        folder = ensure_profile(library_root, name)
        no_password_saving(folder)  # no "Save password?" in the login window
        with sync_driver() as pw:
            try:
                context = pw.chromium.launch_persistent_context(
                    str(folder),
                    **persistent_options(
                        info, headless=False, flags=WINDOW_FLAGS, no_viewport=True
                    ),
                )
            except Exception as exc:
                if new:  # no login took place: leave no empty profile behind
                    shutil.rmtree(folder, ignore_errors=True)
                raise BrowserNotFoundError(
                    f"could not open a browser window with {info.path}{_no_display()}",
                    details=str(exc).splitlines()[0] if str(exc) else None,
                ) from exc
            seen = _Seen()
            try:
                _give(context, session_cookies(library_root, name))
                try:
                    end = _show(context, url, cancelled, report, seen)
                except KeyboardInterrupt:  # Ctrl+C in the terminal: keep what was done
                    end = LoginEnd.CANCELLED
            finally:
                with contextlib.suppress(Exception):  # the browser may have quit already
                    context.close()
        save_session_cookies(library_root, name, seen.cookies)
    agent, cookies = seen.agent, seen.cookies
    sites = _sites(cookies)
    update_notes(
        library_root,
        name,
        last_login_url=url,
        last_login_at=datetime.now(UTC),
        **({"user_agent": _headed_agent(agent)} if agent else {}),
    )
    return LoginResult(name, url, end, len(cookies), sites)


def _no_display() -> str:
    """Why a window cannot open, when it is plain: on Linux, no display to open it on."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return " (no display: DISPLAY and WAYLAND_DISPLAY are not set)"
    return ""


def _sites(cookies: list[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(sorted({str(c.get("domain", "")).lstrip(".") for c in cookies} - {""}))


@dataclass
class _Seen:
    """What the login window showed: the browser's user agent, and the cookies last read
    (while a window was open: a closing Chromium drops its session cookies)."""

    agent: str | None = None
    cookies: list[dict[str, Any]] = field(default_factory=list)


def _show(
    context: Any,
    url: str,
    cancelled: Callable[[], bool],
    report: Callable[[str], None],
    seen: _Seen,
) -> LoginEnd:
    """Open ``url`` in the window's tab and wait for the user, noting in ``seen``."""
    page = context.pages[0] if context.pages else context.new_page()
    with contextlib.suppress(Exception):
        seen.agent = str(page.evaluate("navigator.userAgent"))
    with contextlib.suppress(Exception):  # an unreachable site: the window is still theirs
        page.goto(url, wait_until="commit", timeout=60_000)
    report(f"a browser window is open at {url}: log in, then close the window")
    names: set[tuple[str, str]] = set()
    while context.pages:
        with contextlib.suppress(Exception):
            seen.cookies = list(context.cookies())
        now = {(str(c.get("domain")), str(c.get("name"))) for c in seen.cookies}
        if now != names:
            names = now
            sites = ", ".join(_sites(seen.cookies))
            report(f"the profile holds {counted(len(now), 'cookie')} for {sites}")
        if cancelled():
            return LoginEnd.CANCELLED
        try:
            context.pages[0].wait_for_event("close", timeout=250)
        except Exception:  # timed out (time to look at cancel), or the browser went away
            if not _alive(context):
                break
    # Ctrl+C reaches the browser too (one process group): it may quit before the loop
    # looks at the cancel
    return LoginEnd.CANCELLED if cancelled() else LoginEnd.CLOSED


def _give(context: Any, cookies: list[dict[str, Any]]) -> None:
    """Add ``cookies`` (Playwright's shape) to a context."""
    if cookies:
        context.add_cookies(cookies)


def _alive(context: Any) -> bool:
    try:
        context.pages[0].title() if context.pages else None
    except Exception:
        return False
    return True


def _headed_agent(agent: str) -> str:
    return agent.replace("HeadlessChrome", "Chrome")


def add_cookies(
    library_root: Path,
    name: str,
    cookies: Sequence[Cookie],
    *,
    browser: BrowserInfo | None = None,
    wait: float = 0.0,
) -> int:
    """Add ``cookies`` to profile ``name`` (made if new) through a headless Chromium on it;
    the number of cookies the profile holds afterwards."""
    info = browser or require_browser()
    with hold(library_root, name, wait=wait):
        folder = ensure_profile(library_root, name)
        no_password_saving(folder)
        agent = read_notes(library_root, name).get("user_agent")
        with sync_driver() as pw:
            try:
                context = pw.chromium.launch_persistent_context(
                    str(folder), **persistent_options(info, headless=True, user_agent=agent)
                )
            except Exception as exc:
                raise BrowserNotFoundError(
                    f"could not start the browser at {info.path}", details=str(exc)
                ) from exc
            try:
                _give(context, session_cookies(library_root, name))
                _give(context, [c.for_playwright() for c in cookies])
                now = [dict(c) for c in context.cookies()]
                save_session_cookies(library_root, name, now)
            finally:
                context.close()
    update_notes(library_root, name, cookies_imported_at=datetime.now(UTC))
    return len(now)
