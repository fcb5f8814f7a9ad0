"""Watches through the application API (``lib.jobs``), as both front ends make them: a
watch with its ignore patterns, a crawl watched afterwards, made due now, stopped."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from archiver_app.crawl.jobs import start_due_schedules
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.watch.runner import DueNow, anything_due


def test_watch_list_make_due_and_stop(library: Library) -> None:
    jobs = library.jobs
    watch = jobs.watch(["https://a.example/", "https://b.example/"], schedule="weekly",
                       ignore=[r"\d+ views"])  # fmt: skip
    [row] = jobs.watches()
    assert row.job_id == watch and row.schedule == "weekly"
    assert row.seeds == ("https://a.example/", "https://b.example/")
    assert row.ignore == (r"\d+ views",)
    assert row.next_run_at is not None and row.next_run_at > library.clock()

    # its first capture is still queued: the next run makes it (not "being captured")
    assert jobs.watch_now([watch]).queued == (watch,)
    from sqlalchemy import update

    from archiver_app.store.models import Job

    with library.write() as s:  # as after its first run
        s.execute(update(Job).where(Job.id == watch).values(status="indexed"))
    assert jobs.watch_now([watch]).made == (watch,)
    [row] = jobs.watches()
    assert row.next_run_at is not None and row.next_run_at <= library.clock()
    [run] = start_due_schedules(library)  # its next run is queued: made once
    assert jobs.watch_now([watch]) == DueNow((), (), (), (watch,))
    with library.write() as s:
        s.execute(update(Job).where(Job.id == run).values(status="running"))
    assert jobs.watch_now([watch]).busy == (watch,)  # under way: no second run of the pages

    jobs.set_schedule(watch, None)
    assert jobs.watches() == []
    assert jobs.watch_now([watch]).not_watches == (watch,)  # stopped: said apart


def test_a_crawl_watched_afterwards_keeps_its_ignore_patterns(library: Library) -> None:
    from archiver_app.api.jobs import CrawlOptions

    jobs = library.jobs
    crawl = jobs.crawl(["https://site.example/"], CrawlOptions(scope="host", max_depth=1))
    with pytest.raises(InputError):
        jobs.set_schedule(crawl, "daily", ignore=["[unclosed"])
    assert jobs.watches() == []  # a bad pattern changed nothing
    jobs.set_schedule(crawl, "daily", ignore=["Updated .*"])
    [row] = jobs.watches()
    assert (row.job_id, row.schedule, row.ignore) == (crawl, "daily", ("Updated .*",))
    assert anything_due(library, now=datetime(2000, 1, 1, tzinfo=UTC))  # its first crawl


def test_the_command_adds_lists_in_words_and_removes(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app import cli

    root = str(library.root)
    add = ["watch", "add", "https://a.example/", "--schedule", "hourly"]
    assert cli.main(["--library", root, *add]) == 0
    job = int(capsys.readouterr().out.split("job ")[1].split()[0])
    assert cli.main(["--library", root, "watch", "list"]) == 0
    listed = capsys.readouterr().out
    assert f"{job:>5}  every hour " in listed and "watch https://a.example/" in listed
    assert cli.main(["--library", root, "watch", "changes"]) == 0  # says so, not nothing
    assert capsys.readouterr().out.startswith("no capture has changed yet")
    change = ["watch", "job", str(job), "--schedule", "daily", "--ignore", "Updated .*"]
    assert cli.main(["--library", root, *change]) == 0
    [row] = library.jobs.watches()
    assert (row.schedule, row.ignore) == ("daily", ("Updated .*",))
    assert cli.main(["--library", root, "watch", "remove", str(job)]) == 0
    capsys.readouterr()
    assert cli.main(["--library", root, "watch", "list"]) == 0
    assert "nothing is watched" in capsys.readouterr().out


def test_an_address_watched_already_is_refused_by_name(library: Library) -> None:
    jobs = library.jobs
    first = jobs.watch(["https://a.example/page"], schedule="daily")
    said = rf"https://a.example/page is watched already \(job {first}, every day"
    with pytest.raises(InputError, match=said):
        jobs.watch(["https://b.example/", "https://a.example/page"], schedule="hourly")
    assert [w.job_id for w in jobs.watches()] == [first]  # nothing written
    jobs.set_schedule(first, None)
    assert jobs.watch(["https://a.example/page"], schedule="hourly") != first


def test_watch_run_refuses_a_job_that_is_not_a_watch(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app import cli

    root = ["--library", str(library.root)]
    watch = library.jobs.watch(["https://a.example/"], schedule="daily")
    _indexed(library, watch)  # its first capture ran: not due
    [before] = library.jobs.watches()
    assert cli.main([*root, "watch", "run", "9999"]) == 2  # a mistake, as `watch pause 99`
    said = capsys.readouterr()
    assert "job 9999 is not a watch: nothing was captured" in said.err
    assert "nothing is due" not in said.out
    assert cli.main([*root, "watch", "run", str(watch), "9998", "9999"]) == 2
    assert "jobs 9998, 9999 are not watches" in capsys.readouterr().err
    assert library.jobs.watches() == [before]  # the watch named with them was not made due


def _indexed(library: Library, job_id: int) -> None:
    """As after the job's run."""
    from sqlalchemy import update

    from archiver_app.store.models import Job

    with library.write() as s:
        s.execute(update(Job).where(Job.id == job_id).values(status="indexed"))


def test_removing_what_is_not_a_watch_is_an_input_error(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app import cli

    root = ["--library", str(library.root)]
    once = library.jobs.capture(["https://a.example/once"])  # a one-off run
    assert cli.main([*root, "watch", "remove", str(once)]) == 2
    said = capsys.readouterr()
    assert f"job {once} is not a watch" in said.err and "no longer watched" not in said.out
    watch = library.jobs.watch(["https://a.example/"], schedule="daily")
    assert cli.main([*root, "watch", "remove", str(watch)]) == 0
    capsys.readouterr()
    assert cli.main([*root, "watch", "remove", str(watch)]) == 2  # removed already
    assert f"job {watch} is not a watch" in capsys.readouterr().err


def test_removing_a_watch_cancels_its_queued_capture(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app import cli
    from archiver_app.store.models import Job, JobStatus

    root = ["--library", str(library.root)]
    watch = library.jobs.watch(["https://a.example/"], schedule="daily")
    _indexed(library, watch)  # its first capture ran
    assert library.jobs.watch_now([watch]).made == (watch,)
    [run] = start_due_schedules(library)  # the next slot's capture, queued

    assert cli.main([*root, "watch", "remove", str(run)]) == 2  # a run is not the watch
    assert f"job {run} is not a watch (it is a run of watch {watch})" in capsys.readouterr().err
    assert cli.main([*root, "watch", "remove", str(watch)]) == 0
    out = capsys.readouterr().out
    assert f"its queued capture (job {run}) is cancelled" in out
    with library.session() as s:
        job = s.get(Job, run)
        assert job is not None and job.status == JobStatus.ABORTED  # no worker takes it
    assert not anything_due(library)

    fresh = library.jobs.watch(["https://b.example/"], schedule="daily")  # never run yet
    assert cli.main([*root, "watch", "remove", str(fresh)]) == 0
    assert f"its first capture (job {fresh}) is still queued and will run once" in (
        capsys.readouterr().out
    )


def test_watching_a_job_whose_address_is_watched_is_refused(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app import cli

    root = ["--library", str(library.root)]
    watch = library.jobs.watch(["https://a.example/page"], schedule="hourly")
    again = library.jobs.capture(["https://a.example/page"])
    assert cli.main([*root, "watch", "job", str(again), "--schedule", "daily"]) == 2
    assert f"is watched already (job {watch}, every hour" in capsys.readouterr().err
    assert [w.job_id for w in library.jobs.watches()] == [watch]  # no second watch
    assert cli.main([*root, "watch", "job", str(watch), "--schedule", "daily"]) == 0  # itself
    assert [(w.job_id, w.schedule) for w in library.jobs.watches()] == [(watch, "daily")]


def test_a_paused_watch_keeps_its_schedule_and_is_captured_only_when_asked(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    """Paused: its queued run is cancelled, no slot comes round however late it is, `watch
    run N` still captures it once (and it stays paused), and resuming gives it its next
    slot; its schedule and ignored text are kept throughout."""
    from datetime import timedelta

    from archiver_app import cli
    from archiver_app.store.models import Job, JobStatus

    root = ["--library", str(library.root)]
    watch = library.jobs.watch(["https://a.example/"], schedule="hourly", ignore=["\\d+ views"])
    _indexed(library, watch)
    assert library.jobs.watch_now([watch]).made == (watch,)
    [queued] = start_due_schedules(library)

    assert cli.main([*root, "watch", "pause", str(watch)]) == 0
    out = capsys.readouterr().out
    assert f"watch {watch} is paused" in out
    assert f"its queued capture (job {queued}) is cancelled" in out
    [row] = library.jobs.watches()
    assert row.paused and row.schedule == "hourly" and row.ignore == ("\\d+ views",)
    assert row.next_run_at is None
    later = library.clock() + timedelta(days=30)
    assert not anything_due(library, now=later)
    assert start_due_schedules(library, now=later) == []
    assert cli.main([*root, "watch", "list"]) == 0
    assert "next paused" in capsys.readouterr().out

    assert library.jobs.watch_now([watch]).made == (watch,)  # Capture Now: once
    [once] = start_due_schedules(library)
    with library.session() as s:
        job = s.get(Job, once)
        assert job is not None and job.status == JobStatus.QUEUED
    [row] = library.jobs.watches()
    assert row.paused and row.next_run_at is None  # and still paused after it
    library.jobs.set_schedule(watch, "daily")  # changing it keeps it paused
    [row] = library.jobs.watches()
    assert row.paused and row.next_run_at is None and row.schedule == "daily"

    assert cli.main([*root, "watch", "resume", str(watch)]) == 0
    assert f"watch {watch} resumed; next capture " in capsys.readouterr().out
    [row] = library.jobs.watches()
    assert not row.paused and row.next_run_at is not None
    assert row.next_run_at > library.clock()
    assert anything_due(library, now=row.next_run_at)

    assert cli.main([*root, "watch", "pause", str(once)]) == 2  # a run is no watch
    assert f"job {once} is not a watch" in capsys.readouterr().err


def test_a_run_reports_only_the_pages_this_process_captured(library: Library) -> None:
    """Two machines of a shared library running due watches at the same moment: the one
    that captured a page reports it; the other said "first capture" for pages it never
    touched, and counted them."""
    from archiver_app.crawl.inline import run_job_inline
    from archiver_app.watch.runner import compare_run
    from tests.helpers.crawl_site import MemoryPage, MemorySiteFetcher, memory_factory

    urls = ["https://a.example/", "https://b.example/"]
    watch = library.jobs.watch(urls, schedule="daily")
    fetcher = MemorySiteFetcher(library, {u: MemoryPage() for u in urls})
    ran = run_job_inline(library, watch, concurrency=1, fetcher_factory=memory_factory(fetcher))
    assert ran.worker_id
    mine = compare_run(library, watch, worker=ran.worker_id)
    assert sorted(p.url for p in mine) == urls
    assert compare_run(library, watch, worker="another-machine:123:abc") == []
    assert len(compare_run(library, watch)) == 2  # no worker named: every page


def test_changing_only_the_ignored_text_keeps_the_schedule(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    """`watch job N --ignore X` changed the ignored text and put the watch on weekly; an
    option not given keeps its value, and a job not yet watched is still weekly."""
    from archiver_app import cli

    root = ["--library", str(library.root)]
    assert cli.main([*root, "watch", "add", "https://a.example/", "--schedule", "*/5 * * * *"]) == 0
    [watch] = library.jobs.watches()
    _indexed(library, watch.job_id)
    assert library.jobs.watch_now([watch.job_id]).made == (watch.job_id,)  # Capture Now pending
    [due] = library.jobs.watches()
    capsys.readouterr()
    ignore = ["watch", "job", str(watch.job_id), "--ignore", r"^Visitors today: \d+$"]
    assert cli.main([*root, *ignore]) == 0
    assert capsys.readouterr().out == f"job {watch.job_id} is watched (*/5 * * * *)\n"
    [row] = library.jobs.watches()
    assert (row.schedule, row.ignore) == ("*/5 * * * *", (r"^Visitors today: \d+$",))
    assert row.next_run_at == due.next_run_at  # still due now, not put off
    assert cli.main([*root, "watch", "job", str(watch.job_id), "--schedule", "hourly"]) == 0
    [row] = library.jobs.watches()
    assert (row.schedule, row.ignore) == ("hourly", (r"^Visitors today: \d+$",))  # kept

    crawl = library.jobs.capture(["https://b.example/"])
    assert cli.main([*root, "watch", "job", str(crawl)]) == 0
    assert capsys.readouterr().out.endswith(f"job {crawl} is watched (weekly)\n")
    assert [w.schedule for w in library.jobs.watches()] == ["hourly", "weekly"]


def test_capture_now_is_logged_as_asked_for_and_a_slot_as_scheduled(library: Library) -> None:
    """A run made by Capture Now (or `watch run JOB`) says so in both jobs' logs; a run
    its schedule made says "scheduled" (Capture Now's said "scheduled run" too)."""
    from datetime import timedelta

    from sqlalchemy import update

    from archiver_app.crawl.api import tail_log
    from archiver_app.store.models import Job

    jobs = library.jobs
    watch = jobs.watch(["https://a.example/"], schedule="daily")
    with library.write() as s:  # as after its first run
        s.execute(update(Job).where(Job.id == watch).values(status="indexed"))
    assert jobs.watch_now([watch]).made == (watch,)
    [asked] = start_due_schedules(library)
    [first] = [line.message for line in tail_log(library, asked)]
    assert first == f"Capture Now run of job {watch}, asked for by hand (its schedule: daily)"
    told = tail_log(library, watch)[-1].message
    assert told.startswith(f"Capture Now run queued as job {asked}; next ")

    with library.write() as s:  # that run over; the next slot comes round
        s.execute(update(Job).where(Job.id == asked).values(status="indexed"))
    [slot] = start_due_schedules(library, now=library.clock() + timedelta(days=2))
    [first] = [line.message for line in tail_log(library, slot)]
    assert first == f"scheduled run of job {watch} (daily)"  # the mark went with its run
    assert tail_log(library, watch)[-1].message.startswith(f"daily run queued as job {slot}")
