"""What a killed capture wrote is kept: its ``.part`` WARC becomes a replayable snapshot.

The recorder writes each record as its own gzip member and flushes it, so a capture killed
mid-page leaves ``capture.warc.gz.part`` whose records are complete up to the one being
written. :func:`salvage_part_warc` copies the complete records (a byte prefix of the part
file, verified by reading it back) to ``capture.warc.gz``, registers it, indexes its
records and completes the snapshot with fidelity ``fallback`` and provenance saying what
happened. The ``.part`` file itself is left untouched. A part file with no complete
response, or that is not a WARC at all, changes nothing. A capture killed after closing
its WARC and writing its screenshot, DOM and text, before its ``index.json``, is salvaged
the same way from that WARC, whole, its views registered beside it.

:func:`adopt_part_folder` does the same for a snapshot folder no row names that holds only
its ``.part`` WARC (a browsing session killed before its page's row was written, before
rows came first): orphan import (:mod:`archiver_app.layout.orphans`) calls it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from sqlalchemy import select

from archiver_app.capture.persist import (
    VIEW_FILES,
    SnapshotOutcome,
    create_pending,
    finish_snapshot,
)
from archiver_app.capture.revisit_originals import (
    page_without_original,
    revisit_originals,
    with_originals,
)
from archiver_app.durable import atomic_write, is_temp
from archiver_app.errors import ArchiverError, InputError
from archiver_app.layout.sidecar import SIDECAR
from archiver_app.library import Library
from archiver_app.store.models import Collection, Fidelity, FileKind, Snapshot, SnapshotState
from archiver_app.warc.htmltext import extract_html, snippet_of
from archiver_app.warc.scan import ScannedRecord, scan_records
from archiver_app.warc.timestamps import parse_warc_date

WARC_NAME = "capture.warc.gz"
PART_NAME = WARC_NAME + ".part"
PAGEINFO = "urn:pageinfo:"  # the metadata record naming the address the tab showed
BUFFER = 1 << 20


def _complete_prefix(part: Path) -> list[ScannedRecord]:
    """The records from the start of ``part`` up to the first one that is cut short."""
    bad: set[int] = set()
    out: list[ScannedRecord] = []
    for rec in scan_records(part, on_problem=lambda p: bad.add(p.offset)):
        expected = out[-1].offset + out[-1].length if out else 0
        if rec.offset in bad or rec.offset != expected:
            break  # a record cut short, or a gap: keep only what comes before
        out.append(rec)
    return out


def _copy_prefix(src: Path, dest: Path, length: int) -> None:
    """``dest`` = the first ``length`` bytes of ``src``, written atomically."""

    def copy(fout: BinaryIO) -> None:
        with src.open("rb") as fin:
            left = length
            while left > 0 and (chunk := fin.read(min(BUFFER, left))):
                fout.write(chunk)
                left -= len(chunk)
        if left:
            raise OSError(f"{src} is shorter than its records say")

    atomic_write(dest, copy)


def _page_text(warc: Path, main: ScannedRecord) -> tuple[str | None, str | None, str | None]:
    """Title, text and language of the salvaged main page, when it is HTML."""
    if main.mime not in ("text/html", "application/xhtml+xml"):
        return None, None, None
    with contextlib.suppress(StopIteration):
        payload = next(
            r.payload for r in scan_records(warc, want_payload=lambda _r: True, start=main.offset)
        )
        if payload:
            page = extract_html(payload, main.charset)
            return page.title, page.text, page.language
    return None, None, None


@dataclass(frozen=True)
class _Interrupted:
    """What an interrupted snapshot's row says, read before its files are."""

    snapshot_id: int
    url: str
    folder: str
    uid: str
    job_id: int | None
    captured_at: datetime
    provenance: dict[str, Any]
    collection: str
    tags: list[str]


def _interrupted(lib: Library, snapshot_id: int) -> _Interrupted | None:
    with lib.session() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is None or not snap.folder or snap.state == SnapshotState.COMPLETE:
            return None
        coll = s.get(Collection, snap.collection_id)
        return _Interrupted(
            snapshot_id=snapshot_id,
            url=snap.url,
            folder=snap.folder,
            uid=snap.uid,
            job_id=snap.job_id,
            captured_at=snap.captured_at,
            provenance=dict(snap.provenance or {}),
            collection=coll.slug if coll else "default",
            tags=[t.name for t in snap.tags],
        )


def salvage_part_warc(
    lib: Library, snapshot_id: int, *, records: list[ScannedRecord] | None = None
) -> int:
    """Turn an interrupted snapshot's complete records into its WARC; records salvaged.
    ``records``: its part file's complete prefix, when the caller has read it already.

    A folder whose ``capture.warc.gz`` was closed (the capture was killed after writing
    its files, before its ``index.json``) is salvaged from that WARC, with its
    screenshot, DOM and text (:func:`_salvage_closed`)."""
    snap = _interrupted(lib, snapshot_id)
    if snap is None:
        return 0
    path = lib.abspath(snap.folder)
    part, warc = path / PART_NAME, path / WARC_NAME
    if warc.is_file() and not (path / SIDECAR).exists():
        return _salvage_closed(lib, snap, warc)
    if not part.is_file() or warc.exists():
        return 0
    if records is None:
        try:
            records = _complete_prefix(part)
        except (ArchiverError, OSError, ValueError):
            return 0  # not a WARC at all: nothing to keep beyond the part file itself
    if not any(r.rec_type in ("response", "revisit") for r in records):
        return 0
    end = max(r.offset + r.length for r in records)
    _copy_prefix(part, warc, end)
    again = _complete_prefix(warc)
    if [(r.offset, r.length) for r in again] != [(r.offset, r.length) for r in records]:
        warc.unlink()
        return 0
    salvaged = {
        "records": len(records),
        "from": PART_NAME,
        "bytes_kept": end,
        "bytes_left_in_part": part.stat().st_size - end,
    }
    reason = "the capture was interrupted; what it recorded before that was kept"
    return _record_salvaged(lib, snap, records, salvaged, reason)


def _salvage_closed(lib: Library, snap: _Interrupted, warc: Path) -> int:
    """Salvage the closed WARC ``warc`` of an interrupted snapshot, whole: 0 when it is
    not a WARC of complete records with a response (the row stays failed, files kept)."""
    try:
        records = _complete_prefix(warc)
    except (ArchiverError, OSError, ValueError):
        return 0
    end = max((r.offset + r.length for r in records), default=0)
    if end != warc.stat().st_size or not any(
        r.rec_type in ("response", "revisit") for r in records
    ):
        return 0  # cut short or damaged after all: not a file to register as it is
    salvaged = {"records": len(records), "from": WARC_NAME, "bytes_kept": end}
    reason = (
        "the capture was stopped after it wrote its files, before it recorded them;"
        " they were kept as written"
    )
    return _record_salvaged(lib, snap, records, salvaged, reason)


def _main_record(records: list[ScannedRecord], url: str) -> ScannedRecord:
    """The page's own record among ``records`` (which hold a response): the last answer
    for the address its ``urn:pageinfo:`` record names (the page as the tab showed it
    last), else the first for ``url``, else the first response."""
    responses = [r for r in records if r.rec_type in ("response", "revisit")]
    shown = next(
        (r.url.removeprefix(PAGEINFO) for r in records if r.url.startswith(PAGEINFO)), None
    )
    if shown is not None:
        answers = [r for r in responses if r.url == shown and not 300 <= (r.status or 0) < 400]
        if answers:
            return answers[-1]
    return next((r for r in responses if r.url == url), responses[0])


def _record_salvaged(
    lib: Library,
    snap: _Interrupted,
    records: list[ScannedRecord],
    salvaged: dict[str, Any],
    reason: str,
) -> int:
    """Complete ``snap`` from the WARC now in its folder (``records``, which hold a
    response) and the page's views written beside it; the number of records."""
    path = lib.abspath(snap.folder)
    main_scan = _main_record(records, snap.url)
    title, text, language = _page_text(path / WARC_NAME, main_scan)
    text_file = path / VIEW_FILES[FileKind.TEXT]
    if text_file.is_file():  # the page's rendered text, as the capture took it
        text = text_file.read_text(encoding="utf-8", errors="replace")
    originals = revisit_originals(lib, records)
    written = with_originals(records, originals)
    main = next(w for w in written if w.offset == main_scan.offset)
    if page_without_original(main, originals):
        return 0  # its page cannot be replayed: the row stays failed, its files kept
    views = [
        (f"{snap.folder}/{name}", kind)
        for kind, name in VIEW_FILES.items()
        if (path / name).is_file()
    ]
    outcome = SnapshotOutcome(
        snapshot_id=snap.snapshot_id,
        url=snap.url,
        state=SnapshotState.COMPLETE,
        folder=snap.folder,
        files=[(f"{snap.folder}/{WARC_NAME}", FileKind.WARC), *views],
        records=written,
        main=main,
        http_status=main.status,
        mime=main.mime,
        title=title,
        snippet=snippet_of(text) if text else None,
        language=language,
        fidelity=Fidelity.FALLBACK,
        provenance={
            **snap.provenance,
            "provenance": "interrupted",
            "salvaged": salvaged,
            "fidelity_reasons": [reason],
        },
        content_hash=main.digest,
        text=text or "",
        tags=snap.tags,
    )
    finish_snapshot(
        lib,
        outcome,
        uid=snap.uid,
        collection=snap.collection,
        captured_at=snap.captured_at,
        final_url=main.url,
        job_id=snap.job_id,
    )
    return len(written)


def adopt_part_folder(lib: Library, rel: str) -> int | None:
    """Give ``collections/<slug>/<yyyy>/<mm>/<uid>``, which no row names and which holds
    nothing but a ``.part`` WARC, a row (interrupted, failed), then salvage its complete
    responses; the row's id, or None when the folder is not that or holds no complete
    response (orphan import then sets it aside)."""
    parts = rel.split("/")
    path = lib.abspath(rel)
    if len(parts) != 5 or parts[0] != "collections" or not (path / PART_NAME).is_file():
        return None
    names = sorted(p.name for p in path.iterdir())
    if any(not name.endswith(".part") and not is_temp(name) for name in names):
        return None
    try:
        records = _complete_prefix(path / PART_NAME)
    except (ArchiverError, OSError, ValueError):
        return None
    responses = [r for r in records if r.rec_type in ("response", "revisit")]
    if not responses:
        return None
    slug, uid = parts[1], parts[4]
    with lib.session() as s:
        if s.scalar(select(Snapshot.id).where(Snapshot.uid == uid)) is not None:
            return None  # a copy of a snapshot that lives elsewhere
    try:
        collection_id = lib.ensure_collection(slug)
    except InputError:
        return None
    try:  # its first record (the warcinfo) was written as the WARC was opened
        captured_at = parse_warc_date(records[0].date)
    except ValueError:
        captured_at = datetime.fromtimestamp((path / PART_NAME).stat().st_mtime, UTC)
    snapshot_id = create_pending(
        lib,
        url=responses[0].url,
        collection_id=collection_id,
        captured_at=captured_at,
        uid=uid,
        folder=rel,
        job_id=None,
    )
    with lib.write() as s:
        snap = s.get(Snapshot, snapshot_id)
        assert snap is not None
        snap.state = SnapshotState.FAILED
        snap.provenance = {
            "provenance": "interrupted",
            "error": "the capture was interrupted before it finished",
            "part_files": names,
            "orphan_folder": rel,
        }
    salvage_part_warc(lib, snapshot_id, records=records)
    return snapshot_id


def complete_recorded_folder(lib: Library, snapshot_id: int) -> bool:
    """Complete a ``pending`` capture whose folder holds all it wrote, ``index.json`` last,
    from that folder: the capture finished but its final transaction never ran (a shared
    library's database went away at that moment). Every file the sidecar lists must be
    there with the digest it lists; then the row gets them, the WARC's records, its text
    and the sidecar's fields, with ``recovered`` in its provenance. False: not that case
    (nothing changed)."""
    from archiver_app.capture.persist import hash_files, save_outcome
    from archiver_app.layout.sidecar import UnreadableIndex, read_index

    with lib.session() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is None or snap.state != SnapshotState.PENDING or not snap.folder:
            return False
        uid, folder = snap.uid, snap.folder
    try:
        index = read_index(lib.abspath(folder))
    except UnreadableIndex:
        return False
    raw = index.raw
    listed = raw.get("files")
    if raw.get("uid") != uid or raw.get("state") != SnapshotState.COMPLETE or not listed:
        return False
    files = [(f"{folder}/{entry['path']}", str(entry["kind"])) for entry in listed]
    try:
        hashes = hash_files(lib.root, [*files, (f"{folder}/{SIDECAR}", FileKind.SIDECAR)])
    except OSError:
        return False  # a file it lists is gone: not a finished capture
    if any(
        hashes[rel] != (e["size"], e["sha256"]) for (rel, _k), e in zip(files, listed, strict=True)
    ):
        return False
    warc = next((rel for rel, kind in files if kind == FileKind.WARC), None)
    scanned = list(scan_records(lib.abspath(warc))) if warc else []
    originals = revisit_originals(lib, scanned)
    records = with_originals(scanned, originals)
    final = raw.get("final_url") or raw.get("url")
    responses = [r for r in records if r.record_type in ("response", "revisit")]
    main = next((r for r in responses if r.url == final), responses[0] if responses else None)
    if page_without_original(main, originals):
        return False  # a revisit of a capture deleted since: its page cannot be replayed
    text_file = lib.abspath(folder) / "text.txt"
    text = text_file.read_text(encoding="utf-8", errors="replace") if text_file.is_file() else ""
    warc_first = sorted(files, key=lambda f: f[1] != FileKind.WARC)
    save_outcome(
        lib,
        SnapshotOutcome(
            snapshot_id=snapshot_id,
            url=str(raw.get("url")),
            state=SnapshotState.COMPLETE,
            folder=folder,
            files=[*warc_first, (f"{folder}/{SIDECAR}", FileKind.SIDECAR)],
            records=records,
            main=main,
            http_status=raw.get("http_status"),
            mime=raw.get("mime"),
            title=raw.get("title"),
            snippet=raw.get("snippet"),
            language=raw.get("language"),
            fidelity=raw.get("capture_fidelity"),
            provenance={
                **(raw.get("provenance") or {}),
                "recovered": "its files were all written; the database was unreachable as it"
                " finished, and its row was completed from its folder later",
            },
            content_hash=raw.get("content_hash"),
            text=text,
            tags=list(raw.get("tags") or ()),
            captured_at=index.captured_at,  # its page's record's time, as the capture gave it
        ),
        hashes,
    )
    return True
