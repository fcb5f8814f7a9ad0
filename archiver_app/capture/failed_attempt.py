"""A page attempt that raised leaves nothing behind: its ``pending`` row and its folder go.

A capture raises past its own error handling when a step it does not expect fails: the
final transaction refused (a revisit whose original was deleted by another machine of a
shared library between the choice and the insert), the folder's files not writable (the
share gone). The page is then tried again; the attempt's ``pending`` row used to stay
behind, shown as "pending 0 B" beside the next capture, or completed from its folder an
hour later as a second capture saying the database had been unreachable (it had not).
:func:`discard_failed_attempt` removes that row and the attempt's folder, as an abort does
for the page in progress (:mod:`.stopping`). When the database is what went away, the
folder is kept for the capture to be completed from it later (:mod:`.salvage`).
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from archiver_app.store.connection_loss import lost_connection
from archiver_app.store.models import Snapshot, SnapshotState
from archiver_app.tasks import Cancelled

if TYPE_CHECKING:
    from archiver_app.library import Library

log = logging.getLogger(__name__)


def leaves_nothing(exc: BaseException) -> bool:
    """Should the attempt that raised ``exc`` be discarded? Not when it was stopped (its
    stop discards it: :mod:`.stopping`) nor when the database is unreachable (its folder
    is how it gets recorded later)."""
    return (
        isinstance(exc, Exception) and not isinstance(exc, Cancelled) and not lost_connection(exc)
    )


def discard_failed_attempt(lib: Library, snapshot_id: int, folder: Path) -> bool:
    """Remove the ``pending`` row ``snapshot_id`` and its ``folder`` (the attempt's own: its
    name is the row's uid); True when removed. A row that is no longer pending (its
    capture was recorded after all) keeps its folder; a database that cannot be reached
    now keeps both (the row is settled later as an interrupted capture)."""
    try:
        with lib.write() as s:
            snap = s.get(Snapshot, snapshot_id)
            if snap is not None and snap.state != SnapshotState.PENDING:
                return False
            if snap is not None:
                s.delete(snap)
    except Exception:
        log.warning("could not remove the failed capture #%s", snapshot_id, exc_info=True)
        return False
    with contextlib.suppress(OSError):  # the share may be what went away
        shutil.rmtree(folder)
    return True
