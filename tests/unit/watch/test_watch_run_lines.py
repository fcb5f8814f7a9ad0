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


def test_a_swapped_image_under_ignore_patterns_is_a_change(library: Library) -> None:
    """Ignore patterns explain the page's pixels and its own HTML, not its subresources:
    an image swapped under the same address is a change whatever the patterns leave out.
    A capture whose look alone moved with its ignored text is `unchanged:`, its look shown."""
    from datetime import UTC, datetime

    from archiver_app.commands.watch_cmd import _outcome
    from archiver_app.compare import compile_ignore_patterns
    from archiver_app.compare.changes import record_change
    from archiver_app.compare.snapshots import screenshot_path
    from archiver_app.store.models import Record
    from archiver_app.watch.runner import PageOutcome
    from tests.helpers.archive import ArchiveWriter
    from tests.helpers.snapshots import add_snapshot, write_png

    ids = []
    days = ((1, "a harbour at dawn"), (2, "a harbour at night"), (3, "a harbour at night"))
    for day, picture in days:
        when = datetime(2026, 3, day, 9, 0, tzinfo=UTC)
        sid = add_snapshot(library, PAGE, title="Harbour", body=f"Harbour\nVisitors: {day}",
                           captured_at=when)  # fmt: skip
        w = ArchiveWriter(library, f"collections/default/2026/03/day{day}.warc.gz")
        w.response("http://127.0.0.1:18473/watch/photo.jpg", picture, at=when)
        with library.write() as s:
            s.execute(update(Record).where(Record.id.in_(w.commit())).values(snapshot_id=sid))
        ids.append(sid)
        shot = screenshot_path(library, sid)
        assert shot is not None
        write_png(shot, color="#202040" if day > 1 else "#d0d0f0")  # the new picture shows

    counter = compile_ignore_patterns([r"^Visitors: \d+$"])
    change = record_change(library, ids[1], ignore=counter)
    assert change is not None and change.changed and change.resources_changed == 1
    assert _outcome(PageOutcome(PAGE, ids[1], None, change, 200)).startswith(f"changed: {PAGE} (")

    shot = screenshot_path(library, ids[2])
    assert shot is not None
    write_png(shot, color="#d53a3a")  # the counter's digits moved some pixels
    same = record_change(library, ids[2], ignore=counter)
    assert same is not None and not same.changed
    line = _outcome(PageOutcome(PAGE, ids[2], None, same, 200))
    assert line.startswith(f"unchanged: {PAGE} (look ")
    assert line.endswith(
        f": not counted as a change: the text and the subresources are the same; capture {ids[2]})"
    )


def test_an_error_page_is_blamed_on_the_site_when_the_page_answered_well_before() -> None:
    """A page the watch captured answering well asked "is the address right?" when it
    answered an error; that question is for a page that never answered well."""
    from archiver_app.commands.watch_cmd import _outcome
    from archiver_app.compare.snapshots import ChangeSummary
    from archiver_app.watch.runner import PageOutcome

    same = ChangeSummary(False, 0.0, 0.0, 0, 0, 0, "Down", "Down", 500, 500)
    down = _outcome(PageOutcome(PAGE, 9, None, same, 500, answered_well=3))
    assert down == (
        f"warning: {PAGE} answered HTTP 500 (capture 9, unchanged): an error page was "
        "captured; the page answered fine before (capture 3); the site may be down"
    )
    first = _outcome(PageOutcome(PAGE, 1, None, None, 404))
    assert first.endswith("(capture 1, first capture): an error page was captured; is the "
                          "address right?")  # fmt: skip
    never = _outcome(PageOutcome(PAGE, 4, None, same, 404))
    assert never.endswith("it never answered well in this watch: is the address right?")
