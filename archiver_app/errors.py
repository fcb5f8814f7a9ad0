"""Errors that reach the user.

Every error a front end may show derives from :class:`ArchiverError`. Its ``str()`` is one
readable sentence; ``details`` carries anything longer (paths, the underlying exception) for
a "details" section. Front ends print or show these, never a traceback.
"""

from __future__ import annotations


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


class InputError(ArchiverError):
    """Bad input from the user: a malformed URL, an invalid regex, a file of the wrong kind."""

    exit_code = 2


class BrowserNotFoundError(ArchiverError):
    """No Chromium-based browser could be found or launched."""

    exit_code = 3
