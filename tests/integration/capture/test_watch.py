"""Watched pages with an injected clock: due, not due, caught up once, compared, never twice.

Real Chromium captures a local page that changes between runs; the library's clock is set
by the test, so "a day later" and "a laptop that slept for a week" take no time.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from archiver_app import cli
from archiver_app.compare.changes import recent_changes
from archiver_app.crawl.inline import CAPTURE_CONCURRENCY, run_job_inline
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.watch.runner import add_watch, list_watches, run_due
from tests.helpers.webserver import LocalServer

pytestmark = pytest.mark.slow

PAGE = "<!doctype html><title>Tide table</title><h1>Tide table</h1><p>High water at {t}.</p>"


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clocked(tmp_path: Path) -> Iterator[tuple[Library, Clock]]:
    clock = Clock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))  # a Monday morning
    lib = Library.open(tmp_path / "lib", create=True, clock=clock)
    try:
        yield lib, clock
    finally:
        lib.close()


def test_due_not_due_changed_unchanged_and_caught_up_once(
    clocked: tuple[Library, Clock], local_server: LocalServer
) -> None:
    lib, clock = clocked
    url = local_server.url("/tides")
    local_server.add_static("/tides", PAGE.format(t="06:10"))
    job = add_watch(lib, [url], schedule="daily", ignore=[r"Updated \d+"])
    [row] = list_watches(lib)
    assert (row.job_id, row.schedule, row.next_run_at) == (
        job,
        "daily",
        datetime(2026, 3, 3, 3, 0, tzinfo=UTC),
    )

    first = run_due(lib)  # the first capture is due at once
    assert first.runs == (job,)
    assert [(p.url, p.change) for p in first.pages] == [(url, None)]  # nothing to compare yet

    clock.now += timedelta(hours=6)  # 15:00: the next slot (03:00 tomorrow) has not come
    assert run_due(lib).runs == ()

    local_server.add_static("/tides", PAGE.format(t="07:25"))
    clock.now = datetime(2026, 3, 3, 3, 5, tzinfo=UTC)  # just past the slot
    second = run_due(lib)
    assert len(second.runs) == 1
    [page] = second.pages
    assert page.change is not None and page.change.changed
    assert page.change.text_share is not None and page.change.text_share > 0

    clock.now = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)  # asleep for a week: seven slots
    third = run_due(lib)
    assert len(third.runs) == 1  # caught up once, not seven times
    [page] = third.pages
    assert page.change is not None and not page.change.changed  # same page: unchanged
    assert run_due(lib).runs == ()  # and not due again until tomorrow 03:00

    changes = recent_changes(lib)
    assert [c.url for c in changes] == [url]  # only the real change is listed
    assert len(recent_changes(lib, changed_only=False)) == 2


def test_a_failed_capture_is_reported_not_a_change(
    clocked: tuple[Library, Clock], local_server: LocalServer
) -> None:
    lib, clock = clocked
    local_server.add_static("/ok", PAGE.format(t="06:10"))
    url = local_server.url("/ok")
    add_watch(lib, [url], schedule="hourly")
    run_due(lib)
    local_server.stop()  # the site is gone
    clock.now += timedelta(hours=2)
    report = run_due(lib)
    assert [p.url for p in report.failed] == [url]
    assert report.changed == []
    assert recent_changes(lib, changed_only=False) == []


def test_a_page_that_starts_redirecting_says_where_it_now_leads(
    clocked: tuple[Library, Clock], local_server: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A watched page replaced by a redirect (it moved) was reported only as a text change;
    `watch run` names where it now leads, and when it stops redirecting."""
    from tests.helpers.webserver import Response

    lib, clock = clocked
    local_server.add_static("/notices", PAGE.format(t="06:10"))
    local_server.add_static("/moved", "<!doctype html><title>Moved</title><p>Notices moved.</p>")
    url, moved = local_server.url("/notices"), local_server.url("/moved")
    job = add_watch(lib, [url], schedule="hourly")
    [first] = run_due(lib).pages
    assert first.redirect is None

    local_server.routes["/notices"] = lambda _req: Response(302, b"", [("Location", "/moved")])
    clock.now += timedelta(hours=2)
    [moving] = run_due(lib).pages
    assert moving.redirect == f"now redirects to {moved}"
    assert moving.change is not None and moving.change.changed

    clock.now += timedelta(hours=2)  # still redirecting: no news
    [same] = run_due(lib).pages
    assert same.redirect is None and same.change is not None and not same.change.changed

    local_server.add_static("/notices", PAGE.format(t="06:10"))
    # the command's own clock is the real one: months after the test's, so the watch is due
    assert cli.main(["--library", str(lib.root), "watch", "run", str(job)]) == 0
    out = capsys.readouterr().out
    assert f"changed: {url} (no longer redirects to {moved}; " in out


def test_bad_schedules_and_patterns_are_refused(clocked: tuple[Library, Clock]) -> None:
    lib, _ = clocked
    with pytest.raises(InputError, match="position 2"):
        add_watch(lib, ["http://127.0.0.1:9/"], schedule="0 25 * * *")
    with pytest.raises(InputError, match="position 0"):
        add_watch(lib, ["http://127.0.0.1:9/"], ignore=["(unclosed"])
    assert list_watches(lib) == []


def _queue_due_slots(root: str, start: Any, out: Any) -> None:
    """A forked child's part: open the library, wait for the others, queue what is due."""
    from archiver_app.crawl.jobs import start_due_schedules

    lib = Library.open(root, create=False)
    try:
        start.wait(60)
        out.put(len(start_due_schedules(lib, now=datetime(2100, 1, 1, 0, 30, tzinfo=UTC))))
    finally:
        lib.close()


def test_two_processes_never_queue_the_same_slot(tmp_path: Path) -> None:
    """Two processes look for due watches at the same moment: one run is queued, not two.

    Four forked processes (not four new interpreters, each importing the app for a second
    under load) open the library, then are released together by a barrier."""
    root = tmp_path / "lib"
    assert (
        cli.main(
            ["--library", str(root), "watch", "add", "http://127.0.0.1:9/", "--schedule", "hourly"]
        )
        == 0
    )
    ctx = multiprocessing.get_context("fork")
    start, out = ctx.Barrier(4), ctx.SimpleQueue()
    procs = [ctx.Process(target=_queue_due_slots, args=(str(root), start, out)) for _ in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
    assert [proc.exitcode for proc in procs] == [0, 0, 0, 0]
    created = [out.get() for _ in procs]
    assert sorted(created) == [0, 0, 0, 1]


def by_hand(lib: Library, *urls: str) -> None:
    """A capture of ``urls`` made outside any watch (as `archiver capture` makes it)."""
    run_job_inline(lib, lib.jobs.capture(list(urls)), concurrency=CAPTURE_CONCURRENCY)


def test_a_watched_page_captured_by_hand_is_compared_too(
    clocked: tuple[Library, Clock], local_server: LocalServer
) -> None:
    """A capture of a watched address made outside the watch (the address bar, a crawl)
    is compared with the one before, with the watch's ignore patterns, as the watch's own
    are: the Changes view lists it and the timeline marks it. An address no watch watches,
    captured in the same jobs, is not compared. The captures run here, as `archiver capture`
    runs them (a child process for each, as the window's, cost seconds of start-up;
    tests/integration/watch/test_run_elsewhere.py runs a watch's job that way)."""
    lib, clock = clocked
    url, other = local_server.url("/tides"), local_server.url("/other")
    local_server.add_static("/tides", PAGE.format(t="06:10") + "<p>Updated 1</p>")
    local_server.add_static("/other", PAGE.format(t="08:00"))
    add_watch(lib, [url], schedule="daily", ignore=[r"Updated \d+"])
    run_due(lib)  # the watch's first capture
    local_server.add_static("/tides", PAGE.format(t="06:10") + "<p>Updated 2</p>")
    clock.now += timedelta(minutes=5)
    by_hand(lib, url, other)  # only the ignored counter moved
    [same] = recent_changes(lib, changed_only=False)
    assert same.url == url and same.summary.text_share == 0.0  # "Updated 2" is ignored
    # its pixels and its HTML's bytes moved with the counter: measured, not a change
    assert same.summary.resources_changed == 1 and not same.summary.changed
    local_server.add_static("/tides", PAGE.format(t="07:25") + "<p>Updated 3</p>")
    clock.now += timedelta(minutes=5)
    by_hand(lib, url, other)
    changed, before = recent_changes(lib, changed_only=False)  # newest first; not /other
    assert changed.url == url and changed.summary.changed and before == same
    assert changed.summary.text_share and changed.previous_id == same.snapshot_id


def test_patterns_for_one_page_of_a_watch_do_not_hide_another_page_s_swapped_image(
    clocked: tuple[Library, Clock], local_server: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A watch of two pages: ignored text written for one (a generated time, a token) is
    not on the other, whose image was swapped under the same address; that capture stays
    changed in the kept comparisons and in `archiver diff` once the patterns are given."""
    from io import BytesIO

    from PIL import Image

    def png(colour: tuple[int, int, int]) -> bytes:
        out = BytesIO()
        Image.new("RGB", (120, 120), colour).save(out, "PNG")
        return out.getvalue()

    lib, clock = clocked
    img, gen = local_server.url("/img.html"), local_server.url("/gen.html")
    local_server.add_static("/img.html", "<title>Picture</title><h1>Picture</h1><img src=pic.png>")
    local_server.add_static("/pic.png", png((200, 30, 30)), "image/png")
    local_server.add_static("/gen.html", "<title>Gen</title><p>Generated at 1</p>")
    job = add_watch(lib, [img, gen], schedule="daily")
    run_due(lib)
    local_server.add_static("/pic.png", png((20, 40, 200)), "image/png")
    clock.now += timedelta(days=2)
    run_due(lib)
    [swapped] = [c for c in recent_changes(lib, changed_only=False) if c.url == img]
    assert swapped.summary.changed and swapped.summary.resources_changed == 1
    root = ["--library", str(lib.root)]
    given = ["--ignore", "^Generated at .*$", "--ignore", "^Token: [0-9a-f]+$"]
    assert cli.main([*root, "watch", "job", str(job), *given]) == 0
    [again] = [c for c in recent_changes(lib, changed_only=False) if c.url == img]
    assert again.summary.changed  # the kept comparison was made again: still a change
    capsys.readouterr()
    assert cli.main([*root, "diff", str(again.previous_id), str(again.snapshot_id)]) == 0
    out = capsys.readouterr().out
    assert "no change between these captures" not in out and "pic.png" in out
