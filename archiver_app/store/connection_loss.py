"""Telling a lost database connection apart from every other database error.

A shared library's PostgreSQL is reached over a network: the server may be stopped or
restarted, the network may drop. What psycopg raises then (through SQLAlchemy's
``OperationalError`` or ``InterfaceError``) is not a bug and not bad input: the command or
worker should say so in one line and leave the rest to the database (nothing committed is
lost; a worker's claims expire with their leases). :func:`lost_connection` says whether an
exception is that; :func:`unreachable_message` is the line.

What counts: SQLAlchemy saw the connection die (``connection_invalidated``), libpq failed
without a server answer (no SQLSTATE: connection refused, server closed the connection,
timeout), SQLSTATE class ``08`` (connection exception), or the server shutting down or
starting (``57P01``-``57P03``). A deadlock, a lock timeout or a cancelled statement are
answers from a live server and do not count. SQLite is a local file: never "unreachable".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from archiver_app.errors import LibraryError

#: Server states that mean it is going away or not there yet.
_SHUTTING_DOWN = frozenset({"57P01", "57P02", "57P03"})
#: The exit status of a command or worker that lost its database (sysexits' EX_TEMPFAIL:
#: try again later).
EXIT_UNREACHABLE = 75


class DatabaseUnreachableError(LibraryError):
    """A shared library's database cannot be reached (when opening it); try again later."""

    exit_code = EXIT_UNREACHABLE


def lost_connection(exc: BaseException) -> bool:
    """Is ``exc`` the database server or the network to it going away?"""
    if not isinstance(exc, OperationalError | InterfaceError):
        return False
    orig = exc.orig
    if orig is None or not type(orig).__module__.startswith("psycopg"):
        return False
    if exc.connection_invalidated:
        return True
    state = getattr(orig, "sqlstate", None)
    if state is None:
        return True
    return str(state).startswith("08") or state in _SHUTTING_DOWN


#: Server refusals at connect time that waiting does not cure are told apart by their text:
#: libpq gives no SQLSTATE before a session exists. These, by contrast, pass.
_PASSING = ("too many clients", "starting up", "shutting down", "in recovery")
#: libpq's own line when the server asks for a password and it has none to give (no
#: password in the URL, no PGPASSWORD, no matching ~/.pgpass line): no ``FATAL``, no
#: SQLSTATE, yet the server answered.
_NO_PASSWORD = "fe_sendauth: no password supplied"  # noqa: S105 - libpq's words


class RefusalKind(StrEnum):
    NO_PASSWORD = "no-password"  # noqa: S105 - a code: the server asks for one, none given
    REFUSED = "refused"  # the server's FATAL: a wrong password, user or database


@dataclass(frozen=True)
class Refusal:
    """Why a server that answered refused the connection for good."""

    kind: RefusalKind
    reason: str  # the server's (or libpq's) words


def refused_for_good(exc: BaseException) -> Refusal | None:
    """How the server refused a connection it answered, when trying again does not cure it
    (a wrong or missing password, a user or database that does not exist); None otherwise
    (not reached, or a passing refusal)."""
    orig = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    text = " ".join(str(orig).split())
    if _NO_PASSWORD in text:
        return Refusal(RefusalKind.NO_PASSWORD, _NO_PASSWORD)
    _, fatal, why = text.partition("FATAL:")
    if not fatal or any(word in why for word in _PASSING):
        return None
    return Refusal(RefusalKind.REFUSED, why.strip())


def unreachable_message(exc: BaseException) -> str:
    """``database unreachable: <the driver's first line>``."""
    orig = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    first = next((line.strip() for line in str(orig).splitlines() if line.strip()), "")
    return f"database unreachable: {first or type(orig).__name__}"


def not_connected(where: str, exc: OperationalError) -> LibraryError:
    """What to raise when a shared library's database (``where``: its URL without the
    password) refused or could not be reached as the library opened: a refusal that trying
    again does not cure is exit 2, anything else exit 75 (try again)."""

    refusal = refused_for_good(exc)
    if refusal is not None and refusal.kind is RefusalKind.NO_PASSWORD:
        return LibraryError(
            f"the library's database {where} asks for a password and none was"
            " given: put it in ~/.pgpass (a line host:port:database:user:password, readable"
            " only by you) or in PGPASSWORD. Nothing was changed.",
            details=refusal.reason,
        )
    if refusal is not None:
        return LibraryError(
            f"the library's database {where} refused the connection:"
            f" {refusal.reason.rstrip('.')}. Check the URL's user, password (or"
            " PGPASSWORD, ~/.pgpass) and database name. Nothing was changed."
        )
    why = _one_line(str(exc.orig))
    return DatabaseUnreachableError(
        f"cannot reach the library's database {where}: "
        f"{why}{'' if why.endswith('?') else '.'} Nothing was changed.",
        details=repr(exc),
    )


def _one_line(message: str) -> str:
    """libpq's lines as one sentence after another ("... Connection refused. Is the server
    running ...?"), without the last full stop."""
    lines = [" ".join(line.split()) for line in message.splitlines() if line.strip()]
    return " ".join(f"{x}." if x[-1] not in ".?!:" else x for x in lines).rstrip(".")


__all__ = [
    "EXIT_UNREACHABLE",
    "DatabaseUnreachableError",
    "Refusal",
    "RefusalKind",
    "lost_connection",
    "not_connected",
    "refused_for_good",
    "unreachable_message",
]
