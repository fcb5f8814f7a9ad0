"""The library lost and found again, as the loops that retry on their own see it.

A shared library's database may stop answering (the server stopped, the network dropped:
:func:`~archiver_app.errors.database_lost`) and a library's folder may go away (a share
unmounted: :meth:`~archiver_app.library.Library.check_folder`). Loops that try again by
themselves (the window's status, jobs and drives reads, its idle migrator and watch
scheduler; a job's heartbeat) report each try to the library's :class:`Outages`
(``lib.outages``): the first failure of an outage is said in one line, without a
traceback, the first success after it in one line, and nothing in between, whichever
loops fail meanwhile. Any other error is logged with its traceback, once per distinct
error (where, type and message), not at each retry. Front ends read :attr:`Outages.current`
to show the outage while it lasts.

Threading contract: any thread; one lock guards the state.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, TypeVar

from archiver_app.errors import LibraryError
from archiver_app.tasks import Cancelled
from archiver_app.units import human_duration

if TYPE_CHECKING:
    from archiver_app.library_share import FolderCheck

T = TypeVar("T")
log = logging.getLogger(__name__)

#: Distinct unexpected errors remembered (each logged once); past this, the oldest go.
REMEMBERED = 200


class OutageKind(StrEnum):
    DATABASE = "database"  # a shared library's database server does not answer
    FOLDER = "folder"  # the library's folder is gone (a share unmounted, a drive unplugged)


@dataclass(frozen=True)
class Outage:
    """One outage while it lasts: what is lost, why (one line), and since when."""

    kind: OutageKind
    reason: str
    since: datetime  # wall clock, for people
    started: float  # monotonic, for durations

    @property
    def message(self) -> str:
        """``the library's database is unreachable: <why>`` (one line)."""
        what = "database is unreachable" if self.kind is OutageKind.DATABASE else "folder is gone"
        return f"the library's {what}: {self.reason}"


def outage_of(
    exc: BaseException, check_folder: Callable[[], FolderCheck] | None = None
) -> tuple[OutageKind, str] | None:
    """``(kind, reason)`` when ``exc`` is the library lost: its database unreachable, or,
    for a file error or a refusal, its folder gone (``check_folder`` asked then); None for
    any other error."""
    from archiver_app.store.connection_loss import (
        DatabaseUnreachableError,
        lost_connection,
        unreachable_message,
    )

    seen: BaseException | None = exc
    for _ in range(8):  # a chain of causes, never a cycle
        if seen is None:
            break
        if lost_connection(seen):
            return OutageKind.DATABASE, unreachable_message(seen).partition(": ")[2]
        if isinstance(seen, DatabaseUnreachableError):  # a job's process could not open it
            return OutageKind.DATABASE, seen.message
        seen = seen.__cause__ or seen.__context__
    if check_folder is not None and isinstance(exc, OSError | LibraryError):
        check = check_folder()
        if not check.ok:
            return OutageKind.FOLDER, check.message
    return None


class Outages:
    """What this process's background loops know of the library's reach."""

    def __init__(
        self,
        check_folder: Callable[[], FolderCheck] | None = None,
        *,
        logger: logging.Logger = log,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = datetime.now,
    ) -> None:
        self._check_folder = check_folder
        self._log, self._clock, self._now = logger, clock, now
        self._lock = threading.Lock()
        self._current: dict[OutageKind, Outage] = {}
        self._said: dict[tuple[str, str, str], None] = {}  # unexpected errors logged

    @property
    def current(self) -> Outage | None:
        """The outage going on (the database's first), else None."""
        with self._lock:
            return self._current.get(OutageKind.DATABASE) or self._current.get(OutageKind.FOLDER)

    def of(self, kind: OutageKind) -> Outage | None:
        """The outage of ``kind`` going on, else None."""
        with self._lock:
            return self._current.get(kind)

    def clock(self) -> float:
        """Now, as :meth:`reached`'s ``tried_at`` wants it."""
        return self._clock()

    def attempt(
        self,
        doing: str,
        fn: Callable[[], T],
        *,
        kinds: tuple[OutageKind, ...] = (OutageKind.DATABASE,),
        log_others: bool = True,
    ) -> T:
        """``fn()``, reported: its success as :meth:`reached` (``kinds``: what it
        reached), what it raised as :meth:`failed`, then raised again (a cancel passes
        untold)."""
        tried = self._clock()
        try:
            result = fn()
        except Cancelled:
            raise
        except Exception as exc:
            self.failed(doing, exc, log_others=log_others)
            raise
        self.reached(kinds, tried_at=tried)
        return result

    def failed(self, doing: str, exc: BaseException, *, log_others: bool = True) -> Outage | None:
        """A try at ``doing`` ("counting the folders to migrate") raised ``exc``.

        Returns the outage when ``exc`` is the library lost (said once, as it begins). Any
        other error returns None, logged with its traceback the first time it is seen
        unless ``log_others`` is false (the caller shows it itself).
        """
        found = outage_of(exc, self._check_folder)
        if found is not None:
            return self.lost(doing, *found)
        if log_others:
            key = (doing, type(exc).__name__, str(exc))
            with self._lock:
                first = key not in self._said
                self._said[key] = None
                if len(self._said) > REMEMBERED:
                    del self._said[next(iter(self._said))]
            if first:
                self._log.error("%s failed", doing, exc_info=exc)
        return None

    def lost(self, doing: str, kind: OutageKind, reason: str) -> Outage:
        """The library is lost (``reason``: one line): said when this outage begins."""
        with self._lock:
            outage = self._current.get(kind)
            if outage is None:
                outage = Outage(kind, reason, self._now(), self._clock())
                self._current[kind] = outage
                again = "; trying again until it is back" if kind is OutageKind.DATABASE else ""
                self._log.warning("%s (while %s)%s", outage.message, doing, again)
        return outage

    def reached(
        self,
        kinds: tuple[OutageKind, ...] = (OutageKind.DATABASE,),
        *,
        tried_at: float | None = None,
    ) -> None:
        """A try reached the library (its database; ``kinds``): an outage of those kinds
        ends, said in one line. A try begun (``tried_at``, :meth:`clock`) before the outage
        was noticed ends nothing: it may have finished just before."""
        with self._lock:
            for kind in kinds:
                outage = self._current.get(kind)
                if outage is None or (tried_at is not None and tried_at < outage.started):
                    continue
                del self._current[kind]
                lasted = human_duration(self._clock() - outage.started)
                if kind is OutageKind.DATABASE:
                    said = f"the library's database answers again (unreachable for {lasted})"
                else:
                    said = f"the library's folder is back (gone for {lasted})"
                self._log.warning("%s", said)
