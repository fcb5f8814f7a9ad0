"""``lib.profiles``: the library's named browser profiles (logins kept for captures).

What the CLI (``archiver login``, ``archiver profiles``) and the GUI (the login dialog, the
capture dialog's profile chooser) call; the work is in :mod:`archiver_app.profiles`.
Logging in and importing cookies start a browser and block: call them off the GUI thread
(the GUI runs ``archiver login`` as a child process).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.profiles import check_name
from archiver_app.profiles.cookies_txt import BadLine, read_cookies_file
from archiver_app.profiles.store import (
    ProfileInfo,
    delete_profile,
    describe,
    ensure_profile,
    list_profiles,
    require,
)
from archiver_app.tasks import CancelToken, Progress

if TYPE_CHECKING:
    from archiver_app.profiles.session import LoginResult

__all__ = ["CookieImport", "ProfileInfo", "ProfilesManager", "login_in_child", "privacy_note"]


def privacy_note(profile: str) -> str:
    """What the table and the detail pane say about a capture made in ``profile``."""
    return f"captured with profile {profile} — may show private data"


@dataclass(frozen=True)
class CookieImport:
    """What ``import_cookies`` did: cookies added, expired ones left out, lines refused."""

    profile: str
    added: int
    expired: int
    bad_lines: tuple[BadLine, ...]
    held: int  # cookies the profile holds afterwards


class ProfilesManager:
    """``lib.profiles``: list, make, delete, log in, import cookies."""

    def __init__(self, library: Library) -> None:
        self._lib = library

    @property
    def root(self) -> Path:
        return self._lib.root

    def all(self) -> list[ProfileInfo]:
        return list_profiles(self.root)

    def names(self) -> list[str]:
        return [p.name for p in self.all()]

    def get(self, name: str) -> ProfileInfo:
        """Raises ``ProfileNotFoundError`` when there is no such profile."""
        return describe(self.root, check_name(name))

    def require(self, name: str) -> str:
        """``name`` if the profile exists (captures check before queueing a job)."""
        require(self.root, check_name(name))
        return name

    def create(self, name: str) -> ProfileInfo:
        ensure_profile(self.root, check_name(name), now=self._lib.clock())
        return self.get(name)

    def jobs_using(self, name: str) -> list[int]:
        """The running jobs (captures, crawls, watches, browsing) that capture in profile
        ``name``, oldest first: whom a capture waiting for the profile waits for."""
        from sqlalchemy import select

        from archiver_app.store.models import Job, JobStatus

        with self._lib.session() as s:
            rows = s.execute(
                select(Job.id, Job.config).where(Job.status == JobStatus.RUNNING).order_by(Job.id)
            ).all()
        return [i for i, config in rows if (config or {}).get("profile") == name]

    def delete(self, name: str, *, force: bool = False) -> None:
        """Delete profile ``name`` and its logins for good.

        Raises:
            InputError: (without ``force``) a watch captures in it, or a job not finished
                (queued, running, paused, to be retried) does: each capture would fail.
        """
        from archiver_app.watch.runner import list_watches

        name = check_name(name)
        users = [w.job_id for w in list_watches(self._lib) if w.profile == name]
        if users and not force:
            ids = ", ".join(str(i) for i in users)
            raise InputError(
                f"profile {name!r} is used by watch {ids}: each of its captures would fail"
                f" without it. Remove the watch first (archiver watch remove {users[0]}), or"
                " delete the profile anyway with --force"
            )
        pending = self._unfinished_jobs(name)
        if pending and not force:
            jobs = ", ".join(f"{i} ({kind}, {status})" for i, kind, status in pending)
            first = pending[0][0]
            raise InputError(
                f"profile {name!r} is used by job {jobs}: each of its pages would fail"
                f" without it. Let it finish, or abort it (archiver job abort {first}), or"
                " delete the profile anyway with --force"
            )
        delete_profile(self.root, name)

    def _unfinished_jobs(self, name: str) -> list[tuple[int, str, str]]:
        """(id, kind, status) of the jobs, not watches, that will still capture in profile
        ``name``: queued, running, paused, to be retried, or stopping."""
        from sqlalchemy import select

        from archiver_app.store.models import Job, JobStatus

        waiting = (
            JobStatus.QUEUED,
            JobStatus.RUNNING,
            JobStatus.PAUSED,
            JobStatus.RETRYABLE,
            JobStatus.CANCELLING,
        )
        with self._lib.session() as s:
            rows = s.execute(
                select(Job.id, Job.kind, Job.status, Job.config)
                .where(Job.status.in_(waiting), Job.schedule.is_(None))
                .order_by(Job.id)
            ).all()
        return [
            (i, str(kind), str(status))
            for i, kind, status, config in rows
            if (config or {}).get("profile") == name
        ]

    def login(
        self,
        name: str,
        url: str,
        *,
        cancelled: Callable[[], bool] = lambda: False,
        report: Callable[[str], None] = lambda _sentence: None,
    ) -> LoginResult:
        """Open the visible login window on profile ``name`` (made if new) at ``url``;
        blocks until the user closes it."""
        from archiver_app.profiles.session import run_login

        return run_login(self.root, check_name(name), url, cancelled=cancelled, report=report)

    def import_cookies(self, name: str, path: Path, *, wait: float = 0.0) -> CookieImport:
        """Add the cookies of a Netscape ``cookies.txt`` file to profile ``name`` (made if
        new). Good lines are added even when others are refused; a file with no cookie at
        all adds nothing and raises ``InputError`` naming its first bad lines."""
        from archiver_app.profiles.session import add_cookies

        check_name(name)
        parsed = read_cookies_file(path, now=time.time())
        if not parsed.cookies:
            why = "; ".join(str(b) for b in parsed.bad_lines[:3])
            expired = f"{parsed.expired} had expired" if parsed.expired else ""
            raise InputError(
                f"{path} holds no cookie to import"
                + (f" ({'; '.join(x for x in (expired, why) if x)})" if why or expired else "")
            )
        held = add_cookies(self.root, name, parsed.cookies, wait=wait)
        return CookieImport(
            name, len(parsed.cookies), parsed.expired, tuple(parsed.bad_lines), held
        )


def login_in_child(
    library: Library, name: str, url: str, *, progress: Progress, cancel: CancelToken
) -> LoginResult:
    """:meth:`ProfilesManager.login` for :func:`archiver_app.tasks.isolated.run_isolated`
    (the GUI's login window runs in a child process): each sentence the login reports is
    a progress message; cancelling closes the window."""
    from archiver_app.tasks import ProgressUpdate

    return library.profiles.login(
        name,
        url,
        cancelled=lambda: cancel.cancelled,
        report=lambda sentence: progress(ProgressUpdate(done=0, message=sentence)),
    )
