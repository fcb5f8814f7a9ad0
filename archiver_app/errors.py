"""Errors that reach the user.

Every error a front end may show derives from :class:`ArchiverError`. Its ``str()`` is one
readable sentence; ``details`` carries anything longer (paths, the underlying exception) for
a "details" section. Front ends print or show these, never a traceback.
"""

from __future__ import annotations

import sqlite3


class ArchiverError(Exception):
    """An expected failure with a message fit for the user."""

    exit_code = 1

    def __init__(self, message: str, *, details: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class LibraryError(ArchiverError):
    """The library folder or its database cannot be used."""

    exit_code = 2


class NewerLibraryError(LibraryError):
    """The library was written by a newer version of Archiver; we refuse to touch it."""


class LibraryBusyError(LibraryError):
    """Another process holds the library's database for writing beyond the busy timeout
    (an import or its undo finishing, a long job): nothing is wrong; try again soon."""

    exit_code = 75  # sysexits' EX_TEMPFAIL: try again later

    def __init__(self, message: str = "", *, details: str | None = None) -> None:
        super().__init__(message or LIBRARY_BUSY, details=details)


#: What a :class:`LibraryBusyError` says.
LIBRARY_BUSY = (
    "the library is busy: another Archiver process (an import or its undo finishing, a"
    " window, a command) is writing to it; try again in a moment"
)


def library_busy(exc: BaseException) -> LibraryBusyError | None:
    """``exc`` as a :class:`LibraryBusyError` if it (or what caused it: SQLAlchemy wraps
    the driver's error) is SQLite's "database is locked"; None otherwise."""
    seen: BaseException | None = exc
    for _ in range(8):  # a chain of causes, never a cycle
        if seen is None:
            return None
        if isinstance(seen, LibraryBusyError):
            return seen
        if isinstance(seen, sqlite3.OperationalError) and "locked" in str(seen):
            return LibraryBusyError(details=f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    return None


def database_lost(exc: BaseException) -> LibraryError | None:
    """``exc`` (or what caused it) as one sentence when it is a shared library's database
    going away (the server stopped, the network dropped), or refusing the connection for
    good (a wrong password: trying again does not cure it); None otherwise. A front end
    shows it instead of "something went wrong": nothing is broken, and nothing was changed."""
    from archiver_app.store.connection_loss import (
        lost_connection,
        refused_for_good,
        unreachable_message,
    )

    seen: BaseException | None = exc
    for _ in range(8):  # a chain of causes, never a cycle
        if seen is None:
            return None
        if lost_connection(seen):
            details = f"{type(seen).__name__}: {seen}"
            if (refusal := refused_for_good(seen)) is not None:
                return LibraryError(
                    "the library's database refused the connection: "
                    f"{refusal.reason.rstrip('.')}. Check the user and password (PGPASSWORD,"
                    " ~/.pgpass) and the database name. Nothing was changed.",
                    details=details,
                )
            why = unreachable_message(seen).partition(": ")[2]
            return LibraryError(
                f"the library's database is unreachable: {why}. Nothing was changed; when"
                " the database server can be reached again, refresh (F5) or try again.",
                details=details,
            )
        seen = seen.__cause__ or seen.__context__
    return None


class InputError(ArchiverError):
    """Bad input from the user: a malformed URL, an invalid regex, a file of the wrong kind."""

    exit_code = 2


class BrowserNotFoundError(ArchiverError):
    """No Chromium-based browser could be found or launched."""

    exit_code = 3
