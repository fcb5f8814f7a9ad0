"""Change summaries kept per capture, and the library's recent changes.

:func:`record_change` compares a new capture with the previous complete capture of the same
address made the same way (in the same browser profile; saved while browsing or not: see
:func:`previous_capture`) and stores the :class:`~archiver_app.compare.ChangeSummary` in
``snapshot_changes`` (``changed`` false marks an unchanged capture). A failed capture is
never compared: it gets no row, so it can never be reported as a removal. The first
capture of an address (made that way) has nothing to be compared with and gets no row
either, nor does a capture its job's next attempt at the page captured again (an error
page tried again): that attempt is compared with the capture before the first, so a run is
one change. How many resources now answer an error is not kept in the row: it is read back
from the two captures' records when a kept summary is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, true
from sqlalchemy.orm import aliased

from archiver_app.compare.redirects import landed, redirect_note
from archiver_app.compare.snapshots import ChangeSummary, compare_captures, resources_now_error
from archiver_app.library import Library
from archiver_app.store.models import PageAttempt, Snapshot, SnapshotChange, SnapshotState

#: ``provenance["mode"]`` of a capture saved from a browsing session (capture/browse).
BROWSE_MODE = "browse"


@dataclass(frozen=True)
class ChangeRow:
    """One compared capture, for the Changes view and ``archiver watch changes``."""

    snapshot_id: int
    previous_id: int | None
    url: str
    title: str
    captured_at: datetime
    previous_at: datetime | None
    summary: ChangeSummary


def _tried_again() -> Any:
    """The condition "``Snapshot`` is the capture of an attempt at a page that a later
    attempt in the same job captured again" (a 5xx error page kept, then retried)."""
    first, later = aliased(PageAttempt), aliased(PageAttempt)
    return (
        select(first.id)
        .join(later, (later.page_id == first.page_id) & (later.attempt > first.attempt))
        .where(first.snapshot_id == Snapshot.id, later.snapshot_id.is_not(None))
        .exists()
    )


def _browsed() -> Any:
    """The condition "``Snapshot`` was saved from a browsing session" (``archiver browse``:
    a page a person scrolled, clicked and expanded by hand)."""
    return func.coalesce(Snapshot.provenance["mode"].as_string(), "") == BROWSE_MODE


def _made_the_same_way(snap: Snapshot) -> Any:
    """The condition "``Snapshot`` was made as ``snap`` was": in the same browser profile
    (or both in a fresh browser), and both saved from a browsing session or neither."""
    browsed = (snap.provenance or {}).get("mode") == BROWSE_MODE
    profile = (
        Snapshot.profile.is_(None) if snap.profile is None else Snapshot.profile == snap.profile
    )
    return profile & (_browsed() if browsed else ~_browsed())


def previous_capture(lib: Library, snapshot_id: int, *, same_way: bool = True) -> int | None:
    """The complete capture of the same address just before this one, made the same way
    (:func:`_made_the_same_way`; ``same_way`` False: made any way), if any. So a watch's
    capture is never compared with a page saved while browsing, or logged in with another
    profile, which load other things than it does. A capture its own job's next attempt at
    the page replaced (an error page tried again) is passed over: a run is compared with
    the run before it, not with its own first attempt."""
    with lib.session() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is None:
            return None
        return s.scalar(
            select(Snapshot.id)
            .where(
                Snapshot.url_group == snap.url_group,
                Snapshot.state == SnapshotState.COMPLETE,
                Snapshot.id != snap.id,
                (Snapshot.captured_at < snap.captured_at)
                | ((Snapshot.captured_at == snap.captured_at) & (Snapshot.id < snap.id)),
                ~_tried_again(),
                _made_the_same_way(snap) if same_way else true(),
            )
            .order_by(Snapshot.captured_at.desc(), Snapshot.id.desc())
            .limit(1)
        )


def tried_again(lib: Library, snapshot_id: int) -> bool:
    """Was this capture replaced by its job's next attempt at the page?"""
    with lib.session() as s:
        return bool(s.scalar(select(_tried_again()).where(Snapshot.id == snapshot_id)))


def retried_of(lib: Library, snapshot_ids: Sequence[int]) -> set[int]:
    """Which of these captures their job's next attempt at the page captured again (an
    error page kept, then tried again in the same run): kept, but not what the run made of
    the page (for timeline marks)."""
    if not snapshot_ids:
        return set()
    with lib.session() as s:
        return set(
            s.scalars(
                select(Snapshot.id).where(Snapshot.id.in_(list(snapshot_ids)), _tried_again())
            )
        )


def record_change(
    lib: Library, snapshot_id: int, *, ignore: Sequence[re.Pattern[str]] = (), again: bool = False
) -> ChangeSummary | None:
    """Compare a capture with the one before it and keep the summary (None: nothing kept).
    ``again``: a kept comparison of the same two captures lends its look (other ignore
    patterns change only what the text decides: the screenshots are not read again)."""
    with lib.session() as s:
        state = s.scalar(select(Snapshot.state).where(Snapshot.id == snapshot_id))
        kept = s.get(SnapshotChange, snapshot_id) if again else None
        look = kept.pixel_share if kept is not None else None
        same_pair = kept is not None and kept.previous_id
    if state != SnapshotState.COMPLETE:
        return None
    if tried_again(lib, snapshot_id):  # its job's next attempt is the one compared
        with lib.write() as s:
            s.execute(delete(SnapshotChange).where(SnapshotChange.snapshot_id == snapshot_id))
        return None
    previous = previous_capture(lib, snapshot_id)
    if previous is None:
        return None
    look = look if same_pair == previous else None
    summary = compare_captures(lib, previous, snapshot_id, ignore=ignore, kept_look=look).summary
    with lib.write() as s:
        s.execute(delete(SnapshotChange).where(SnapshotChange.snapshot_id == snapshot_id))
        s.add(
            SnapshotChange(
                snapshot_id=snapshot_id,
                previous_id=previous,
                changed=summary.changed,
                text_share=summary.text_share,
                pixel_share=summary.pixel_share,
                resources_added=summary.resources_added,
                resources_removed=summary.resources_removed,
                resources_changed=summary.resources_changed,
                compared_at=lib.clock(),
            )
        )
    return summary


def record_changes(
    lib: Library,
    snapshot_ids: Iterable[int],
    *,
    ignore: Sequence[re.Pattern[str]] = (),
    again: bool = False,
) -> dict[int, ChangeSummary]:
    """:func:`record_change` for each capture; returns the summaries that were kept."""
    kept = {}
    for sid in snapshot_ids:
        summary = record_change(lib, sid, ignore=ignore, again=again)
        if summary is not None:
            kept[sid] = summary
    return kept


def _kept() -> Any:
    """The kept changes with both captures' rows (the titles and statuses are theirs)."""
    previous = aliased(Snapshot)
    return (
        select(SnapshotChange, Snapshot, previous)
        .join(Snapshot, Snapshot.id == SnapshotChange.snapshot_id)
        .outerjoin(previous, previous.id == SnapshotChange.previous_id)
    )


def recent_changes(lib: Library, *, limit: int = 200, changed_only: bool = True) -> list[ChangeRow]:
    """The most recently compared captures, newest first."""
    stmt = _kept().order_by(Snapshot.captured_at.desc(), Snapshot.id.desc()).limit(limit)
    if changed_only:
        stmt = stmt.where(SnapshotChange.changed.is_(True))
    with lib.session() as s:
        rows = s.execute(stmt).all()
        found = [
            ChangeRow(
                snapshot_id=change.snapshot_id,
                previous_id=change.previous_id,
                url=snap.url,
                title=snap.title or snap.url,
                captured_at=snap.captured_at,
                previous_at=before.captured_at if before is not None else None,
                summary=_summary(change, snap, before),
            )
            for change, snap, before in rows
        ]
    pairs = {r.snapshot_id: r.previous_id for r in found if r.previous_id}
    summaries = _read_back(lib, {r.snapshot_id: r.summary for r in found}, pairs)
    return [replace(r, summary=summaries[r.snapshot_id]) for r in found]


def _read_back(
    lib: Library, kept: dict[int, ChangeSummary], pairs: dict[int, int]
) -> dict[int, ChangeSummary]:
    """Kept summaries with what their rows do not hold, read from the two captures (new
    capture id -> the one before, in ``pairs``): the resources that now answer an error,
    and what the address's redirect does."""
    failing = resources_now_error(lib, pairs)
    where = landed(lib, [*pairs, *pairs.values()])
    return {
        sid: replace(
            summary,
            resources_now_error=failing.get(sid, 0),
            redirect=redirect_note(where, pairs[sid], sid) if sid in pairs else None,
        )
        for sid, summary in kept.items()
    }


def _summary(change: SnapshotChange, snap: Snapshot, before: Snapshot | None) -> ChangeSummary:
    return ChangeSummary(
        changed=change.changed,
        text_share=change.text_share,
        pixel_share=change.pixel_share,
        resources_added=change.resources_added,
        resources_removed=change.resources_removed,
        resources_changed=change.resources_changed,
        # (a previous capture deleted since: its title and status are not known: no change)
        old_title=before.title if before is not None else snap.title,
        new_title=snap.title,
        old_status=before.http_status if before is not None else None,
        new_status=snap.http_status,
    )


def stored_changes(lib: Library, snapshot_ids: Sequence[int]) -> dict[int, ChangeSummary]:
    """The kept summary of each of these captures that was compared."""
    if not snapshot_ids:
        return {}
    stmt = _kept().where(SnapshotChange.snapshot_id.in_(list(snapshot_ids)))
    with lib.session() as s:
        rows = s.execute(stmt).all()
        kept = {change.snapshot_id: _summary(change, snap, before) for change, snap, before in rows}
        pairs = {
            change.snapshot_id: change.previous_id for change, _s, _b in rows if change.previous_id
        }
    return _read_back(lib, kept, pairs)


def changes_of(lib: Library, snapshot_ids: Sequence[int]) -> dict[int, bool]:
    """``changed`` for each of these captures that was compared (for timeline marks)."""
    if not snapshot_ids:
        return {}
    with lib.session() as s:
        rows = s.execute(
            select(SnapshotChange.snapshot_id, SnapshotChange.changed).where(
                SnapshotChange.snapshot_id.in_(list(snapshot_ids))
            )
        ).all()
    return {int(sid): bool(changed) for sid, changed in rows}
