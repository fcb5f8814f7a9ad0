"""An edition's releases on record, and which of them ``archiver cite`` quotes.

A release's record is its export job's result (:class:`~.release.ReleaseResult`): the
WACZ's path, its SHA-256, when it was written, whether it was signed, the edition's state
then and a digest of its members. One rule (:func:`of_now`) says whether a release is of
the edition as it is now; of those, ``archiver cite NAME`` quotes the newest signed one,
else the newest (:func:`judge`): an unsigned scratch copy exported after a signed release
never takes its place, and a release written over by a later one (the same file) is gone.
``edition show`` lists them all, the one cited marked, and each other with why it is not.
A release about to be replaced is called the accepted release only when it is the one
cited (:func:`release_at`). ``archiver export timestamp-pending`` rewrites a WACZ to put
its timestamp in: it is the same release, so its record takes the file's new SHA-256
(:func:`restamped`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from archiver_app.editions.states import EditionState
from archiver_app.export.identity import ReleasesOnRecord
from archiver_app.library import Library
from archiver_app.store.models import Job, JobLog, JobStatus


@dataclass(frozen=True)
class RecordedRelease:
    """One completed release of an edition, as its job recorded it."""

    job_id: int
    edition: str
    path: str  # the WACZ as written
    sha256: str  # of the WACZ as it is (a timestamp added later is in it)
    released_at: datetime | None
    state: str  # the edition's state when released
    members_digest: str | None  # :func:`~.release.members_digest` (None: not recorded)
    signed: bool = False
    #: "sha256:…" of its datapackage.json (None: an older record): a copy of the release
    #: whose bytes differ elsewhere has the same (``verify-export`` says which release)
    package_hash: str | None = None

    @property
    def file_name(self) -> str:
        return self.path.replace("\\", "/").rsplit("/", 1)[-1]

    def is_at(self, path: Path) -> bool:
        return bool(self.path) and Path(self.path).resolve() == Path(path).resolve()


@dataclass(frozen=True)
class EditionNow:
    """What an edition is now, as a release is judged against it."""

    name: str
    accepted: datetime | None  # when it was last accepted, while it is accepted
    members: str  # :func:`~.release.members_digest` of its members
    members_by_id: str  # their :func:`~.release.ids_digest` (older releases')

    def holds(self, digest: str) -> bool:
        """Are these the members of a release that recorded ``digest``? A digest of their
        ids (a release recorded before digests of uids) is compared with their ids."""
        from archiver_app.editions.release import BY_UID

        return digest == (self.members if digest.startswith(BY_UID) else self.members_by_id)


def edition_now(s: Session, name: str) -> EditionNow:
    """Raises EditionNotFoundError when there is no edition ``name``."""
    from archiver_app.editions.ledger import member_snapshot_ids
    from archiver_app.editions.release import ids_digest, members_digest
    from archiver_app.editions.service import get_edition

    ed = get_edition(s, name)
    accepted = _utc(ed.accepted_at) if ed.state == EditionState.RESEARCH_READY else None
    ids = member_snapshot_ids(s, ed.id)
    return EditionNow(name, accepted, members_digest(s, ids), ids_digest(ids))


def of_now(release: RecordedRelease, now: EditionNow) -> bool:
    """Is ``release`` a release of the edition as it is now? An accepted edition's is one
    made while accepted, since the last accept, of the members it has now: a draft exported
    while it was reopened, or a release of the members it had before, holds other captures
    than the ones accepted. A not accepted edition's is one of the members it has now. A
    release that recorded no digest of its members cannot be told to be one, except (an
    older record) a release made while accepted, since the last accept."""
    return not_of_now(release, now) is None


def not_of_now(release: RecordedRelease, now: EditionNow) -> str | None:
    """Why ``release`` is not a release of the edition as it is now (:func:`of_now`), in
    words; None when it is one."""
    if release.edition != now.name:
        return f"a release of edition {release.edition}"
    of = release.members_digest
    if (of is not None and not now.holds(of)) or (of is None and now.accepted is None):
        if of is None:
            return "a draft whose record does not say which captures it holds"
        return "of other captures than the edition's members now"
    if now.accepted is None:
        return None
    if release.state != EditionState.RESEARCH_READY:
        return "a draft, exported while the edition was not accepted"
    if release.released_at is None or release.released_at < now.accepted:
        return "exported before the edition was last accepted"
    return None


@dataclass(frozen=True)
class Judged:
    """A release of an edition, and whether ``archiver cite`` quotes it (else ``why``
    not, in words)."""

    release: RecordedRelease
    cited: bool
    why: str | None = None


def judge(releases: Iterable[RecordedRelease], now: EditionNow) -> list[Judged]:
    """Each release of edition ``now.name`` among ``releases`` (every edition's, newest
    first: a later release of any edition written to the same file replaced it), newest
    first, and the one ``archiver cite`` quotes: of the releases of the edition as it is
    now and not written over, the newest signed one, else the newest."""
    places: set[Path] = set()
    found: list[tuple[RecordedRelease, str | None]] = []
    for release in releases:
        place = Path(release.path).resolve() if release.path else None
        over = place in places
        if place is not None:
            places.add(place)
        if release.edition != now.name:
            continue
        why = "written over by a later release to the same file" if over else None
        found.append((release, why or not_of_now(release, now)))
    eligible = [r for r, why in found if why is None]
    cited = next((r for r in eligible if r.signed), eligible[0] if eligible else None)
    return [Judged(r, r is cited, why or _passed_over(r, cited)) for r, why in found]


def _passed_over(release: RecordedRelease, cited: RecordedRelease | None) -> str | None:
    """Why a release of the edition as it is now is not the one cited (None: it is)."""
    if cited is None or release is cited:
        return None
    if cited.signed and not release.signed:
        return "unsigned: the signed release is cited"
    return "an earlier release: a later one is cited"


def recorded_releases(s: Session, name: str | None = None) -> Iterator[RecordedRelease]:
    """The completed releases on record (of edition ``name``; None: of every edition),
    the newest first. A release that recorded no SHA-256 is left out: it cannot be cited."""
    rows = s.execute(
        select(Job.id, Job.config, Job.result, Job.finished_at)
        .where(Job.kind == "export", Job.status == JobStatus.COMPLETED)
        .order_by(Job.finished_at.desc(), Job.id.desc())
    )
    for job_id, config, result, finished in rows:
        release = _record(job_id, config or {}, result or {}, finished)
        if release is not None and (name is None or release.edition == name):
            yield release


def _record(
    job_id: int, config: dict[str, Any], result: dict[str, Any], finished: datetime | None
) -> RecordedRelease | None:
    edition, sha256 = config.get("edition"), result.get("sha256")
    if not edition or not sha256:
        return None
    when = result.get("released_at")
    return RecordedRelease(
        job_id=job_id,
        edition=str(edition),
        path=str((result.get("wacz") or {}).get("path") or config.get("output") or ""),
        sha256=str(sha256),
        released_at=_utc(datetime.fromisoformat(when) if isinstance(when, str) else finished),
        state=str(result.get("state") or ""),
        members_digest=result.get("members_digest"),
        signed=bool((result.get("wacz") or {}).get("signer")),
        package_hash=result.get("package_hash"),
    )


def cited_release(lib: Library, name: str) -> RecordedRelease | None:
    """The release ``archiver cite NAME`` names (:func:`judge`)."""
    return next((j.release for j in judged_releases(lib, name) if j.cited), None)


def judged_releases(lib: Library, name: str) -> list[Judged]:
    """Every release on record of edition ``name``, newest first, the one ``archiver cite``
    quotes marked (:func:`judge`). Raises EditionNotFoundError when there is no such
    edition."""
    with lib.session() as s:
        return judge(recorded_releases(s), edition_now(s, name))


def releases_on_record(lib: Library) -> ReleasesOnRecord:
    """Every edition's releases on record, newest first, each with whether ``archiver
    cite`` quotes it, for ``verify-export`` to tell which release a file is. A record
    that did not keep its ``datapackage.json``'s hash (an older one) takes it from the
    file where the release was written, when it is still there."""
    from archiver_app.editions.service import EditionNotFoundError
    from archiver_app.export.identity import KnownRelease, package_hash_of

    judged: list[Judged] = []
    with lib.session() as s:
        every = list(recorded_releases(s))
        for name in dict.fromkeys(r.edition for r in every):
            try:
                judged += judge(every, edition_now(s, name))
            except EditionNotFoundError:  # the edition was deleted since
                judged += [Judged(r, False, "its edition is gone") for r in every
                           if r.edition == name]  # fmt: skip
    known = tuple(
        KnownRelease(
            j.release.edition, j.release.path, j.release.sha256,
            j.release.package_hash or (package_hash_of(Path(j.release.path))
                                       if j.release.path else None),
            j.release.signed, j.release.released_at, j.cited, j.why,
        )
        for j in judged
    )  # fmt: skip
    return ReleasesOnRecord(str(lib.root), known)


def release_at(lib: Library, output: Path) -> tuple[RecordedRelease, EditionNow | None] | None:
    """The last release on record written at ``output``, and its edition as it is now
    (None: that edition is gone); None: no release on record was written there."""
    from archiver_app.editions.service import EditionNotFoundError

    with lib.session() as s:
        release = next((r for r in recorded_releases(s) if r.is_at(output)), None)
        if release is None:
            return None
        try:
            return release, edition_now(s, release.edition)
        except EditionNotFoundError:
            return release, None


def restamped(s: Session, path: Path, old: str, new: str, at: datetime) -> list[str]:
    """Record that the WACZ at ``path``, whose SHA-256 was ``old``, is now ``new`` (a
    timestamp was put into it): every release on record of that file takes ``new``, and
    its job's log says so. The editions whose release it is, each once."""
    names: list[str] = []
    for release in list(recorded_releases(s)):
        if release.sha256 != old or not release.is_at(path):
            continue  # another file, or another release written there since
        job = s.get(Job, release.job_id)
        assert job is not None and job.result is not None
        job.result = {**job.result, "sha256": new}  # a new dict: the JSON column sees it
        s.add(JobLog(job_id=job.id, at=at, message=f"a timestamp was added to {path}: "
                     f"its SHA-256 is now {new} (was {old})"))  # fmt: skip
        names.append(release.edition)
    return list(dict.fromkeys(names))


def _utc(at: datetime | None) -> datetime | None:
    if at is None:
        return None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
