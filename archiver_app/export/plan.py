"""What an export contains: the chosen snapshots, their records, and revisit originals.

A selection (collection, tag, search text, or all of them combined) picks snapshots; their
records are every ``records`` row attached to them. A ``revisit`` whose original is not
among them pulls the original in too, so the export stands alone (a replay tool finds the
payload inside the export, never in the library it came from).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Connection, text

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.search import Query, matching_ids
from archiver_app.warc.scan import is_gzip

CHUNK = 500


@dataclass(frozen=True)
class Selection:
    collection: str | None = None
    tag: str | None = None
    query: str | None = None

    def as_query(self) -> Query:
        return Query(
            text=self.query or "", collection=self.collection, tag=self.tag, prefix_last=False
        )


@dataclass(frozen=True)
class PlannedRecord:
    id: int
    url_key: str
    ts: str
    url: str
    record_type: str
    status: int | None
    mime: str | None
    digest: str | None
    file_id: int
    offset: int
    length: int


@dataclass
class ExportPlan:
    snapshot_ids: list[int]
    records: list[PlannedRecord]  # in (file, offset) order: sequential reads
    files: dict[int, tuple[Path, bool]]  # file id -> (where to read it, gzip?)
    missing_files: dict[int, str] = field(default_factory=dict)  # file id -> reason
    originals_added: int = 0

    @property
    def total_bytes(self) -> int:
        return sum(r.length for r in self.records)


_RECORD_COLS = (
    "id, url_key, ts, url, record_type, status, mime, digest, file_id, offset, length, "
    "revisit_of_id"
)


def _chunks(ids: list[int]) -> Iterator[list[int]]:
    for i in range(0, len(ids), CHUNK):
        yield ids[i : i + CHUNK]


def _fetch(conn: Connection, column: str, ids: list[int]) -> list[tuple[PlannedRecord, int | None]]:
    out = []
    for chunk in _chunks(ids):
        marks = ",".join(str(int(i)) for i in chunk)
        sql = f"SELECT {_RECORD_COLS} FROM records WHERE {column} IN ({marks})"  # noqa: S608
        for r in conn.execute(text(sql)):
            out.append((PlannedRecord(*r[:11]), r[11]))
    return out


def plan_export(library: Library, selection: Selection) -> ExportPlan:
    """Resolve ``selection`` into records to copy.

    Raises:
        InputError: the selection matches nothing.
    """
    snapshot_ids = matching_ids(library, selection.as_query())
    if not snapshot_ids:
        raise InputError("nothing to export: no snapshot matches the selection")
    with library.engine.connect() as conn:
        rows = _fetch(conn, "snapshot_id", snapshot_ids)
        chosen = {rec.id: rec for rec, _ in rows}
        wanted = {orig for _, orig in rows if orig is not None and orig not in chosen}
        added = 0
        while wanted:  # originals (an original is never itself a revisit, but be safe)
            extra = _fetch(conn, "id", sorted(wanted))
            wanted = set()
            for rec, orig in extra:
                if rec.id not in chosen:
                    chosen[rec.id] = rec
                    added += 1
                if orig is not None and orig not in chosen:
                    wanted.add(orig)
        file_ids = sorted({r.file_id for r in chosen.values()})
        files: dict[int, tuple[Path, bool]] = {}
        missing: dict[int, str] = {}
        for chunk in _chunks(file_ids):
            marks = ",".join(str(int(i)) for i in chunk)
            sql = f"SELECT id, path, external_path FROM files WHERE id IN ({marks})"  # noqa: S608
            for fid, rel, external in conn.execute(text(sql)):
                path = Path(external) if external else library.abspath(rel)
                if not path.is_file():
                    missing[fid] = f"{rel} is not on this computer"
                    continue
                files[fid] = (path, is_gzip(path))
    records = sorted(chosen.values(), key=lambda r: (r.file_id, r.offset))
    return ExportPlan(snapshot_ids, records, files, missing, added)
