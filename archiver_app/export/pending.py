"""Timestamps that wait for the network, and the default authority.

A signed export whose authority could not be reached (no network, connection refused,
timed out, a 5xx) is written signed and queued here: the library's setting
``export.timestamps_pending`` lists each one (the WACZ's path, the authority, the signature
it must still carry, when it was queued, the attempts and the last error). The queue lives
in the database, so it survives the process; :func:`retry_pending` (``archiver export
timestamp-pending``, and the runtime when the app opens a library) asks again and puts each
token into its WACZ in place. That changes the WACZ's SHA-256: the outcome names the old
and the new one, and an edition's release on record takes the new one (the same release,
now timestamped: :func:`archiver_app.editions.recorded.restamped`). An authority that
answers garbage is not asked again.

``export.timestamp_authority`` holds the authority used when ``--timestamp`` names none.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from archiver_app.errors import InputError
from archiver_app.export.signing import Signing
from archiver_app.export.timestamps import (
    StampCode,
    StampOutcome,
    add_timestamp,
    read_digest,
    request_timestamp,
    stamped_message,
)
from archiver_app.export.writer import ExportResult
from archiver_app.hashing import hash_file
from archiver_app.library import Library
from archiver_app.store.models import Setting

PENDING_KEY = "export.timestamps_pending"
AUTHORITY_KEY = "export.timestamp_authority"


@dataclass(frozen=True)
class PendingStamp:
    path: Path
    url: str
    signature: str  # the export's signature when queued: the stamp is for that one
    queued_at: str
    attempts: int = 0  # requests made so far, the export's own included
    last_error: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "url": self.url,
            "signature": self.signature,
            "queued_at": self.queued_at,
            "attempts": self.attempts,
            "last_error": self.last_error,
        }


class RetryCode(StrEnum):
    ADDED = "added"  # stamped; the token is in the WACZ
    WAITING = "waiting"  # still unreachable: stays queued
    NOT_WRITTEN = "not written"  # stamped, but the export cannot be rewritten now: queued
    GAVE_UP = "gave up"  # the authority answered garbage: signed, not timestamped
    GONE = "gone"  # the export was moved, deleted or replaced: dropped from the queue


@dataclass(frozen=True)
class RetryResult:
    path: Path
    code: RetryCode
    message: str
    #: ADDED: the WACZ's SHA-256 before and after the token went in (a citation of the old
    #: one no longer matches the file)
    sha256_before: str | None = None
    sha256_after: str | None = None
    #: ADDED: the editions whose recorded release is this file, now with its new SHA-256
    editions: tuple[str, ...] = ()


def default_authority(lib: Library) -> str | None:
    """The authority a bare ``--timestamp`` asks (``lib.settings``), or None."""
    url = lib.settings.get(AUTHORITY_KEY)
    return str(url) if url else None


def set_default_authority(lib: Library, url: str | None) -> None:
    lib.settings.put(AUTHORITY_KEY, url)


def pending(lib: Library) -> list[PendingStamp]:
    with lib.session() as s:
        return _read(s)


def _read(s: Any) -> list[PendingStamp]:
    row = s.get(Setting, PENDING_KEY)
    entries = row.value if row is not None and isinstance(row.value, list) else []
    return [
        PendingStamp(
            Path(e["path"]),
            e["url"],
            e["signature"],
            e["queued_at"],
            int(e.get("attempts", 0)),
            str(e.get("last_error", "")),
        )
        for e in entries
    ]


def _write(s: Any, entries: list[PendingStamp]) -> None:
    row = s.get(Setting, PENDING_KEY)
    value = [e.as_json() for e in entries]
    if row is None:
        s.add(Setting(key=PENDING_KEY, value=value))
    else:
        row.value = value


def queue(lib: Library, path: Path, url: str, reason: str) -> PendingStamp:
    """Queue a timestamp for the signed WACZ at ``path`` (replacing one for the same path)
    after the export's own request failed: that is its first try."""
    signed = read_digest(path).get("signedData") or {}
    stamped_message(signed)  # refuses an unsigned export
    entry = PendingStamp(
        path.resolve(),
        url,
        str(signed["signature"]),
        datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        attempts=1,
        last_error=reason,
    )
    with lib.write() as s:
        _write(s, [e for e in _read(s) if e.path != entry.path] + [entry])
    return entry


def forget(lib: Library, path: Path) -> bool:
    """Stop waiting for the timestamp of the export at ``path`` (an authority that will
    never answer, a mistyped one); whether one was waiting. The export stays signed."""
    target = path.resolve()
    with lib.write() as s:
        entries = _read(s)
        kept = [e for e in entries if e.path != target]
        _write(s, kept)
    return len(kept) != len(entries)


def after_export(lib: Library, result: ExportResult, signing: Signing) -> None:
    """Keep a signed export's timestamp outcome on its result; queue it when unreachable."""
    # The token itself is in the WACZ; the result (kept in the job's row) says how it went.
    result.timestamp = signing.stamp and dataclasses.replace(signing.stamp, token=None)
    if signing.stamp is not None and signing.stamp.code is StampCode.UNREACHABLE:
        assert signing.timestamp is not None
        queue(lib, result.path, signing.timestamp, signing.stamp.message)


def retry_pending(lib: Library, *, timeout: float | None = None) -> list[RetryResult]:
    """Ask again for every queued timestamp; each outcome, in queue order."""
    results = []
    keep: PendingStamp | None
    down: set[str] = set()  # authorities that did not answer this time: not asked again
    for entry in pending(lib):
        if entry.url in down:
            keep = dataclasses.replace(entry, attempts=entry.attempts + 1)
            result = RetryResult(entry.path, RetryCode.WAITING, entry.last_error)
        else:
            result, keep = _retry(entry, timeout)
        if result.code is RetryCode.WAITING:
            down.add(entry.url)
        with lib.write() as s:  # one entry at a time: a kill loses no finished stamp
            result = _record_new_digest(s, result, lib.clock())
            rest = [e for e in _read(s) if e.path != entry.path]
            if keep is not None:
                rest.append(keep)
            _write(s, rest)
        results.append(result)
    return results


def _record_new_digest(s: Any, result: RetryResult, at: datetime) -> RetryResult:
    """A WACZ timestamped in place has a new SHA-256: say so, and when it is an edition's
    release, record the new one as its release's (the same release, now timestamped)."""
    from archiver_app.editions.recorded import restamped

    before, after = result.sha256_before, result.sha256_after
    if result.code is not RetryCode.ADDED or before is None or after is None:
        return result
    editions = tuple(restamped(s, result.path, before, after, at))
    text = f"{result.message}; its SHA-256 changed: {before} -> {after}"
    if editions:
        names = ", ".join(editions)
        text += f" (the release of edition {names} on record now has the new one)"
    return dataclasses.replace(result, message=text, editions=editions)


def _retry(entry: PendingStamp, timeout: float | None) -> tuple[RetryResult, PendingStamp | None]:
    try:
        signed = read_digest(entry.path).get("signedData") or {}
    except InputError as exc:
        return RetryResult(entry.path, RetryCode.GONE, str(exc)), None
    if signed.get("signature") != entry.signature:
        text = f"{entry.path} is no longer the export that was signed"
        return RetryResult(entry.path, RetryCode.GONE, text), None
    try:
        message = stamped_message(signed)
    except InputError as exc:
        return RetryResult(entry.path, RetryCode.GONE, str(exc)), None
    kwargs = {} if timeout is None else {"timeout": timeout}
    stamp: StampOutcome = request_timestamp(message, entry.url, **kwargs)
    if stamp.code is StampCode.UNREACHABLE:
        keep = dataclasses.replace(entry, attempts=entry.attempts + 1, last_error=stamp.message)
        return RetryResult(entry.path, RetryCode.WAITING, stamp.message), keep
    if stamp.code is StampCode.BAD_ANSWER or stamp.token is None:
        text = f"signed but not timestamped: {stamp.message}"
        return RetryResult(entry.path, RetryCode.GAVE_UP, text), None
    try:
        before, _size = hash_file(entry.path)
        add_timestamp(entry.path, stamp.token, signature=entry.signature)
    except InputError as exc:
        return RetryResult(entry.path, RetryCode.GONE, str(exc)), None
    except OSError as exc:  # the export's drive is full or gone for now: try again later
        keep = dataclasses.replace(entry, attempts=entry.attempts + 1, last_error=str(exc))
        return RetryResult(entry.path, RetryCode.NOT_WRITTEN, f"cannot write: {exc}"), keep
    when = stamp.time.strftime("%Y-%m-%dT%H:%M:%SZ") if stamp.time else "?"
    text = f"timestamped at {when}"
    try:
        after: str | None = hash_file(entry.path)[0]
    except OSError as exc:  # the token is in: not asked again, but its new digest is unknown
        after, text = None, f"{text}; its SHA-256 changed and cannot be read now: {exc}"
    return RetryResult(entry.path, RetryCode.ADDED, text, before, after), None
