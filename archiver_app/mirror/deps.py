"""Revisit dependencies: a WARC holding ``revisit`` records needs the files of the originals.

A snapshot whose WARC says "same payload as record R" is only replayable from a drive that
also holds R's file. ``records.revisit_of_id`` -> that record's ``file_id`` is the edge.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from archiver_app.store.models import File, Record

T = TypeVar("T")
CHUNK = 500


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def file_dependencies(
    session: Session, file_ids: Iterable[int] | None = None
) -> dict[int, set[int]]:
    """file id -> every file it needs (transitively) through revisit records."""
    rev, orig = aliased(Record), aliased(Record)
    base = (
        select(rev.file_id, orig.file_id)
        .join(orig, rev.revisit_of_id == orig.id)
        .where(rev.file_id != orig.file_id)
        .distinct()
    )
    direct: dict[int, set[int]] = defaultdict(set)
    if file_ids is None:
        for a, b in session.execute(base):
            direct[a].add(b)
    else:
        frontier = sorted(set(file_ids))
        seen = set(frontier)
        while frontier:
            nxt: list[int] = []
            for part in chunks(frontier):
                for a, b in session.execute(base.where(rev.file_id.in_(part))):
                    direct[a].add(b)
                    if b not in seen:
                        seen.add(b)
                        nxt.append(b)
            frontier = nxt
    closure: dict[int, set[int]] = {}
    for start in list(direct):
        out: set[int] = set()
        stack = list(direct[start])
        while stack:
            f = stack.pop()
            if f in out or f == start:
                continue
            out.add(f)
            stack.extend(direct.get(f, ()))
        closure[start] = out
    return closure


def snapshots_files(session: Session, snapshot_ids: Sequence[int]) -> set[int]:
    """The files of ``snapshot_ids``: theirs, and those holding their records (a page of
    an imported WARC shares that file with the WARC's other pages, and the file's row
    names one of them, or none)."""
    files: set[int] = set()
    for part in chunks(sorted(set(snapshot_ids))):
        files.update(session.scalars(select(File.id).where(File.snapshot_id.in_(part))))
        files.update(
            session.scalars(select(Record.file_id).where(Record.snapshot_id.in_(part)).distinct())
        )
    return files


def snapshot_files(session: Session, snapshot_id: int) -> tuple[set[int], set[int]]:
    """(the snapshot's own files (:func:`snapshots_files`), the other files they depend on)."""
    own = snapshots_files(session, [snapshot_id])
    needed: set[int] = set()
    for deps in file_dependencies(session, own).values():
        needed |= deps
    return own, needed - own
