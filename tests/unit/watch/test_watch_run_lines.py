"""What `watch run` prints of a changed page: the figures `watch changes` gives, and an
error answered for another error is a change, not "answers again"."""

from __future__ import annotations

from sqlalchemy import update

from archiver_app.library import Library

PAGE = "http://127.0.0.1:18473/watch/page.html"


def test_watch_run_says_what_changed(library: Library) -> None:
    """`watch run`'s line of a changed page gives the figures `watch changes` gives."""
    from datetime import UTC, datetime

    from archiver_app.commands.watch_cmd import _outcome
    from archiver_app.compare.changes import record_change
    from archiver_app.store.models import Snapshot
    from archiver_app.watch.runner import PageOutcome
    from tests.helpers.snapshots import add_snapshot

    def capture(day: int, title: str, body: str) -> int:
        when = datetime(2026, 3, day, tzinfo=UTC)
        return add_snapshot(library, PAGE, title=title, body=body, captured_at=when)

    capture(1, "Notices v1", "Notices\nFirst notice: river closed.\nSecond notice.")
    b = capture(2, "Notices v2", "Notices\nFirst notice: river OPEN.\nSecond notice.")
    change = record_change(library, b)
    assert change is not None
    line = _outcome(PageOutcome(PAGE, b, None, change, 200))
    assert line == (
        f'changed: {PAGE} (title "Notices v1" -> "Notices v2", text 33.3%, look 0%, '
        f"resources +0 -0 ~0; capture {b})"
    )
    c = capture(3, "Notices v2", "Notices\nFirst notice: river OPEN.\nSecond notice.")
    with library.write() as s:  # one error for another: not "answers again"
        s.execute(update(Snapshot).where(Snapshot.id.in_([b, c])).values(http_status=404))
        s.execute(update(Snapshot).where(Snapshot.id == c).values(http_status=500))
    change = record_change(library, c)
    assert change is not None
    assert _outcome(PageOutcome(PAGE, c, None, change, 500)).startswith(
        f"changed: {PAGE} (HTTP 404 -> 500, "
    )
