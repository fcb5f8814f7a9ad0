"""The target ledger: which URLs an edition intends, what became of each, and its member.

Intent comes from three sources, merged per URL (its SURT key):

* ``seed``: a seed of one of the collection's capture or crawl jobs in the period;
* ``list``: a URL from a list the user imported with the edition (``--targets FILE``);
* ``job``: a page one of those jobs discovered and queued.

A job that saw a URL and skipped it records the rule (``pages.skip_reason``); the URL is
*excluded* only when every source that mentions it excluded it (a page an abort skipped
was meant to be captured: it is missing, not excluded). A URL is *captured* when
a good capture of it (complete, not a 5xx answer) exists in the collection within the
period (or by a job queued for the edition); *failed* when a job spent every attempt on
it; *pending* while a job still has it queued; *missing* otherwise. The member is the last
good capture, unless the user chose another one that still exists.

:func:`refresh_ledger` rewrites the ledger and the members in one write session and
returns the :class:`~archiver_app.editions.states.Facts` the lifecycle needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TypeVar

from sqlalchemy import and_, insert, or_, select
from sqlalchemy.orm import Session

from archiver_app.editions.models import Edition, EditionGap, EditionMember, EditionTarget
from archiver_app.editions.states import (
    EditionState,
    Facts,
    MemberChange,
    TargetState,
    is_flagged,
)
from archiver_app.store.fulltext import has_fulltext
from archiver_app.store.models import CRAWL_KIND_NAMES, Job, Page, PageState, Snapshot
from archiver_app.store.models import SnapshotState as Snap
from archiver_app.warc.surt import domain_of, url_key

CHUNK = 500
#: How an abort marks the pages it skipped (crawl.jobs.abort_job): intended, not excluded.
ABORTED = "aborted:"
T = TypeVar("T")


class TargetSource(StrEnum):
    SEED = "seed"
    LIST = "list"
    JOB = "job"


_RANK = {TargetSource.SEED: 0, TargetSource.LIST: 1, TargetSource.JOB: 2}


@dataclass
class _Seen:
    """Everything the sources say about one URL."""

    url: str
    source: TargetSource
    job_id: int | None = None
    intended: bool = False  # a list, or a page that was not skipped
    rule: str | None = None  # the first rule that excluded it
    failed: bool = False
    pending: bool = False
    attempts: int = 0
    error: str | None = None
    snapshots: set[int] = field(default_factory=set)  # captures its pages made

    def add_source(self, source: TargetSource, job_id: int | None) -> None:
        if _RANK[source] < _RANK[self.source]:
            self.source = source
        if self.job_id is None:
            self.job_id = job_id


def chunks(values: Sequence[T]) -> Iterator[list[T]]:
    for i in range(0, len(values), CHUNK):
        yield list(values[i : i + CHUNK])


def edition_jobs(s: Session, ed: Edition) -> list[Job]:
    """The collection's capture and crawl jobs that ran in the period, and the edition's own."""
    in_period = and_(
        Job.created_at < ed.period_end,
        or_(Job.finished_at.is_(None), Job.finished_at >= ed.period_start),
    )
    own = Job.id.in_(list(ed.job_ids or []))
    return list(
        s.scalars(
            select(Job)
            .where(
                Job.collection_id == ed.collection_id,
                Job.kind.in_(CRAWL_KIND_NAMES),
                or_(in_period, own),
            )
            .order_by(Job.id)
        )
    )


def _note(
    seen: dict[str, _Seen], url: str, source: TargetSource, job_id: int | None, key: str = ""
) -> _Seen:
    key = key or url_key(url)
    entry = seen.get(key)
    if entry is None:
        entry = seen[key] = _Seen(url, source, job_id)
    else:
        entry.add_source(source, job_id)
    return entry


def _gather(s: Session, ed: Edition, list_urls: Iterable[str]) -> dict[str, _Seen]:
    """What the lists, the jobs' seeds and the jobs' pages say about each URL."""
    seen: dict[str, _Seen] = {}
    for target in s.scalars(
        select(EditionTarget).where(EditionTarget.edition_id == ed.id).order_by(EditionTarget.id)
    ):
        entry = _note(seen, target.url, TargetSource(target.source), target.job_id, target.url_key)
        entry.intended = entry.intended or target.source == TargetSource.LIST
    for url in list_urls:
        _note(seen, url, TargetSource.LIST, None).intended = True
    jobs = edition_jobs(s, ed)
    for job in jobs:
        for seed in job.config.get("seeds", []):
            _note(seen, seed, TargetSource.SEED, job.id)
    for part in chunks([j.id for j in jobs]):
        rows = s.execute(
            select(Page.job_id, Page.url, Page.state, Page.attempts, Page.skip_reason,
                   Page.last_error, Page.snapshot_id)
            .where(Page.job_id.in_(part))
            .order_by(Page.job_id, Page.id)
        )  # fmt: skip
        for job_id, url, state, attempts, skip, error, snapshot_id in rows:
            entry = _note(seen, url, TargetSource.JOB, job_id)
            entry.attempts = max(entry.attempts, attempts)
            if state == PageState.SKIPPED and not (skip or "").startswith(ABORTED):
                entry.rule = entry.rule or skip or "skipped"
                continue
            entry.intended = True
            if state == PageState.FAILED:
                entry.failed, entry.error = True, error or entry.error
            elif state in (PageState.READY, PageState.CLAIMED):
                entry.pending = True
            elif snapshot_id is not None:
                entry.snapshots.add(snapshot_id)
    return seen


@dataclass(frozen=True)
class _Capture:
    id: int
    url_key: str
    captured_at: datetime


def _good(state: str, status: int | None) -> bool:
    """Complete, and not a server error (a capture of the failure, which the crawl retries)."""
    return state == Snap.COMPLETE and (status is None or status < 500)


class Fit(StrEnum):
    """Can a capture stand for its URL in an edition? The one rule for what counts as
    captured: the ledger counts only ``FITS``, and a member the user chooses must fit."""

    FITS = "fits"
    OTHER_COLLECTION = "other_collection"
    INCOMPLETE = "incomplete"
    SERVER_ERROR = "server_error"  # a 5xx answer: a capture of the failure
    OUT_OF_PERIOD = "out_of_period"  # and not by a job queued for the edition


def fit(
    ed: Edition,
    *,
    collection_id: int | None,
    state: str,
    status: int | None,
    captured_at: datetime,
    job_id: int | None,
) -> Fit:
    """Whether a capture (its columns) counts as captured in ``ed``, or why not."""
    if collection_id != ed.collection_id:
        return Fit.OTHER_COLLECTION
    if state != Snap.COMPLETE:
        return Fit.INCOMPLETE
    if not _good(state, status):
        return Fit.SERVER_ERROR
    if not (ed.period_start <= captured_at < ed.period_end or job_id in (ed.job_ids or [])):
        return Fit.OUT_OF_PERIOD
    return Fit.FITS


def _captures(s: Session, ed: Edition, seen: dict[str, _Seen]) -> dict[str, list[_Capture]]:
    """Good captures of each URL key in the collection, within the period or by the
    edition's own jobs, plus those the jobs' pages point at.

    Only ``url_key IN (...)`` is asked of the database, so that it walks the url_key index;
    the rest is decided here (with more conditions SQLite may scan the collection instead).
    """
    cols = (Snapshot.id, Snapshot.url_key, Snapshot.captured_at, Snapshot.state,
            Snapshot.http_status, Snapshot.collection_id, Snapshot.job_id)  # fmt: skip
    found: dict[int, _Capture] = {}
    for keys in chunks(sorted(seen)):
        for sid, key, at, state, status, cid, job in s.execute(
            select(*cols).where(Snapshot.url_key.in_(keys))
        ):
            how = fit(ed, collection_id=cid, state=state, status=status, captured_at=at,
                      job_id=job)  # fmt: skip
            if how is Fit.FITS:
                found[sid] = _Capture(sid, key, at)
    linked = {sid: key for key, e in seen.items() for sid in e.snapshots}
    for ids in chunks(sorted(set(linked) - set(found))):
        for sid, _key, at, state, status, _cid, _job in s.execute(
            select(*cols).where(Snapshot.id.in_(ids))
        ):
            if _good(state, status):
                found[sid] = _Capture(sid, linked[sid], at)  # a redirect: filed under the page
    by_key: dict[str, list[_Capture]] = {}
    for cap in found.values():
        by_key.setdefault(cap.url_key, []).append(cap)
    return by_key


def _state(entry: _Seen, captured: bool) -> TargetState:
    if captured:
        return TargetState.CAPTURED
    if entry.failed:
        return TargetState.FAILED
    if entry.pending:
        return TargetState.PENDING
    if entry.intended or entry.rule is None:
        return TargetState.MISSING
    return TargetState.EXCLUDED


def _fields(entry: _Seen, state: TargetState) -> dict[str, object]:
    return {
        "domain": domain_of(entry.url),
        "source": entry.source.value,
        "job_id": entry.job_id,
        "excluded_rule": entry.rule,
        "detail": entry.error if entry.failed else None,
        "attempts": entry.attempts,
        "state": state.value,
    }


def refresh_ledger(s: Session, ed: Edition, now: datetime, list_urls: Iterable[str] = ()) -> None:
    """Rewrite ``ed``'s targets and members from the library (not for a frozen edition).

    New targets and members are inserted in bulk and stored ones changed only where they
    differ: an edition of 50,000 URLs refreshes in seconds.
    """
    seen = _gather(s, ed, list_urls)
    captures = _captures(s, ed, seen)
    targets = {
        t.url_key: t
        for t in s.scalars(select(EditionTarget).where(EditionTarget.edition_id == ed.id))
    }
    members = {
        m.target_id: m
        for m in s.scalars(select(EditionMember).where(EditionMember.edition_id == ed.id))
    }
    new_targets: list[dict[str, object]] = []
    new_members: dict[str, int] = {}  # url key -> snapshot id, for targets inserted now
    for key, entry in seen.items():
        target = targets.get(key)
        member = members.get(target.id) if target is not None else None
        chosen = _choose(member, captures.get(key, []))
        fields = _fields(entry, _state(entry, chosen is not None))
        if target is None:
            new_targets.append({"edition_id": ed.id, "url": entry.url, "url_key": key, **fields})
            if chosen is not None:
                new_members[key] = chosen
            continue
        for name, value in fields.items():
            if getattr(target, name) != value:
                setattr(target, name, value)
        if chosen is None:
            if member is not None:
                s.delete(member)
        elif member is None:
            s.add(EditionMember(target_id=target.id, edition_id=ed.id, snapshot_id=chosen,
                                chosen_at=now))  # fmt: skip
        elif member.snapshot_id != chosen:
            member.snapshot_id, member.chosen_by, member.chosen_at = chosen, "default", now
    s.flush()
    for part in chunks(new_targets):
        s.execute(insert(EditionTarget), part)
    if new_members:
        ids = dict(
            s.execute(
                select(EditionTarget.url_key, EditionTarget.id).where(
                    EditionTarget.edition_id == ed.id
                )
            ).all()
        )
        rows = [
            {"target_id": ids[key], "edition_id": ed.id, "snapshot_id": sid,
             "chosen_by": "default", "chosen_at": now}
            for key, sid in new_members.items()
        ]  # fmt: skip
        for part in chunks(rows):
            s.execute(insert(EditionMember), part)


def _choose(member: EditionMember | None, candidates: list[_Capture]) -> int | None:
    """The user's choice while it exists and counts (:func:`fit`), else the last good
    capture."""
    if (
        member is not None
        and member.chosen_by == "user"
        and any(c.id == member.snapshot_id for c in candidates)
    ):
        return member.snapshot_id
    if not candidates:
        return None
    return max(candidates, key=lambda c: (c.captured_at, c.id)).id


def members_by_key(s: Session, ed: Edition) -> dict[str, tuple[str, int | None]]:
    """Each target's URL key -> its URL and member capture (None: no member)."""
    return {
        key: (url, sid)
        for key, url, sid in s.execute(
            select(EditionTarget.url_key, EditionTarget.url, EditionMember.snapshot_id)
            .outerjoin(EditionMember, EditionMember.target_id == EditionTarget.id)
            .where(EditionTarget.edition_id == ed.id)
        )
    }


def member_changes(
    before: dict[str, tuple[str, int | None]], after: dict[str, tuple[str, int | None]]
) -> tuple[MemberChange, ...]:
    """The URLs whose member differs between two :func:`members_by_key` readings."""
    out = []
    for key in sorted(set(before) | set(after)):
        url, was = before.get(key, (None, None))
        url2, now = after.get(key, (None, None))
        if was != now:
            out.append(MemberChange(str(url or url2), was, now))
    return tuple(out)


def pending_member_changes(s: Session, ed: Edition) -> tuple[MemberChange, ...]:
    """What :func:`refresh_ledger` would change of ``ed``'s members now (it only reads):
    a URL captured again since would be represented by its newest capture."""
    seen = _gather(s, ed, ())
    captures = _captures(s, ed, seen)
    members = {m.target_id: m for m in s.scalars(
        select(EditionMember).where(EditionMember.edition_id == ed.id))}  # fmt: skip
    targets = {t.url_key: t.id for t in s.scalars(
        select(EditionTarget).where(EditionTarget.edition_id == ed.id))}  # fmt: skip
    current = members_by_key(s, ed)
    planned = {
        key: (entry.url, _choose(members.get(targets.get(key, -1)), captures.get(key, [])))
        for key, entry in seen.items()
    }
    return member_changes(current, planned)


def facts(s: Session, ed: Edition) -> Facts:
    """The lifecycle's view of ``ed``'s ledger."""
    rows = s.execute(
        select(EditionTarget.url, EditionTarget.state, EditionGap.reason)
        .outerjoin(EditionGap, EditionGap.target_id == EditionTarget.id)
        .where(EditionTarget.edition_id == ed.id)
        .order_by(EditionTarget.id)
    ).all()
    states = [TargetState(r[1]) for r in rows]
    unexplained = tuple(
        url for url, st, reason in rows if TargetState(st).is_gap and not (reason or "").strip()
    )
    members = member_snapshot_ids(s, ed.id)
    return Facts(
        captured=states.count(TargetState.CAPTURED),
        attempted=states.count(TargetState.CAPTURED) + states.count(TargetState.FAILED),
        pending=states.count(TargetState.PENDING),
        unindexed=len(members) - len(indexed(s, members)),
        unexplained=unexplained,
        flagged=is_flagged(EditionState(ed.state), ed.review_note),
    )


def member_snapshot_ids(s: Session, edition_id: int) -> list[int]:
    return [
        sid
        for sid in s.scalars(
            select(EditionMember.snapshot_id).where(
                EditionMember.edition_id == edition_id, EditionMember.snapshot_id.is_not(None)
            )
        )
        if sid is not None
    ]


def indexed(s: Session, snapshot_ids: Sequence[int]) -> set[int]:
    """Which of ``snapshot_ids`` the full-text index holds (all of them without one)."""
    conn = s.connection()
    if not has_fulltext(conn):
        return set(snapshot_ids)
    out: set[int] = set()
    for part in chunks(sorted(snapshot_ids)):
        marks = ",".join(str(int(i)) for i in part)
        sql = f"SELECT rowid FROM snapshot_fts WHERE rowid IN ({marks})"  # noqa: S608
        out.update(int(r[0]) for r in conn.exec_driver_sql(sql))
    return out
