"""One process at a time on a profile folder.

Chromium refuses a user-data folder another Chromium has open (its ``SingletonLock``), and
two browsers writing one cookie database would lose logins. Every user of a profile (the
login window, cookie import, a capture, crawl or watch) holds this lock while its browser
runs: an advisory file lock (:mod:`archiver_app.filelock`) beside the profile folder, let go
by the operating system if its process dies.

Captures *wait* for the lock instead of copying the profile to a temporary folder: sites
renew session cookies as they are used, and a copy would throw the renewed cookie away
(the next capture would present a stale, perhaps revoked, token); a Chromium profile is
also tens of megabytes to copy for each job.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path

from archiver_app.errors import ArchiverError
from archiver_app.filelock import held_or_busy
from archiver_app.profiles import profiles_root


class ProfileBusyError(ArchiverError):
    """Another login window, cookie import or capture is using the profile."""


def lock_path(library_root: Path, name: str) -> Path:
    return profiles_root(library_root) / f".{name}.lock"


def try_hold(library_root: Path, name: str) -> contextlib.ExitStack | None:
    """Hold the profile's lock (close the returned stack to let go), or None when busy."""
    path = lock_path(library_root, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    stack = contextlib.ExitStack()
    if stack.enter_context(held_or_busy(path)):
        return stack
    stack.close()
    return None


def hold(
    library_root: Path,
    name: str,
    *,
    wait: float = 0.0,
    cancelled: Callable[[], bool] = lambda: False,
    poll: float = 0.25,
) -> contextlib.ExitStack:
    """Hold the profile's lock, waiting up to ``wait`` seconds for its holder to finish.

    Raises:
        ProfileBusyError: still held after ``wait`` seconds (or ``cancelled()`` turned True).
    """
    deadline = time.monotonic() + wait
    while True:
        stack = try_hold(library_root, name)
        if stack is not None:
            return stack
        if time.monotonic() >= deadline or cancelled():
            raise ProfileBusyError(
                f"profile {name!r} is in use by a login window or another capture",
                details="Close the login window or wait for the other capture to end, "
                "then try again.",
            )
        time.sleep(poll)


def in_use(library_root: Path, name: str) -> bool:
    """Whether some process holds the profile now (a moment's look, for lists)."""
    stack = try_hold(library_root, name)
    if stack is None:
        return True
    stack.close()
    return False
