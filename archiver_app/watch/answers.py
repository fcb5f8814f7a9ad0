"""Whether a watched page that answers an error now answered well before, in its watch.

An error page captured at a watch's first capture of an address may be a mistyped address;
the same error after the watch captured the page answering well is the site failing.
``watch run`` says which (:func:`answered_well`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from archiver_app.library import Library
from archiver_app.store.models import Job, Snapshot, SnapshotState


def answered_well(lib: Library, watch_id: int, snapshot_ids: Sequence[int]) -> dict[int, int]:
    """For each capture in ``snapshot_ids``: the last capture of its address before it, by
    watch ``watch_id`` (the watched job or one of its runs), whose answer was no HTTP error;
    a capture with none is left out."""
    runs = select(Job.id).where(
        (Job.id == watch_id) | (Job.config["scheduled_from"].as_integer() == watch_id)
    )
    found: dict[int, int] = {}
    with lib.session() as s:
        for sid in snapshot_ids:
            snap = s.get(Snapshot, sid)
            if snap is None:
                continue
            well = s.scalar(
                select(Snapshot.id)
                .where(
                    Snapshot.url_group == snap.url_group,
                    Snapshot.state == SnapshotState.COMPLETE,
                    Snapshot.job_id.in_(runs),
                    Snapshot.http_status < 400,
                    (Snapshot.captured_at < snap.captured_at)
                    | ((Snapshot.captured_at == snap.captured_at) & (Snapshot.id < snap.id)),
                )
                .order_by(Snapshot.captured_at.desc(), Snapshot.id.desc())
                .limit(1)
            )
            if well is not None:
                found[sid] = well
    return found
