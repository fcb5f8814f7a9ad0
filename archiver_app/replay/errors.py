"""Why a URL cannot be replayed, in words the replay view shows as they are."""

from __future__ import annotations

from archiver_app.errors import ArchiverError


class ReplayError(ArchiverError):
    """A URL could not be replayed; ``kind`` names the case for front ends."""

    kind = "error"

    def __init__(self, message: str, *, url: str, details: str | None = None) -> None:
        super().__init__(message, details=details)
        self.url = url


class NotArchived(ReplayError):
    """Nothing in the library matches the URL, even fuzzily."""

    kind = "not-archived"


class RecordUnavailable(ReplayError):
    """The record is indexed but its WARC file is not here (offloaded to a drive, deleted).

    ``drives`` lists the labels of destinations that hold a verified copy.
    """

    kind = "missing-file"

    def __init__(
        self, message: str, *, url: str, path: str, drives: list[str], details: str | None = None
    ) -> None:
        super().__init__(message, url=url, details=details)
        self.path = path
        self.drives = drives


class DamagedRecord(ReplayError):
    """The record exists but cannot be read whole (truncated file, corrupt gzip member)."""

    kind = "damaged"


class RedirectLoop(ReplayError):
    """The archived redirects of a page lead back to a URL already visited."""

    kind = "redirect-loop"

    def __init__(self, message: str, *, url: str, chain: list[str]) -> None:
        super().__init__(message, url=url)
        self.chain = chain
