"""Edition operations: create, refresh, explain a gap, choose a member, accept, reopen,
queue the missing URLs, and the checks and hooks other parts of the library call.

Every state change goes through :func:`archiver_app.editions.states.transition`; a refused
change is returned as its :class:`~archiver_app.editions.states.Transition` (a code and a
message), never raised. Bad input (an unknown edition or collection, a bad name or period)
raises :class:`~archiver_app.errors.InputError` before anything is written.

Hooks for the rest of the library:

* :func:`frozen_holders`: which accepted editions hold some captures (deletion and offload
  refuse to touch them);
* :func:`note_changed`: captures deleted or found damaged; the accepted editions holding
  them are flagged for review (still accepted and frozen: only a person reopens one), the
  reopened ones noted, each with a note saying why; :func:`refresh_editions` then brings
  the other editions that held deleted captures up to date;
* :func:`job_ended`: a capture, crawl or import job ended (its pages captured, failed or
  skipped, its captures indexed): the editions it feeds refresh their ledger and state
  then, so ``edition list`` and the sidebar never show a stale state.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.orm import Session

from archiver_app.capture_ref import UID_SHAPE
from archiver_app.editions.coverage import Coverage, read_coverage
from archiver_app.editions.ledger import (
    Fit,
    chunks,
    facts,
    fit,
    member_changes,
    members_by_key,
    pending_member_changes,
    refresh_ledger,
)
from archiver_app.editions.models import Edition, EditionGap, EditionMember, EditionTarget
from archiver_app.editions.states import (
    EditionEvent,
    EditionState,
    MemberChange,
    TargetState,
    Transition,
    TransitionCode,
    transition,
)
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.store.models import (
    CRAWL_KIND_NAMES,
    Collection,
    File,
    Job,
    Snapshot,
)
from archiver_app.units import counted
from archiver_app.urls import display_url
from archiver_app.warc.surt import url_key

log = logging.getLogger(__name__)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class EditionNotFoundError(InputError):
    """No edition has that name."""


def validate_name(name: str) -> str:
    """Edition names are safe file names: the app proposes ``<name>.wacz`` for a release.
    A name a capture could have is refused: ``archiver cite`` looks captures up first, so
    it would never reach the edition (:func:`capture_like`)."""
    if not _NAME.match(name):
        raise InputError(
            f"invalid edition name {name!r}: use 1-100 letters, digits, '.', '-' or '_', "
            "starting with a letter or digit"
        )
    if like := capture_like(name):
        raise InputError(
            f"invalid edition name {name!r}: {like}, and `archiver cite` looks captures up "
            "first, so it would never cite the edition; choose another name (rivers-2026)"
        )
    return name


def capture_like(name: str) -> str | None:
    """Why ``name`` names a capture by its form (a number is a capture's id, and a
    capture's uid has the form 20261129T160117Z-3f9a1c0b7e4d2a65), or None."""
    if name.isdecimal():
        return "a number is a capture's id"
    if UID_SHAPE.fullmatch(name):
        return "it has the form of a capture's uid"
    return None


def period_of(
    year: int | None = None, start: date | None = None, end: date | None = None
) -> tuple[datetime, datetime]:
    """``[start, end)`` in UTC from a year, or from two dates (``end`` included)."""
    if year is not None:
        if start or end:
            raise InputError("give a year or a date range, not both")
        if not 1990 <= year <= 9998:
            raise InputError(f"year {year} is out of range")
        return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
    if start is None or end is None:
        raise InputError("give a year (--year 2026) or both dates (--from DATE --to DATE)")
    if end < start:
        raise InputError(f"the period ends ({end}) before it starts ({start})")
    first = datetime(start.year, start.month, start.day, tzinfo=UTC)
    last = datetime(end.year, end.month, end.day, tzinfo=UTC) + timedelta(days=1)
    return first, last


def get_edition(s: Session, name: str) -> Edition:
    ed = s.scalar(select(Edition).where(Edition.name == name))
    if ed is None:
        known = ", ".join(s.scalars(select(Edition.name).order_by(Edition.name).limit(10)))
        raise EditionNotFoundError(
            f"there is no edition {name!r}" + (f" (editions: {known})" if known else "")
        )
    return ed


def create_edition(
    lib: Library,
    collection: str,
    name: str,
    period: tuple[datetime, datetime],
    targets: Sequence[str] = (),
) -> int:
    """Create an edition of ``collection`` and build its ledger; return its id.

    ``targets``: imported intended URLs (already validated), besides the jobs' URLs.
    """
    validate_name(name)
    now = lib.clock()
    with lib.write() as s:
        cid = s.scalar(select(Collection.id).where(Collection.slug == collection))
        if cid is None:
            raise InputError(f"there is no collection {collection!r}")
        if s.scalar(select(Edition.id).where(Edition.name == name)) is not None:
            raise InputError(f"an edition named {name!r} exists already")
        if (sid := s.scalar(select(Snapshot.id).where(Snapshot.uid == name))) is not None:
            raise InputError(
                f"invalid edition name {name!r}: it is the uid of capture {sid}, and `archiver "
                "cite` looks captures up first, so it would never cite the edition"
            )
        ed = Edition(
            collection_id=cid,
            name=name,
            period_start=period[0],
            period_end=period[1],
            state=EditionState.PLANNED.value,
            job_ids=[],
            created_at=now,
            updated_at=now,
        )
        s.add(ed)
        s.flush()
        refresh_ledger(s, ed, now, targets)
        _apply(ed, transition(EditionState(ed.state), EditionEvent.PROGRESS, facts(s, ed)), now)
        return ed.id


def _apply(ed: Edition, move: Transition, now: datetime) -> Transition:
    if not move.refused and move.state.value != ed.state:
        ed.state = move.state.value
        ed.updated_at = now
    return move


def refresh(lib: Library, name: str) -> Transition:
    """Re-read the ledger from the library (unless frozen) and move the automatic state."""
    now = lib.clock()
    with lib.write() as s:
        ed = get_edition(s, name)
        if not EditionState(ed.state).frozen:
            refresh_ledger(s, ed, now)
        move = transition(EditionState(ed.state), EditionEvent.PROGRESS, facts(s, ed))
        return _apply(ed, move, now)


def accept(lib: Library, name: str, seen: Mapping[str, int | None] | None = None) -> Transition:
    """Accept the coverage: refused while captures are pending or unindexed, or while a gap
    has no reason (the transition lists them).

    ``seen``: the members the reviewer was shown (URL -> capture id; a URL without one has
    none). When the library changed them since (a newer capture arrived), the accept is
    refused naming them, so what is frozen is what the reviewer saw.
    """
    now = lib.clock()
    with lib.write() as s:
        ed = get_edition(s, name)
        state = EditionState(ed.state)
        if not state.frozen:
            refresh_ledger(s, ed, now)
        known = facts(s, ed)
        if seen is not None and not state.frozen:
            shown = {url_key(url): (url, sid) for url, sid in seen.items()}
            changed = member_changes(shown, members_by_key(s, ed))
            known = replace(known, changed=changed)
        move = _apply(ed, transition(state, EditionEvent.ACCEPT, known), now)
        if move.code is TransitionCode.CLEARED:  # reviewed: still accepted since then
            ed.review_note, ed.updated_at = None, now
        elif not move.refused:
            ed.accepted_at, ed.review_note = now, None
        return move


def reopen(lib: Library, name: str) -> Transition:
    """Unfreeze an accepted edition: it needs review again before it is accepted anew. Its
    ledger follows the library again at once; the transition names the members that
    changed (a URL captured again since is represented by its newest capture)."""
    now = lib.clock()
    with lib.write() as s:
        ed = get_edition(s, name)
        move = _apply(ed, transition(EditionState(ed.state), EditionEvent.REOPEN), now)
        if not move.refused:
            flag = f" (flagged: {ed.review_note})" if ed.review_note else ""
            ed.review_note = f"reopened {now:%Y-%m-%d %H:%M} UTC{flag}"
            before = members_by_key(s, ed)
            refresh_ledger(s, ed, now)
            s.flush()
            move = replace(move, changed=member_changes(before, members_by_key(s, ed)))
        return move


def reopen_preview(lib: Library, name: str) -> tuple[MemberChange, ...]:
    """The members reopening ``name`` would change now (it changes nothing)."""
    with lib.session() as s:
        return pending_member_changes(s, get_edition(s, name))


class EditOutcome(StrEnum):
    """How an edit of one target ended."""

    DONE = "done"
    FROZEN = "frozen"  # accepted: reopen it first
    NOT_A_TARGET = "not_a_target"
    NOT_A_GAP = "not_a_gap"
    NOT_A_CAPTURE = "not_a_capture"  # choose: that capture is not of this URL
    NOT_COUNTED = "not_counted"  # choose: a 5xx answer, or outside the period


@dataclass(frozen=True)
class Edit:
    code: EditOutcome
    message: str


def _target(s: Session, ed: Edition, url: str) -> EditionTarget | None:
    return s.scalar(
        select(EditionTarget).where(
            EditionTarget.edition_id == ed.id, EditionTarget.url_key == url_key(url)
        )
    )


def _frozen_edit(ed: Edition) -> Edit:
    return Edit(
        EditOutcome.FROZEN,
        f"edition {ed.name} is accepted and frozen; reopen it first (archiver edition reopen "
        f"{ed.name})",
    )


def explain_gap(lib: Library, name: str, url: str, reason: str) -> Edit:
    """Record why ``url`` is not in the edition (an empty reason clears it)."""
    reason = " ".join(reason.split())
    with lib.write() as s:
        ed = get_edition(s, name)
        if EditionState(ed.state).frozen:
            return _frozen_edit(ed)
        target = _target(s, ed, url)
        if target is None:
            return Edit(
                EditOutcome.NOT_A_TARGET, f"{display_url(url)} is not a target of edition {name}"
            )
        if not TargetState(target.state).is_gap:
            return Edit(EditOutcome.NOT_A_GAP, f"{display_url(url)} is {target.state}, not a gap")
        gap = s.get(EditionGap, target.id)
        if not reason:
            if gap is not None:
                s.delete(gap)
            return Edit(EditOutcome.DONE, f"reason cleared for {display_url(url)}")
        if gap is None:
            s.add(EditionGap(target_id=target.id, edition_id=ed.id, reason=reason,
                             explained_at=lib.clock()))  # fmt: skip
        else:
            gap.reason, gap.explained_at = reason, lib.clock()
        return Edit(EditOutcome.DONE, f"reason recorded for {display_url(url)}")


def choose_member(lib: Library, name: str, url: str, snapshot_id: int) -> Edit:
    """Let ``snapshot_id`` (a complete capture of ``url``) represent ``url``."""
    with lib.write() as s:
        ed = get_edition(s, name)
        if EditionState(ed.state).frozen:
            return _frozen_edit(ed)
        target = _target(s, ed, url)
        if target is None:
            return Edit(
                EditOutcome.NOT_A_TARGET, f"{display_url(url)} is not a target of edition {name}"
            )
        snap = s.get(Snapshot, snapshot_id)
        why = None if snap is None else fit(
            ed, collection_id=snap.collection_id, state=snap.state, status=snap.http_status,
            captured_at=snap.captured_at, job_id=snap.job_id,
        )  # fmt: skip
        if snap is None or snap.url_key != target.url_key or why in _NOT_A_CAPTURE:
            return Edit(
                EditOutcome.NOT_A_CAPTURE,
                f"capture {snapshot_id} is not a complete capture of {display_url(url)} "
                "in this collection",
            )
        if why is Fit.SERVER_ERROR:
            return Edit(EditOutcome.NOT_COUNTED, (
                f"capture {snapshot_id} is the server's HTTP {snap.http_status} error answer, "
                "not the page: it does not count as captured"))  # fmt: skip
        if why is Fit.OUT_OF_PERIOD:
            return Edit(EditOutcome.NOT_COUNTED, (
                f"capture {snapshot_id} was taken {snap.captured_at:%Y-%m-%d}, outside the "
                f"edition's period ({_period_text(ed)}) and not by a job queued for it: it "
                "does not count as captured"))  # fmt: skip
        member = s.get(EditionMember, target.id)
        if member is None:
            member = EditionMember(target_id=target.id, edition_id=ed.id)
            s.add(member)
        member.snapshot_id, member.chosen_by, member.chosen_at = snap.id, "user", lib.clock()
        target.state = TargetState.CAPTURED.value
        return Edit(EditOutcome.DONE, f"capture {snap.uid} now represents {display_url(url)}")


_NOT_A_CAPTURE = frozenset({Fit.OTHER_COLLECTION, Fit.INCOMPLETE})


def _period_text(ed: Edition) -> str:
    last = ed.period_end - timedelta(days=1)
    return f"{ed.period_start:%Y-%m-%d} to {last:%Y-%m-%d}"


def coverage(lib: Library, name: str) -> Coverage:
    with lib.session() as s:
        return read_coverage(s, get_edition(s, name), lib.clock())


def gap_urls(lib: Library, name: str, states: Iterable[TargetState]) -> list[str]:
    with lib.session() as s:
        ed = get_edition(s, name)
        return list(
            s.scalars(
                select(EditionTarget.url)
                .where(
                    EditionTarget.edition_id == ed.id,
                    EditionTarget.state.in_([st.value for st in states]),
                )
                .order_by(EditionTarget.id)
            )
        )


def add_job(lib: Library, name: str, job_id: int) -> None:
    """Count ``job_id``'s captures in the edition whenever they happen."""
    with lib.write() as s:
        ed = get_edition(s, name)
        ed.job_ids = [*(ed.job_ids or []), job_id]


# --------------------------------------------------------------------------- hooks


def frozen_holders(s: Session, snapshot_ids: Iterable[int]) -> dict[int, str]:
    """Snapshot id -> name of an accepted (frozen) edition it is a member of."""
    out: dict[int, str] = {}
    for part in chunks(sorted(set(snapshot_ids))):
        for sid, name in s.execute(
            select(EditionMember.snapshot_id, Edition.name)
            .join(Edition, Edition.id == EditionMember.edition_id)
            .where(
                EditionMember.snapshot_id.in_(part),
                Edition.state == EditionState.RESEARCH_READY.value,
            )
        ):
            if sid is not None:
                out.setdefault(sid, name)
    return out


def editions_holding(s: Session, snapshot_ids: Iterable[int]) -> set[int]:
    """Ids of the editions some of ``snapshot_ids`` are members of."""
    out: set[int] = set()
    for part in chunks(sorted(set(snapshot_ids))):
        out.update(
            s.scalars(select(EditionMember.edition_id).where(EditionMember.snapshot_id.in_(part)))
        )
    return out


def _catch_up(s: Session, eds: Iterable[Edition], now: datetime) -> dict[str, Transition]:
    """Refresh the ledger and the automatic state of ``eds`` (none of them frozen)."""
    out: dict[str, Transition] = {}
    for ed in eds:
        refresh_ledger(s, ed, now)
        move = transition(EditionState(ed.state), EditionEvent.PROGRESS, facts(s, ed))
        out[ed.name] = _apply(ed, move, now)
    return out


def refresh_editions(
    s: Session, edition_ids: Iterable[int], now: datetime
) -> dict[str, Transition]:
    """Bring the editions ``edition_ids`` that are not frozen up to date, in the caller's
    transaction (deletion calls it once the captures' rows are gone)."""
    s.flush()
    return _catch_up(
        s,
        s.scalars(
            select(Edition).where(
                Edition.id.in_(sorted(set(edition_ids))),
                Edition.state != EditionState.RESEARCH_READY.value,
            )
        ),
        now,
    )


def note_changed(s: Session, snapshot_ids: Iterable[int], why: str, now: datetime) -> list[str]:
    """Captures were deleted or found damaged: the accepted editions holding them are
    flagged for review, yet stay frozen; the reopened ones note it. ``why`` is the note.
    Returns their names. Runs in the caller's transaction, before the captures' rows go."""
    names: list[str] = []
    edition_ids = editions_holding(s, snapshot_ids)
    for ed in s.scalars(select(Edition).where(Edition.id.in_(sorted(edition_ids)))):
        move = _apply(ed, transition(EditionState(ed.state), EditionEvent.CHANGED), now)
        if move.code is TransitionCode.FLAGGED or move.state is EditionState.NEEDS_REVIEW:
            ed.review_note, ed.updated_at = why, now
            names.append(ed.name)
    return names


def snapshots_of_files(s: Session, file_ids: Iterable[int]) -> set[int]:
    out: set[int] = set()
    for part in chunks(sorted(set(file_ids))):
        out.update(
            sid
            for sid in s.scalars(select(File.snapshot_id).where(File.id.in_(part)))
            if sid is not None
        )
    return out


def note_damaged_files(lib: Library, file_ids: Iterable[int], where: str) -> list[str]:
    """Verify found damaged or lost copies of ``file_ids`` on ``where``: the accepted
    editions holding their captures are flagged for review (still frozen), the reopened
    ones noted. Returns their names."""
    ids = sorted(set(file_ids))
    if not ids:
        return []
    now = lib.clock()
    with lib.write() as s:
        snaps = snapshots_of_files(s, ids)
        files = counted(len(ids), "damaged or missing file")
        why = f"verify found {files} on {where} ({now:%Y-%m-%d})"
        return note_changed(s, snaps, why, now)


def _fed_by(job: Job, editions: Iterable[Edition]) -> list[Edition]:
    """Which of ``editions`` (the job's collection's, not frozen) ``job`` feeds.

    A crawl or capture job feeds an edition whose ledger reads its pages: it ran in the
    period, or the edition queued it (:func:`~archiver_app.editions.ledger.edition_jobs`
    says the same). Its captures count nowhere else, since a capture counts only in its
    collection, within the period or by the edition's own job. An import adds captures
    dated anywhere: every edition of its collection whose ledger it may fill.
    """
    if job.kind not in CRAWL_KIND_NAMES:
        return list(editions)
    out = []
    for ed in editions:
        in_period = job.created_at < ed.period_end and (
            job.finished_at is None or job.finished_at >= ed.period_start
        )
        if in_period or job.id in (ed.job_ids or []):
            out.append(ed)
    return out


def job_ended(lib: Library, job_id: int) -> dict[str, Transition]:
    """Job ``job_id`` ended: refresh the editions it feeds (their ledger and state), in one
    write; return each one's transition by name. Frozen editions are left as they are.

    One query finds the candidates (the editions of the job's collection, never the
    ledgers); an edition it does not feed costs nothing more.
    """
    now = lib.clock()
    out: dict[str, Transition] = {}
    with lib.write() as s:
        job = s.get(Job, job_id)
        if job is None:
            return out
        candidates = s.scalars(
            select(Edition).where(
                Edition.collection_id == job.collection_id,
                Edition.state != EditionState.RESEARCH_READY.value,
            )
        ).all()
        out = _catch_up(s, _fed_by(job, candidates), now)
    return out


def after_job(lib: Library, job_id: int) -> None:
    """:func:`job_ended` for the crawl worker and the job runtime, where a job's own end
    must stand whatever happens here: an edition that cannot be refreshed now (a busy
    database) is refreshed when it is next shown, opened, accepted or exported."""
    try:
        job_ended(lib, job_id)
    except Exception:
        log.warning("job %s: its editions were not refreshed", job_id, exc_info=True)
