"""``index.json`` sidecars: read any known layout's index, write ours from the database.

Known formats (detected, not trusted):

- ``archivebox-0.7``: ArchiveBox's ``Link`` schema, ``history`` = ``{extractor: [result]}``
  with ``output`` paths relative to the snapshot folder, ``timestamp`` = Unix seconds.
- ``archivebox-0.8``: ArchiveBox's ``Snapshot`` JSON with an ``archive_results`` list of
  ``{extractor, output, status, start_ts, end_ts, ...}``.
- ``archiver-1`` / ``archiver-2``: ours, with an explicit ``fs_version``.

This module owns the file: its name (:data:`SIDECAR`), the shape we write
(:func:`build_sidecar`, from the row's :data:`SIDECAR_COLUMNS`), its one encoding
(:func:`encode_sidecar`: UTF-8 JSON on one line, keys sorted, non-ASCII escaped), reading
and writing. Every writer of a snapshot folder's index (capture, the importers, the layout
migrations) calls :func:`write_sidecar`; reading accepts any UTF-8 JSON (older versions
indented it and wrote non-ASCII characters as they are; other tools may start it with a
BOM).

Everything is normalised into :class:`ParsedIndex`. Output paths that leave the folder
(``../``, absolute, drive letters) are refused entry by entry and reported, never followed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from archiver_app import __version__
from archiver_app.durable import atomic_write
from archiver_app.errors import ArchiverError, InputError
from archiver_app.layout.current import is_safe_uid
from archiver_app.layout.versions import ARCHIVEBOX_07, ARCHIVEBOX_08, KNOWN_VERSIONS
from archiver_app.validation import safe_join

SIDECAR = "index.json"
ARCHIVEBOX_INDEX_COPY = "index.archivebox.json"
MAX_INDEX_BYTES = 64 * 1024 * 1024

Results = dict[str, list[dict[str, Any]]]


class UnreadableIndex(ArchiverError):
    """A folder's index.json is missing, not JSON, or not a format we know."""


@dataclass
class ParsedIndex:
    """What an index.json says about its snapshot, in one shape for every layout."""

    fs_version: str
    url: str
    captured_at: datetime
    title: str | None = None
    tags: list[str] = field(default_factory=list)
    archive_results: Results = field(default_factory=dict)
    uid: str | None = None
    collection: str | None = None
    refused: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)


def detect_version(data: dict[str, Any]) -> str | None:
    """The layout an index.json was written by, or None when it is not one we know."""
    version = data.get("fs_version")
    if isinstance(version, str) and version in KNOWN_VERSIONS:
        return version
    if isinstance(data.get("archive_results"), list):
        return ARCHIVEBOX_08
    if isinstance(data.get("history"), dict):
        return ARCHIVEBOX_07
    return None


def parse_unix_timestamp(value: object) -> datetime:
    """ArchiveBox's ``timestamp`` (``"1611111111.123"``) as an aware UTC datetime."""
    try:
        seconds = float(str(value))
    except ValueError as exc:
        raise UnreadableIndex(f"timestamp {value!r} is not a number") from exc
    if not 0 < seconds < 32503680000:  # before the year 3000
        raise UnreadableIndex(f"timestamp {value!r} is out of range")
    return datetime.fromtimestamp(seconds, UTC)


def read_index(folder: Path) -> ParsedIndex:
    """Parse ``folder/index.json``.

    Raises:
        UnreadableIndex: missing, unreadable, invalid JSON, or an unknown format.
    """
    path = folder / SIDECAR
    if path.is_symlink() or not path.is_file():
        raise UnreadableIndex(f"no index.json in {folder.name}")
    try:
        if path.stat().st_size > MAX_INDEX_BYTES:
            raise UnreadableIndex(f"index.json in {folder.name} is too large")
        data = json.loads(path.read_text(encoding="utf-8-sig"))  # a BOM from other tools
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UnreadableIndex(f"index.json in {folder.name} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise UnreadableIndex(f"index.json in {folder.name} is not a JSON object")
    return parse_index(data, folder)


def parse_index(data: dict[str, Any], folder: Path) -> ParsedIndex:
    version = detect_version(data)
    unsafe_uid: str | None = None
    if version is None:
        raise UnreadableIndex(f"index.json in {folder.name} is in no layout we know")
    url = data.get("url")
    if not isinstance(url, str) or not url.strip():
        raise UnreadableIndex(f"index.json in {folder.name} has no url")
    if version.startswith("archivebox"):
        captured_at = parse_unix_timestamp(data.get("timestamp"))
        results = _results_07(data) if version == ARCHIVEBOX_07 else _results_08(data)
        uid = collection = None
    else:
        try:
            captured_at = datetime.fromisoformat(str(data["captured_at"])).astimezone(UTC)
        except (KeyError, ValueError) as exc:
            raise UnreadableIndex(f"index.json in {folder.name} has no capture time") from exc
        raw_results = data.get("archive_results") or {}
        results = _results_07({"history": raw_results}) if isinstance(raw_results, dict) else {}
        uid = str(data["uid"]) if data.get("uid") else None
        if uid is not None and not is_safe_uid(uid):
            unsafe_uid, uid = uid, None
        collection = str(data["collection"]) if data.get("collection") else None
    title = data.get("title")
    parsed = ParsedIndex(
        fs_version=version,
        url=url.strip(),
        captured_at=captured_at,
        title=str(title) if title else None,
        tags=_tags(data.get("tags")),
        archive_results=results,
        uid=uid,
        collection=collection,
        raw=data,
    )
    parsed.refused = refuse_unsafe_outputs(folder, parsed.archive_results)
    if unsafe_uid is not None:
        parsed.refused.append(f"uid {unsafe_uid!r} is not a plain folder name (a new one is used)")
    return parsed


def _tags(value: object) -> list[str]:
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list):
        items = [str(v) for v in value]
    else:
        return []
    return sorted({t.strip() for t in items if t and t.strip()})


def _results_07(data: dict[str, Any]) -> Results:
    results: Results = {}
    for extractor, entries in (data.get("history") or {}).items():
        if isinstance(entries, list):
            results[str(extractor)] = [dict(e) for e in entries if isinstance(e, dict)]
    return results


def _results_08(data: dict[str, Any]) -> Results:
    results: Results = {}
    for entry in data.get("archive_results") or []:
        if isinstance(entry, dict) and entry.get("extractor"):
            results.setdefault(str(entry["extractor"]), []).append(dict(entry))
    return results


def refuse_unsafe_outputs(folder: Path, results: Results) -> list[str]:
    """Blank every ``output`` path leaving ``folder``; return one line per refusal."""
    refused: list[str] = []
    for extractor, entries in results.items():
        for entry in entries:
            output = entry.get("output")
            if not isinstance(output, str) or not output or "\n" in output:
                continue
            looks_like_path = "/" in output or "\\" in output or "." in output
            if not looks_like_path:
                continue
            try:
                safe_join(folder, output)
            except InputError:
                refused.append(f"{extractor}: output {output!r} leaves the snapshot folder")
                entry["output"] = None
                entry["refused_output"] = output
    return refused


def merge_results(*sources: Results) -> Results:
    """Archive results merged by extractor: every distinct result kept, oldest first."""
    merged: Results = {}
    for source in sources:
        for extractor, entries in source.items():
            bucket = merged.setdefault(extractor, [])
            for entry in entries:
                if entry not in bucket:
                    bucket.append(entry)
    for bucket in merged.values():
        bucket.sort(key=lambda e: str(e.get("start_ts") or ""))
    return merged


SIDECAR_COLUMNS = (
    "uid", "url", "captured_at", "folder", "fs_version", "title", "state", "http_status",
    "mime", "capture_backend", "capture_fidelity", "provenance", "profile",
)  # fmt: skip


def build_sidecar(
    values: Mapping[str, Any], slug: str | None, tags: list[str], files: list[dict[str, Any]]
) -> dict[str, Any]:
    """The ``index.json`` of a snapshot from its row values (see :data:`SIDECAR_COLUMNS`)."""
    provenance = dict(values["provenance"] or {})
    results = provenance.pop("archive_results", {})
    return {
        "fs_version": values["fs_version"],
        "uid": values["uid"],
        "url": values["url"],
        "captured_at": values["captured_at"].isoformat(),
        "collection": slug,
        "folder": values["folder"],
        "title": values["title"],
        "tags": sorted(tags),
        "state": values["state"],
        "http_status": values["http_status"],
        "mime": values["mime"],
        "capture_backend": values["capture_backend"],
        "capture_fidelity": values["capture_fidelity"],
        "archive_results": results,
        "provenance": provenance,
        "files": sorted(files, key=lambda f: str(f["path"])),
        "written_by": f"archiver {__version__}",
        # captured in a browser profile (logged in): the capture may show private data
        **({"profile": values["profile"]} if values.get("profile") else {}),
    }


def encode_sidecar(data: dict[str, Any]) -> bytes:
    """``index.json`` bytes: one line of JSON, keys sorted.

    Without ``indent`` Python uses its C encoder, about three times faster than the
    indenting pure-Python one, which counts when the migrator rewrites thousands of these
    (``python -m json.tool index.json`` shows one indented).
    """
    return (json.dumps(data, sort_keys=True, default=str) + "\n").encode("utf-8")


def write_sidecar(folder: Path, data: dict[str, Any] | bytes, *, durable: bool = True) -> bytes:
    """Write ``folder/index.json`` atomically (:func:`archiver_app.durable.atomic_write`,
    creating ``folder`` if needed); return the bytes written. ``data`` is the JSON object,
    or bytes from :func:`encode_sidecar`.

    Without ``durable`` nothing is fsynced: the caller runs
    :func:`archiver_app.durable.sync_filesystem` before it records the batch.
    """
    raw = data if isinstance(data, bytes) else encode_sidecar(data)
    atomic_write(os.path.join(folder, SIDECAR), raw, durable=durable, make_parent=True)
    return raw
