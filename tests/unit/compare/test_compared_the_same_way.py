"""A capture is compared with the capture before it made the same way: in the same browser
profile, and saved while browsing (``archiver browse``) or not. A page a person browsed
(scrolled, clicked, expanded by hand) or saw logged in with another profile loads other
things than a watch's capture of it: it is never the watch's "before"."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select, update

from archiver_app.compare.changes import previous_capture
from archiver_app.jobs import JobKind
from archiver_app.jobs.operations import browse_config
from archiver_app.library import Library
from archiver_app.store.models import Snapshot, SnapshotChange
from archiver_app.watch.runner import compare_watched
from tests.helpers.snapshots import add_snapshot

URL = "https://harbour.example/notices"
PAGE = "Harbour notices\nThe ferry leaves at 9:00."
BROWSED = PAGE + "\nOlder notices, loaded by a click."


def _capture(
    library: Library,
    day: int,
    body: str,
    *,
    job: int,
    profile: str | None = None,
    browsed: bool = False,
) -> int:
    mode = {"mode": "browse"} if browsed else {}
    sid = add_snapshot(
        library,
        URL,
        title="Notices",
        body=body,
        captured_at=datetime(2026, 3, day, tzinfo=UTC),
        provenance={"backend": "playwright", "profile": profile, **mode},
    )
    with library.write() as s:
        s.execute(update(Snapshot).where(Snapshot.id == sid).values(job_id=job, profile=profile))
    return sid


def _compared_with(library: Library, sid: int) -> int | None:
    with library.session() as s:
        change = s.get(SnapshotChange, sid)
        return change.previous_id if change is not None else None


def _changed(library: Library, sid: int) -> bool:
    with library.session() as s:
        return bool(
            s.scalar(select(SnapshotChange.changed).where(SnapshotChange.snapshot_id == sid))
        )


def test_a_page_saved_while_browsing_is_never_the_watch_s_before(any_library: Library) -> None:
    library = any_library
    watch = library.jobs.watch([URL], schedule="daily")
    config = browse_config(start_url=URL, collection="default")
    session = library.jobs.enqueue(JobKind.BROWSE, config, name="Browsing")
    first = _capture(library, 1, PAGE, job=watch)
    compare_watched(library, watch)
    browsed = _capture(library, 2, BROWSED, job=session, browsed=True)
    compare_watched(library, session)
    assert _compared_with(library, browsed) is None  # the first page browsed: none before it

    again = _capture(library, 3, PAGE, job=watch)
    compare_watched(library, watch)
    assert _compared_with(library, again) == first  # the watch's own capture before
    assert not _changed(library, again)  # not "a click's notices removed"
    assert previous_capture(library, again, same_way=False) == browsed  # (made any way)

    browsed_again = _capture(library, 4, BROWSED + "\nA new notice.", job=session, browsed=True)
    compare_watched(library, session)
    assert _compared_with(library, browsed_again) == browsed  # browsed, with browsed
    assert _changed(library, browsed_again)


def test_two_watches_of_one_address_in_two_profiles_are_two_series(any_library: Library) -> None:
    """Watched logged out and logged in (``--profile``), each capture is compared with its
    own profile's, not with the login form the other saw."""
    library = any_library
    watch = library.jobs.watch([URL], schedule="daily")
    login, members = "Log in\nUser\nPassword", "Members area\nGrade A+"
    out1 = _capture(library, 1, login, job=watch)
    in1 = _capture(library, 2, members, job=watch, profile="alice")
    out2 = _capture(library, 3, login, job=watch)
    in2 = _capture(library, 4, members, job=watch, profile="alice")
    compare_watched(library, watch)
    assert _compared_with(library, in1) is None and _compared_with(library, out1) is None
    assert _compared_with(library, out2) == out1 and not _changed(library, out2)
    assert _compared_with(library, in2) == in1 and not _changed(library, in2)
