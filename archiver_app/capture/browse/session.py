"""A browsing session: a visible Chromium whose every page visited is saved, until Stop.

:class:`BrowseSession` starts a headed Chromium on a persistent user-data folder: the
library's named profile (:func:`archiver_app.profiles.profile_dir`) when one is given, so
the user browses logged in, else a fresh temporary one removed at the end (or, when the
session was killed, at the next one's start: :func:`sweep_temp_profiles`). Every tab
(those the user opens, popups) gets a :class:`~.tab.TabRecorder`; each page visited is
saved as a snapshot when the user leaves it (:mod:`.visit`), and reported to ``on_page``
and as progress (pages saved).

The session ends when :meth:`BrowseSession.stop` is called or its cancel token is
cancelled (Stop in the app, Ctrl+C, ``archiver job abort``), or when the user closes the
browser: either way the pages still open are snapshot if the browser is still there,
pending responses are written, and every page is saved before :meth:`BrowseSession.run`
returns. A kill leaves ``.part`` WARCs and ``pending`` rows, which the next capture start
reports or salvages (:func:`archiver_app.capture.persist.mark_interrupted`).

Tests and the app drive the browser through :attr:`BrowseSession.context` (the Playwright
browser context) once :meth:`BrowseSession.open` returned, as a user would.

Threading contract: a session lives on one asyncio event loop; :meth:`stop` may be called
from any thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Any

from archiver_app.capture.browse.inpage import INIT_SCRIPT
from archiver_app.capture.browse.tab import TabRecorder
from archiver_app.capture.browse.visit import (
    SavedPage,
    SessionFacts,
    Visit,
    discard_visit,
    save_visit,
)
from archiver_app.capture.browser import (
    QUIET_FLAGS,
    BrowserInfo,
    require_browser,
    start_async_driver,
)
from archiver_app.capture.extract import first_line
from archiver_app.errors import ArchiverError, BrowserNotFoundError, InputError
from archiver_app.jobs.pipeline import Pool
from archiver_app.library import DEFAULT_COLLECTION, Library
from archiver_app.tasks import CancelToken, Progress, ProgressUpdate, null_progress
from archiver_app.units import counted

DEFAULT_MAX_BODY = 256 << 20

#: One DevTools session sees a page's cross-site frames too (as for captures); no
#: back-forward cache, so going back loads (and records) the page again.
BROWSE_FLAGS: tuple[str, ...] = (
    "--disable-site-isolation-trials",
    "--disable-features=IsolateOrigins,site-per-process,BackForwardCache",
    "--disable-dev-shm-usage",
)


@dataclass(frozen=True)
class BrowseOptions:
    start_url: str | None = None
    collection: str = DEFAULT_COLLECTION
    profile: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY


class StopReason(StrEnum):
    STOPPED = "stopped"  # Stop, Ctrl+C, or the job was cancelled
    CLOSED = "closed"  # the user closed the browser


@dataclass(frozen=True)
class BrowseReport:
    """What a session saved, in the order the pages were left."""

    pages: list[SavedPage]
    stop: StopReason
    collection: str
    profile: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def saved(self) -> int:
        return sum(1 for page in self.pages if page.ok)

    def describe(self) -> list[str]:
        """The total, each page that failed, then what the session could not do (a page
        left unread, a screenshot not taken): ``archiver browse`` ends with these lines
        and the job's log keeps them."""
        how = "stopped" if self.stop is StopReason.STOPPED else "browser closed"
        lines = [f"saved {counted(self.saved, 'page')} into collection {self.collection!r} ({how})"]
        lines += [f"failed: {page.url}: {page.error}" for page in self.pages if not page.ok]
        return lines + [f"note: {note}" for note in dict.fromkeys(self.notes)]


def user_data_for(lib: Library, profile: str | None) -> Path | None:
    """The profile folder to browse on (None: a temporary one); refuses a bad or unknown
    name before a browser starts."""
    if profile is None:
        return None
    from archiver_app.profiles import ProfileNameError, profile_dir

    try:
        folder = profile_dir(lib.root, profile)
    except ProfileNameError as exc:
        raise InputError(str(exc)) from None
    if not folder.is_dir():
        raise InputError(
            f"there is no browser profile named {profile!r} in this library; "
            f"create it by logging in first (archiver login {profile} URL)"
        )
    return folder


#: The temporary profile of a session on no named profile: ``<temp>/archiver-browse-*``,
#: marked with the session's host and process (``host-pid``, as Chromium's lock is).
TEMP_PROFILE_PREFIX = "archiver-browse-"
OWNER_MARK = "archiver-session"
#: A temporary profile with neither mark this old is left over (one being started is
#: marked at once).
UNMARKED_PROFILE_SECONDS = 3600.0


def make_temp_profile() -> Path:
    """A new temporary profile, marked as this process's."""
    import socket

    folder = Path(tempfile.mkdtemp(prefix=TEMP_PROFILE_PREFIX))
    (folder / OWNER_MARK).write_text(f"{socket.gethostname()}-{os.getpid()}", "utf-8")
    return folder


def sweep_temp_profiles(now: float | None = None) -> list[Path]:
    """Remove the temporary profiles sessions killed before their end left behind (the
    sites' cookies and storage of a session, logins included, should not outlive it);
    return those removed. One is left over when neither the session that made it nor the
    Chromium that locks it (``SingletonLock``) still runs on this machine; one with
    neither mark, when it is over :data:`UNMARKED_PROFILE_SECONDS` old."""
    import socket
    import time

    host, now = socket.gethostname(), time.time() if now is None else now
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{TEMP_PROFILE_PREFIX}*"):
        if _left_over(folder, host, now):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _left_over(folder: Path, host: str, now: float) -> bool:
    from archiver_app.tasks.liveness import process_gone

    marks = []
    with contextlib.suppress(OSError):  # Chromium's lock: a link (POSIX) while it runs
        marks.append(os.readlink(folder / "SingletonLock"))
    with contextlib.suppress(OSError, ValueError):
        marks.append((folder / OWNER_MARK).read_text("utf-8"))
    if not marks:
        try:
            return now - folder.stat().st_mtime >= UNMARKED_PROFILE_SECONDS
        except OSError:
            return False
    for mark in marks:
        mark_host, _, pid = mark.strip().rpartition("-")
        if mark_host != host or not pid.isdigit() or not process_gone(int(pid)):
            return False
    return True


def check_display() -> None:
    """A visible browser needs a screen: say so instead of a browser crash."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        raise ArchiverError(
            "capture while browsing opens a browser window, and there is no display "
            "(neither DISPLAY nor WAYLAND_DISPLAY is set)"
        )


class BrowseSession:
    """See the module docstring."""

    def __init__(
        self,
        lib: Library,
        options: BrowseOptions = BrowseOptions(),
        *,
        job_id: int | None = None,
        progress: Progress = null_progress,
        cancel: CancelToken | None = None,
        on_page: Callable[[SavedPage], None] | None = None,
        browser: BrowserInfo | None = None,
    ) -> None:
        self.lib, self.options, self.job_id = lib, options, job_id
        self.progress, self.on_page, self.browser_info = progress, on_page, browser
        self.cancel = cancel or CancelToken()
        self.context: Any = None  # the Playwright BrowserContext, once open() returned
        self.loop: asyncio.AbstractEventLoop | None = None
        self.pages: list[SavedPage] = []
        self.notes: list[str] = []
        self._pw: Any = None
        self._tabs: dict[int, TabRecorder] = {}
        self._early: dict[int, list[Any]] = {}  # id(page) -> its requests before its tab
        self._orphans: list[Any] = []  # navigation requests made before their frame existed
        self._facts: SessionFacts | None = None
        self._temp_profile: Path | None = None
        self._closed_by_user = asyncio.Event()
        self._save_lock = asyncio.Lock()
        # pages' pending rows, written in order as their requests leave (.visit)
        self._rows = Pool(1, "browse-rows")
        self._tasks: set[asyncio.Future[None]] = set()
        self._ended = False

    async def __aenter__(self) -> BrowseSession:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def tab_of(self, page: Any) -> TabRecorder | None:
        """The recorder of a Playwright page of :attr:`context` (its ``current`` visit
        and that visit's ``views``: what the session last read of the page)."""
        return self._tabs.get(id(page))

    def stop(self) -> None:
        """End the session (from any thread); :meth:`run` saves everything and returns."""
        self.cancel.cancel()

    # ------------------------------------------------------------------ start

    async def open(self) -> None:
        """Check the options, start the browser and open the start page."""
        from archiver_app.capture.persist import mark_interrupted
        from archiver_app.validation import validate_capture_url, validate_slug

        self.loop = asyncio.get_running_loop()
        options = self.options
        validate_slug(options.collection)
        start_url = validate_capture_url(options.start_url) if options.start_url else None
        user_data = user_data_for(self.lib, options.profile)
        check_display()
        info = self.browser_info or require_browser(windows=True)
        await asyncio.to_thread(mark_interrupted, self.lib)  # killed earlier runs
        collection_id = await asyncio.to_thread(self.lib.ensure_collection, options.collection)
        if user_data is None:
            await asyncio.to_thread(sweep_temp_profiles)  # those of killed sessions
            user_data = self._temp_profile = await asyncio.to_thread(make_temp_profile)
        await self._launch(info, user_data)
        self._facts = SessionFacts(
            collection=options.collection,
            collection_id=collection_id,
            job_id=self.job_id,
            browser_version=self._browser_version(),
            profile=options.profile,
        )
        self.context.on("request", self._on_request)
        await self.context.add_init_script(INIT_SCRIPT)
        for page in list(self.context.pages):
            await self._add_tab(page)
        self.context.on("page", lambda page: self._spawn(self._add_tab(page)))
        if not self.context.pages:
            await self._add_tab(await self.context.new_page())
        if start_url is not None:
            self._spawn(self._goto(self.context.pages[0], start_url))

    async def _launch(self, info: BrowserInfo, user_data: Path) -> None:
        args = [*QUIET_FLAGS, *BROWSE_FLAGS]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.append("--no-sandbox")
        from archiver_app.profiles.prefs import no_password_saving

        await asyncio.to_thread(no_password_saving, user_data)  # no "Save password?"
        self._pw = await start_async_driver()
        try:
            self.context = await self._pw.chromium.launch_persistent_context(
                str(user_data),
                executable_path=str(info.path),
                args=args,
                headless=False,
                no_viewport=True,  # the page follows the window the user sizes
                accept_downloads=False,
                service_workers="allow",  # recorded from their own sessions (targets.py)
                handle_sigint=False,
                handle_sigterm=False,
                handle_sighup=False,
            )
        except Exception as exc:
            await self._pw.stop()
            self._pw = None
            self._remove_temp_profile()
            where = f"on profile {self.options.profile!r} " if self.options.profile else ""
            raise BrowserNotFoundError(
                f"could not start the browser at {info.path} {where}(is the profile open "
                "in another window?)",
                details=first_line(exc, 2000),
            ) from exc
        self.context.on("close", lambda _ctx: self._closed_by_user.set())

    def _browser_version(self) -> str | None:
        browser = getattr(self.context, "browser", None)
        return str(browser.version) if browser is not None else None

    def _on_request(self, request: Any) -> None:
        """Keep what a tab requests before its recorder listens (a popup's first page)."""
        try:
            page = request.frame.page
        except Exception:  # a popup's first request (before its frame), a service worker's
            if request.is_navigation_request():
                self._orphans.append(request)
            return
        tab = self._tabs.get(id(page))
        if tab is None:
            self._early.setdefault(id(page), []).append(request)
        elif not tab.listening:
            tab.early.append(request)

    def _claim_orphans(self, url: str) -> list[Any]:
        """The navigation requests for ``url`` no frame claimed yet (a popup's document)."""
        mine = [r for r in self._orphans if r.url == url]
        self._orphans = [r for r in self._orphans if r.url != url]
        return mine

    async def _add_tab(self, page: Any) -> None:
        if id(page) in self._tabs or self._ended or self._facts is None:
            return
        tab = TabRecorder(
            self.lib,
            self._facts,
            page,
            len(self._tabs) + 1,
            save=self._save,
            max_body=self.options.max_body_bytes,
            rows=self._rows,
            claim=self._claim_orphans,
        )
        tab.early.extend(self._early.pop(id(page), []))
        self._tabs[id(page)] = tab
        page.on("close", lambda _page: self._spawn(tab.stop(snapshot=False)))
        try:
            await tab.start()
        except Exception as exc:  # closed as soon as opened
            self.notes.append(f"tab {tab.number}: not recorded ({first_line(exc)})")

    async def _goto(self, page: Any, url: str) -> None:
        try:
            await page.goto(url, wait_until="commit")
        except Exception as exc:  # the page shows the browser's error; the user goes on
            self.notes.append(f"{url}: {first_line(exc)}")

    # ------------------------------------------------------------------ run and end

    async def run(self) -> BrowseReport:
        """Record until stopped or closed; then save everything and report."""
        while not self.cancel.cancelled and not self._closed_by_user.is_set():
            if self.context is not None and not self.context.pages and self._tabs:
                break  # every tab was closed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closed_by_user.wait(), 0.2)
        reason = StopReason.STOPPED if self.cancel.cancelled else StopReason.CLOSED
        await self.close()
        return BrowseReport(
            pages=list(self.pages),
            stop=reason,
            collection=self.options.collection,
            profile=self.options.profile,
            notes=tuple(self.notes),
        )

    async def close(self) -> None:
        """Snapshot the pages shown (if the browser is still there), write what is pending,
        save every page, then close the browser."""
        if self._ended:
            return
        self._ended = True
        alive = self.context is not None and not self._closed_by_user.is_set()
        tabs = list(self._tabs.values())
        await asyncio.gather(
            *(tab.stop(snapshot=alive and not tab.page.is_closed()) for tab in tabs),
            return_exceptions=True,
        )
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        for tab in tabs:
            self.notes.extend(tab.notes)
        self._rows.close()  # every visit was saved or discarded: its row is long written
        if self.context is not None:
            with contextlib.suppress(Exception):
                await self.context.close()
        if self._pw is not None:
            with contextlib.suppress(Exception):
                await self._pw.stop()
        self._remove_temp_profile()

    def _remove_temp_profile(self) -> None:
        if self._temp_profile is not None:
            shutil.rmtree(self._temp_profile, ignore_errors=True)
            self._temp_profile = None

    async def _save(self, visit: Visit) -> None:
        """Save one visit (one at a time, in the order pages were left)."""
        assert self._facts is not None
        facts = self._facts
        async with self._save_lock:
            if not visit.shown and not visit.wrote:
                await asyncio.to_thread(discard_visit, self.lib, visit)
                return
            try:
                snapshot_id = await asyncio.wrap_future(visit.row)
                saved = await asyncio.to_thread(save_visit, self.lib, visit, facts, snapshot_id)
            except Exception as exc:  # the row stays pending: reported as interrupted
                visit.abandon()
                self.notes.append(f"{visit.url}: could not be saved ({first_line(exc)})")
                return
            self.pages.append(saved)
        line = f"saved {saved.url}" + (f" ({saved.title})" if saved.title else "")
        self.progress(ProgressUpdate(len(self.pages), None, line))
        if self.on_page is not None:
            self.on_page(saved)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def browse(
    lib: Library,
    options: BrowseOptions = BrowseOptions(),
    *,
    job_id: int | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    on_page: Callable[[SavedPage], None] | None = None,
    on_ready: Callable[[BrowseSession], None] | None = None,
) -> BrowseReport:
    """Run a browsing session to its end (blocks): what the job and the CLI call.

    ``on_ready`` gets the live session once the browser shows (its :attr:`~BrowseSession.
    loop` runs the session: drive :attr:`~BrowseSession.context` from another thread with
    ``asyncio.run_coroutine_threadsafe``)."""

    async def main() -> BrowseReport:
        session = BrowseSession(
            lib, options, job_id=job_id, progress=progress, cancel=cancel, on_page=on_page
        )
        async with session:
            if on_ready is not None:
                on_ready(session)
            return await session.run()

    return asyncio.run(main())
