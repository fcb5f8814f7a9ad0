"""Where a captured page's tab comes from: a fresh context, or a profile's own browser.

:class:`FreshContexts` opens each page in a new, empty context of the shared capture
browser (no cookies, nothing left behind). :class:`ProfileBrowser` is a Chromium started on
a named profile's folder (``launch_persistent_context``): its pages share the profile's
cookies and storage, so they see what the user sees when logged in. It holds the profile's
lock while it runs (waiting for another process to finish with it, see
:mod:`archiver_app.profiles.lock`), gives the browser the session cookies Archiver kept and
keeps them again when it closes, since sites renew them as they are used.

Both hand out :class:`Tab`\\s: a page and its context, and how to close them (a fresh
context is closed with its page; a profile's context outlives its pages).

Threading contract: used on the Capturer's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from archiver_app.capture.browser import CAPTURE_FLAGS, BrowserInfo
from archiver_app.capture.results import PageRules
from archiver_app.errors import BrowserNotFoundError

VIEWPORT = {"width": 1280, "height": 800}

#: How long a capture waits for a login window or another capture to let go of a profile.
PROFILE_WAIT_SECONDS = 300.0


class TabSource(Protocol):
    """Where :class:`~.page.PageCapture` gets its tab."""

    def is_connected(self) -> bool: ...

    async def open_tab(self, rules: PageRules) -> Tab: ...


@dataclass
class Tab:
    context: Any
    page: Any
    owns_context: bool

    def on_request(self, handler: Callable[[Any], None]) -> None:
        """Call ``handler`` for each request of this page (and, in a context of its own,
        of its service workers too)."""
        (self.context if self.owns_context else self.page).on("request", handler)

    async def close(self) -> None:
        if self.owns_context:
            await self.context.close()
        else:
            await self.page.close()


class FreshContexts:
    """Each tab in a new context of ``browser`` (a launched Playwright browser)."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser

    def is_connected(self) -> bool:
        return bool(self.browser.is_connected())

    async def open_tab(self, rules: PageRules) -> Tab:
        context = await self.browser.new_context(
            user_agent=rules.user_agent,
            viewport=VIEWPORT,
            accept_downloads=False,
            service_workers="allow",  # recorded from their own sessions (targets.py)
        )
        try:
            page = await context.new_page()
        except BaseException:
            with contextlib.suppress(Exception):
                await context.close()
            raise
        return Tab(context, page, owns_context=True)


class ProfileBrowser:
    """A headless Chromium on profile ``name``'s folder; see the module docstring.

    A page's ``user_agent`` rule does not apply: the browser presents the user agent of the
    window the user logged in with (a site may tie its session to it). The profile's HTTP
    cache (bypassed by each page, see ``page.py``) and its service workers (blocked) would
    otherwise answer from what earlier visits stored, and those answers never reach the
    WARC.
    """

    def __init__(self, library_root: Path, name: str) -> None:
        self.library_root, self.name = library_root, name
        self.context: Any = None
        self._lock: contextlib.ExitStack | None = None
        self._closed = False
        self.version: str | None = None

    @classmethod
    async def start(
        cls,
        pw: Any,
        library_root: Path,
        name: str,
        info: BrowserInfo,
        *,
        headless: bool = True,
        cancelled: Callable[[], bool] = lambda: False,
        wait: float = PROFILE_WAIT_SECONDS,
    ) -> ProfileBrowser:
        """Start the browser on the profile, waiting up to ``wait`` seconds for its lock.

        Raises:
            ProfileNotFoundError, ProfileBusyError, BrowserNotFoundError.
        """
        from archiver_app.profiles.lock import hold
        from archiver_app.profiles.prefs import no_password_saving
        from archiver_app.profiles.session import persistent_options
        from archiver_app.profiles.store import read_notes, require, session_cookies

        folder = require(library_root, name)
        made = cls(library_root, name)
        made._lock = await asyncio.to_thread(
            hold, library_root, name, wait=wait, cancelled=cancelled
        )
        try:
            await asyncio.to_thread(no_password_saving, folder)
            options = persistent_options(
                info,
                headless=headless,
                flags=CAPTURE_FLAGS,
                user_agent=read_notes(library_root, name).get("user_agent"),
                viewport=VIEWPORT,
                # the profile's service workers from earlier visits would answer from their
                # caches, which never reach the network (or the WARC)
                service_workers="block",
            )
            try:
                made.context = await pw.chromium.launch_persistent_context(str(folder), **options)
            except Exception as exc:
                raise BrowserNotFoundError(
                    f"could not start the browser on profile {name!r}", details=str(exc)
                ) from exc
            made.context.on("close", lambda _c: made._on_close())
            kept = session_cookies(library_root, name)
            if kept:
                await made.context.add_cookies(kept)
            made.version = await made._version()
        except BaseException:
            await made.close()
            raise
        return made

    async def _version(self) -> str | None:
        browser = self.context.browser
        if browser is not None:
            return str(browser.version)
        return None

    def _on_close(self) -> None:
        self._closed = True

    def is_connected(self) -> bool:
        return self.context is not None and not self._closed

    async def open_tab(self, rules: PageRules) -> Tab:
        return Tab(self.context, await self.context.new_page(), owns_context=False)

    async def close(self) -> None:
        """Keep the session cookies, close the browser, let go of the profile."""
        from archiver_app.profiles.store import save_session_cookies

        try:
            if self.context is not None and not self._closed:
                with contextlib.suppress(Exception):
                    cookies = [dict(c) for c in await self.context.cookies()]
                    await asyncio.to_thread(
                        save_session_cookies, self.library_root, self.name, cookies
                    )
                with contextlib.suppress(Exception):
                    await self.context.close()
        finally:
            self._closed = True
            if self._lock is not None:
                self._lock.close()
                self._lock = None
