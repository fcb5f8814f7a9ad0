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
from archiver_app.warc.records import SELECT_COLUMNS, IndexedRecord
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


@dataclass
class ExportPlan:
    snapshot_ids: list[int]
    records: list[IndexedRecord]  # in (file, offset) order: sequential reads
    files: dict[int, tuple[Path, bool]]  # file id -> (where to read it, gzip?)
    missing_files: dict[int, str] = field(default_factory=dict)  # file id -> reason
    originals_added: int = 0

    @property
    def total_bytes(self) -> int:
        return sum(r.length for r in self.records)


def _chunks(ids: list[int]) -> Iterator[list[int]]:
    for i in range(0, len(ids), CHUNK):
        yield ids[i : i + CHUNK]


def _fetch(conn: Connection, column: str, ids: list[int]) -> list[IndexedRecord]:
    out: list[IndexedRecord] = []
    for chunk in _chunks(ids):
        marks = ",".join(str(int(i)) for i in chunk)
        sql = f"SELECT {SELECT_COLUMNS} FROM records WHERE {column} IN ({marks})"  # noqa: S608
        out.extend(IndexedRecord.from_row(r) for r in conn.execute(text(sql)))
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
        chosen = {rec.id: rec for rec in rows}
        wanted = {
            orig for rec in rows if (orig := rec.revisit_of_id) is not None and orig not in chosen
        }
        added = 0
        while wanted:  # originals (an original is never itself a revisit, but be safe)
            extra = _fetch(conn, "id", sorted(wanted))
            wanted = set()
            for rec in extra:
                if rec.id not in chosen:
                    chosen[rec.id] = rec
                    added += 1
                orig = rec.revisit_of_id
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
