"""Deleting captures: their rows, index entries and laptop files, or a refusal saying why.

A capture is refused, and nothing of it touched, when

* it is a member of an accepted edition (``frozen``): the message names the edition and
  how to reopen it; a deletion after a reopen marks the edition as needing review;
* later captures are revisits of its payloads (``in_use``): deleting it would leave them
  without a body;
* its WARC holds other captures too (``shared``: the pages of one imported WARC are one
  file): deleting it alone would take theirs; they can be deleted together.

The rows go in one transaction (records, full-text entry, files and their copies, the
snapshot; tags, change summaries and edition memberships follow by foreign key). The
laptop files are removed after the commit, the sidecar first, so a crash in between leaves
at most a folder without an ``index.json``, which is never imported back. Copies already on
drives stay where they are: drives are append-only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from sqlalchemy import delete, or_, select, update
from sqlalchemy.orm import Session

from archiver_app.editions.models import EditionMember
from archiver_app.editions.service import (
    editions_holding,
    frozen_holders,
    note_changed,
    refresh_editions,
)
from archiver_app.library import Library
from archiver_app.mirror.deps import snapshots_files
from archiver_app.store.fulltext import delete_snapshot_text
from archiver_app.store.models import Copy, File, FileKind, LocalState, Record, Snapshot
from archiver_app.units import counted
from archiver_app.warc.records import note_records_changed


class DeleteCode(StrEnum):
    DELETED = "deleted"
    FROZEN = "frozen"
    IN_USE = "in_use"
    SHARED = "shared"
    NOT_FOUND = "not_found"


@dataclass(frozen=True)
class DeleteOutcome:
    snapshot_id: int
    code: DeleteCode
    message: str


@dataclass(frozen=True)
class DeleteResult:
    outcomes: tuple[DeleteOutcome, ...]
    editions_to_review: tuple[str, ...] = ()  # reopened editions that lost a member
    left: tuple[str, ...] = ()  # files of deleted captures that could not be removed

    @property
    def deleted(self) -> list[int]:
        return [o.snapshot_id for o in self.outcomes if o.code is DeleteCode.DELETED]

    @property
    def refused(self) -> list[DeleteOutcome]:
        return [o for o in self.outcomes if o.code is not DeleteCode.DELETED]


def _reused(
    s: Session, sid: int, file_ids: list[int], deleting: list[int]
) -> tuple[int, list[int]]:
    """How many records of captures not being deleted are revisits of this one's, and
    those captures (by id)."""
    ours = (
        select(Record.id)
        .where(or_(Record.snapshot_id == sid, Record.file_id.in_(file_ids)))
        .scalar_subquery()
    )
    holders = s.scalars(
        select(Record.snapshot_id).where(
            Record.revisit_of_id.in_(ours),
            or_(Record.snapshot_id.is_(None), Record.snapshot_id.not_in(deleting)),
            Record.file_id.not_in(file_ids),
        )
    ).all()
    return len(holders), sorted({h for h in holders if h is not None})


def _sharers(s: Session, sid: int, deleting: set[int], by_file: dict[int, set[int]]) -> list[int]:
    """Other captures, not being deleted, whose records are in this capture's files (the
    pages of one imported WARC). ``by_file`` keeps each file's captures: deleting the
    pages of a large import reads its records once, not once a page."""
    others: set[int] = set()
    for fid in snapshots_files(s, [sid]):
        if fid not in by_file:
            by_file[fid] = set(
                s.scalars(
                    select(Record.snapshot_id)
                    .where(Record.file_id == fid, Record.snapshot_id.is_not(None))
                    .distinct()
                )
            )
        others |= by_file[fid] - deleting - {sid}
    return sorted(others)


def _named(s: Session, ids: list[int], most: int = 3) -> str:
    """``"2 other captures: #4 URL, #5 URL"``, the first ``most`` of them by id and URL."""
    urls = dict(
        s.execute(select(Snapshot.id, Snapshot.url).where(Snapshot.id.in_(ids[:most]))).all()
    )
    named = ", ".join(f"#{i} {urls.get(i, '')}".rstrip() for i in ids[:most])
    more = f" and {len(ids) - most} more" if len(ids) > most else ""
    plural = "s" if len(ids) > 1 else ""
    return f"{len(ids)} other capture{plural}: {named}{more}"


def _delete_rows(s: Session, snap: Snapshot, files: list[File]) -> list[tuple[str, str]]:
    """Delete one capture's rows; return the (kind, path) of its laptop files."""
    file_ids = [f.id for f in files]
    mine = or_(Record.snapshot_id == snap.id, Record.file_id.in_(file_ids))
    s.execute(update(Record).where(mine).values(revisit_of_id=None))
    s.execute(delete(Record).where(mine))
    note_records_changed(s.connection())  # replayers drop what they hold of it
    delete_snapshot_text(s.connection(), snap.id)
    s.execute(update(EditionMember).where(EditionMember.snapshot_id == snap.id)
              .values(snapshot_id=None, chosen_by="default"))  # fmt: skip
    s.execute(delete(Copy).where(Copy.file_id.in_(file_ids)))
    local = [
        (f.kind, f.path)
        for f in files
        if f.external_path is None and f.local_state == LocalState.PRESENT
    ]
    s.execute(delete(File).where(File.id.in_(file_ids)))
    s.delete(snap)
    return local


def refusals(lib: Library, snapshot_ids: Iterable[int]) -> list[DeleteOutcome]:
    """What :func:`delete_snapshots` would refuse of ``snapshot_ids`` now, and why (asked
    before the question, so a refusal is not said after "Delete?" was answered)."""
    with lib.session() as s:
        refused, _chosen = _judge(s, sorted(set(snapshot_ids)))
    return refused


def _judge(
    s: Session, ids: list[int]
) -> tuple[list[DeleteOutcome], list[tuple[Snapshot, list[File]]]]:
    """The captures of ``ids`` refused (with why) and those that can go (with their files)."""
    outcomes: list[DeleteOutcome] = []
    held = frozen_holders(s, ids)
    shared: dict[int, set[int]] = {}  # file id -> the captures with records in it
    deleting = set(ids)
    chosen: list[tuple[Snapshot, list[File]]] = []
    for sid in ids:
        snap = s.get(Snapshot, sid)
        if snap is None:
            outcomes.append(DeleteOutcome(sid, DeleteCode.NOT_FOUND, f"no capture {sid}"))
            continue
        if sid in held:
            outcomes.append(DeleteOutcome(sid, DeleteCode.FROZEN, (
                f"capture {sid} is in edition {held[sid]}, which is accepted and frozen; "
                f"reopen it first (archiver edition reopen {held[sid]})")))  # fmt: skip
            continue
        files = list(s.scalars(select(File).where(File.snapshot_id == sid)))
        n, holders = _reused(s, sid, [f.id for f in files], ids)
        if n:
            which = f" of {_named(s, holders)}" if holders else ""
            outcomes.append(DeleteOutcome(sid, DeleteCode.IN_USE, (
                f"capture {sid} holds the payloads of {counted(n, 'later record')}{which} "
                "(revisits); delete those captures first, or together with it")))  # fmt: skip
            continue
        if others := _sharers(s, sid, deleting, shared):
            outcomes.append(DeleteOutcome(sid, DeleteCode.SHARED, (
                f"capture {sid} ({snap.url}) was imported in one WARC file with "
                f"{_named(s, others)}; deleting it would delete theirs: delete them "
                "together")))  # fmt: skip
            continue
        chosen.append((snap, files))
    return outcomes, chosen


def delete_snapshots(lib: Library, snapshot_ids: Iterable[int]) -> DeleteResult:
    ids = sorted(set(snapshot_ids))
    doomed: list[tuple[str, str]] = []
    folders: list[str] = []
    with lib.write() as s:
        outcomes, chosen = _judge(s, ids)
        why = f"member capture(s) deleted on {lib.clock():%Y-%m-%d}"
        holding = editions_holding(s, [snap.id for snap, _ in chosen])
        review = note_changed(s, [snap.id for snap, _ in chosen], why, lib.clock())
        # revisits among the deleted captures may point at each other's records
        doomed_files = [f.id for _, fs in chosen for f in fs]
        s.execute(
            update(Record)
            .where(or_(Record.snapshot_id.in_([snap.id for snap, _ in chosen]),
                       Record.file_id.in_(doomed_files)))
            .values(revisit_of_id=None)
        )  # fmt: skip
        for snap, files in chosen:
            if snap.folder:
                folders.append(snap.folder)
            doomed += _delete_rows(s, snap, files)
            outcomes.append(
                DeleteOutcome(snap.id, DeleteCode.DELETED, f"deleted capture {snap.id}")
            )
        refresh_editions(s, holding, lib.clock())  # their counts lose the captures now
    left = _remove_files(lib, doomed, folders)
    return DeleteResult(
        tuple(sorted(outcomes, key=lambda o: o.snapshot_id)), tuple(review), tuple(left)
    )


def _remove_files(lib: Library, files: list[tuple[str, str]], folders: list[str]) -> list[str]:
    """Remove the deleted captures' files and then their emptied folders; the files that
    could not be removed (the rows are gone: they would be orphans), by relative path."""
    left = []
    sidecars_first = sorted(files, key=lambda f: f[0] != FileKind.SIDECAR)
    for _kind, rel in sidecars_first:
        try:
            lib.abspath(rel).unlink(missing_ok=True)
        except (OSError, ValueError):
            left.append(rel)
    for rel in folders:
        with contextlib.suppress(OSError, ValueError):
            folder: Path = lib.abspath(rel)
            while folder != lib.root and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
                folder = folder.parent
    return left
