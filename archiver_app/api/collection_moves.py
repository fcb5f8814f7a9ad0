"""Captures moved between collections, a collection made, a collection emptied into another.

A move changes the captures' rows only. Their folders stay where they were written (the
row holds the path) and their ``index.json`` keeps the collection they were captured into,
as it keeps the tags they had then: both are capture-time files whose digests
:mod:`archiver_app.integrity` checks. Editions follow the rows: a capture in an accepted
(frozen) edition is not moved (reopen the edition first, as for a deletion); a reopened
edition that loses one notes it, and the editions of both collections are brought up to date.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from archiver_app.editions.ledger import chunks
from archiver_app.editions.models import Edition
from archiver_app.editions.service import (
    editions_holding,
    frozen_holders,
    note_changed,
    refresh_editions,
)
from archiver_app.errors import InputError
from archiver_app.library import DEFAULT_COLLECTION
from archiver_app.store.models import Collection, ImportSource, Job, JobStatus, Snapshot
from archiver_app.units import counted
from archiver_app.validation import slug_of

#: Jobs whose process is at work now: the collection they save into is not changed under them.
_AT_WORK = (JobStatus.RUNNING.value, JobStatus.CANCELLING.value)


def collection_name(name: str) -> str:
    """A collection's name as typed, spaces collapsed, at most 200 characters."""
    return " ".join(name.split())[:200]


def new_slug(s: Session, name: str) -> str:
    """A free slug (folder name) for a collection called ``name``: its letters and digits
    lower-cased and without accents, ``-`` between words, a number added when taken."""
    base = slug_of(name)
    taken = set(s.scalars(select(Collection.slug).where(Collection.slug.like(f"{base}%"))))
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return slug


def same_name(s: Session, name: str, *, other_than: int | None = None) -> str | None:
    """The name of a collection called ``name`` (in any letter case), if there is one
    (besides collection ``other_than``)."""
    folded = name.casefold()  # collections are few: read them all (SQL lower() is ASCII)
    rows = s.execute(select(Collection.id, Collection.name)).all()
    return next((n for i, n in rows if n.casefold() == folded and i != other_than), None)


def move_captures(
    s: Session, snapshot_ids: Iterable[int], collection_id: int, now: datetime
) -> list[int]:
    """Put ``snapshot_ids`` in collection ``collection_id``, in the caller's transaction;
    the ids that were elsewhere (captures gone meanwhile are skipped).

    Raises:
        InputError: no such collection, or a capture is in an accepted edition.
    """
    target = s.get(Collection, collection_id)
    if target is None:
        raise InputError(f"there is no collection {collection_id}")
    ids = sorted(set(snapshot_ids))
    moving: list[int] = []
    for part in chunks(ids):
        moving += s.scalars(
            select(Snapshot.id).where(
                Snapshot.id.in_(part), Snapshot.collection_id != collection_id
            )
        )
    held = frozen_holders(s, moving)
    if held:
        name = next(iter(held.values()))
        raise InputError(
            f"{counted(len(held), 'capture')} of these {'is' if len(held) == 1 else 'are'} "
            f"in edition {name}, which is accepted and frozen; reopen it first "
            f"(archiver edition reopen {name}); nothing was moved"
        )
    if not moving:
        return []
    editions = editions_holding(s, moving)
    editions.update(s.scalars(select(Edition.id).where(Edition.collection_id == collection_id)))
    note_changed(s, moving, f"member capture(s) moved to {target.name} on {now:%Y-%m-%d}", now)
    for part in chunks(moving):
        s.execute(update(Snapshot).where(Snapshot.id.in_(part)).values(collection_id=collection_id))
    refresh_editions(s, editions, now)
    return moving


def empty_into(s: Session, coll: Collection, into: int, now: datetime) -> list[int]:
    """Move every capture of ``coll`` into collection ``into`` and file its jobs and its
    finished imports there (a retry then saves there too); the captures moved.

    Raises:
        InputError: ``into`` is ``coll`` or missing, something keeps ``coll`` whole (a job
            at work, an import, an edition: :func:`kept_whole`), or a capture is in an
            accepted edition.
    """
    if into == coll.id:
        raise InputError(f"the captures of {coll.name!r} cannot move into it")
    if (kept := kept_whole(s, coll)) is not None:
        raise InputError(kept.message)
    ids = list(s.scalars(select(Snapshot.id).where(Snapshot.collection_id == coll.id)))
    moved = move_captures(s, ids, into, now)
    _refile(s, coll, into)
    return moved


def _refile(s: Session, coll: Collection, into: int) -> None:
    """File the jobs and the (finished) imports of ``coll`` under collection ``into``."""
    s.execute(update(Job).where(Job.collection_id == coll.id).values(collection_id=into))
    s.execute(
        update(ImportSource)
        .where(ImportSource.collection_id == coll.id)
        .values(collection_id=into)
        .execution_options(synchronize_session=False)
    )


#: Jobs not finished: each will (or may, when resumed) save into its collection again.
_UNFINISHED = (
    JobStatus.QUEUED.value,
    JobStatus.RUNNING.value,
    JobStatus.PAUSED.value,
    JobStatus.RETRYABLE.value,
    JobStatus.INDEXING.value,
    JobStatus.CANCELLING.value,
)


@dataclass(frozen=True)
class SavesInto:
    """A watch, or a job not finished, that saves into a collection: when the collection's
    captures move into another (:func:`empty_into`), it goes along and saves there from
    then on. ``pages``: a watch's addresses; ``status``: a job's."""

    job_id: int
    watch: bool
    pages: tuple[str, ...] = ()
    status: str = ""


def saving_into(s: Session, coll: Collection) -> list[SavesInto]:
    """The watches of ``coll`` (by id), then its jobs not finished and not at work now (a
    job at work keeps the collection whole: :func:`empty_into`)."""
    rows = s.execute(
        select(Job.id, Job.schedule, Job.status, Job.config)
        .where(
            Job.collection_id == coll.id,
            Job.schedule.is_not(None) | Job.status.in_(_UNFINISHED),
            Job.status.not_in(_AT_WORK),
        )
        .order_by(Job.id)
    ).all()
    watches = [
        SavesInto(i, True, pages=tuple(str(u) for u in (config or {}).get("seeds") or ()))
        for i, schedule, _status, config in rows
        if schedule is not None
    ]
    jobs = [SavesInto(i, False, status=str(status)) for i, schedule, status, _ in rows
            if schedule is None]  # fmt: skip
    return watches + jobs


class KeptCode(StrEnum):
    """What keeps an empty collection from being deleted."""

    WATCH = "watch"  # a watch saves into it
    JOB = "job"  # a job not finished saves into it
    IMPORT = "import"  # a folder (an ArchiveBox data folder) is still being imported into it
    EDITION = "edition"  # an edition is of it


@dataclass(frozen=True)
class KeptBy:
    """Why the empty collection ``collection`` stays: ``code`` and what it names (the
    watch's or job's id, with the watch's pages or the job's status; the import's folder;
    the edition's name). Front ends word it from these; :attr:`message` is the command
    line's sentence."""

    code: KeptCode
    collection: str
    job_id: int | None = None
    pages: tuple[str, ...] = ()  # a watch's addresses
    status: str | None = None  # a job's status
    edition: str | None = None
    folder: str | None = None  # the folder being imported (an ArchiveBox data folder)
    source_id: int | None = None  # its import source (``archiver import --archivebox``)

    @property
    def message(self) -> str:
        if self.code is KeptCode.WATCH:
            return (
                f"watch {self.job_id} saves into collection {self.collection!r}: remove the "
                f"watch (archiver watch remove {self.job_id}) first; the collection stays"
            )
        if self.code is KeptCode.JOB:
            return (
                f"job {self.job_id} ({self.status}) saves into collection {self.collection!r}: "
                "let it finish or cancel it first; the collection stays"
            )
        if self.code is KeptCode.IMPORT:
            return (
                f"the ArchiveBox folder {self.folder} (import source {self.source_id}) is still "
                f"being imported into collection {self.collection!r}: let its import finish "
                "first (archiver migrate, or the app while it is idle); the collection stays"
            )
        return f"edition {self.edition} is of collection {self.collection!r}; the collection stays"


def kept_by(s: Session, coll: Collection) -> KeptBy | None:
    """What keeps ``coll``, were it empty, from being deleted: a watch or an unfinished
    job that saves into it, or an edition of it (None: nothing)."""
    watch = s.execute(
        select(Job.id, Job.config)
        .where(Job.collection_id == coll.id, Job.schedule.is_not(None))
        .order_by(Job.id)
        .limit(1)
    ).first()
    if watch is not None:
        pages = tuple(str(u) for u in (watch[1] or {}).get("seeds") or ())
        return KeptBy(KeptCode.WATCH, coll.name, job_id=watch[0], pages=pages)
    return _job_in(s, coll, _UNFINISHED) or _importing(s, coll) or _edition_of(s, coll)


def kept_whole(s: Session, coll: Collection) -> KeptBy | None:
    """What keeps ``coll`` from being emptied into another collection and deleted (its
    watches and unfinished jobs would go along): a job at work saving into it now, a
    folder still being imported into it, or an edition of it (None: nothing)."""
    return _job_in(s, coll, _AT_WORK) or _importing(s, coll) or _edition_of(s, coll)


def _job_in(s: Session, coll: Collection, statuses: Iterable[str]) -> KeptBy | None:
    """The first job saving into ``coll`` whose status is one of ``statuses``."""
    busy = s.execute(
        select(Job.id, Job.status)
        .where(Job.collection_id == coll.id, Job.status.in_(statuses))
        .order_by(Job.id)
        .limit(1)
    ).first()
    return KeptBy(KeptCode.JOB, coll.name, job_id=busy[0], status=str(busy[1])) if busy else None


def _edition_of(s: Session, coll: Collection) -> KeptBy | None:
    edition = s.scalar(select(Edition.name).where(Edition.collection_id == coll.id).limit(1))
    return KeptBy(KeptCode.EDITION, coll.name, edition=edition) if edition is not None else None


def _importing(s: Session, coll: Collection) -> KeptBy | None:
    """The first folder still being imported into ``coll``, if any."""
    source = s.execute(
        select(ImportSource.id, ImportSource.path)
        .where(ImportSource.collection_id == coll.id, ImportSource.state.in_(_IMPORTING))
        .order_by(ImportSource.id)
        .limit(1)
    ).first()
    if source is None:
        return None
    return KeptBy(KeptCode.IMPORT, coll.name, folder=source[1], source_id=source[0])


#: An import source's states before its last folder is in (``layout.archivebox``).
_IMPORTING = ("registered", "importing")


def release_empty(s: Session, coll: Collection) -> None:
    """Before the empty collection ``coll`` is deleted: file its finished jobs and its
    finished imports under the default collection (as :func:`empty_into` files them where
    the captures go), in the caller's transaction.

    Raises:
        InputError: a watch, an unfinished job or an import not finished saves into it,
            naming them, or an edition is of it (:func:`kept_by`).
    """
    kept = kept_by(s, coll)
    if kept is not None:
        raise InputError(kept.message)
    jobs = select(Job.id).where(Job.collection_id == coll.id).limit(1)
    imports = select(ImportSource.id).where(ImportSource.collection_id == coll.id).limit(1)
    if s.scalar(jobs) is None and s.scalar(imports) is None:
        return
    _refile(s, coll, default_collection(s))


def default_collection(s: Session) -> int:
    """The id of the default collection (where captures go when no other is chosen), made
    now, in the caller's transaction, if the library has none."""
    default = s.scalar(select(Collection.id).where(Collection.slug == DEFAULT_COLLECTION))
    if default is None:
        default_coll = Collection(slug=DEFAULT_COLLECTION, name=DEFAULT_COLLECTION.title())
        s.add(default_coll)
        s.flush()
        default = default_coll.id
    return default
