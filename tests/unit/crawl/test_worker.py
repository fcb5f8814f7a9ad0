"""The worker loop end to end over an in-memory site: states, counters, log, coverage."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.crawl import api
from archiver_app.crawl.fetcher import FetchResult
from archiver_app.crawl.jobs import (
    abort_job,
    create_job,
    pause_job,
    resume_job,
    retry_job,
    start_due_schedules,
    update_rules,
)
from archiver_app.crawl.rules import Rules
from archiver_app.crawl.scope import Scope
from archiver_app.crawl.spec import Limits
from archiver_app.crawl.worker import CrawlWorker, WorkerOptions
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.store.models import Job, Page, PageAttempt, Worker
from tests.helpers.crawl_site import MemoryPage, MemorySiteFetcher, memory_factory

H = "http://site.test"


def site() -> dict[str, MemoryPage]:
    return {
        f"{H}/": MemoryPage(
            links=[
                f"{H}/a",
                f"{H}/b",
                f"{H}/c",
                f"{H}/flaky",
                f"{H}/dead",
                f"{H}/err",
                f"{H}/cal?month=2026-01",
                f"{H}/private/x",
                "http://elsewhere.test/",
                "mailto:me@site.test",
                f"{H}/a#top",
            ]
        ),
        f"{H}/a": MemoryPage(links=[f"{H}/a1", f"{H}/"]),
        f"{H}/a1": MemoryPage(links=[f"{H}/a1/deep"]),  # depth 2: its links are depth 3
        f"{H}/b": MemoryPage(redirect_to=f"{H}/b-final"),
        f"{H}/b-final": MemoryPage(links=[f"{H}/from-b"]),
        f"{H}/from-b": MemoryPage(),
        f"{H}/c": MemoryPage(redirect_to="http://elsewhere.test/landing"),
        "http://elsewhere.test/landing": MemoryPage(links=[f"{H}/never"]),
        f"{H}/flaky": MemoryPage(fail_times=1),
        f"{H}/dead": MemoryPage(fail_times=99),
        f"{H}/err": MemoryPage(status=503),
    }


def run(lib: Library, fetcher: MemorySiteFetcher, **options: object) -> CrawlWorker:
    opts = WorkerOptions(once=True, poll_seconds=0.01, heartbeat_seconds=0.05, **options)  # type: ignore[arg-type]
    worker = CrawlWorker(lib, memory_factory(fetcher), opts)
    worker.run()
    return worker


def states(lib: Library, job: int) -> dict[str, tuple[str, str | None]]:
    with lib.session() as s:
        return {
            p.url: (p.state, p.skip_reason)
            for p in s.scalars(select(Page).where(Page.job_id == job))
        }


def test_a_crawl_runs_to_the_end_and_records_everything(any_library: Library) -> None:
    library = any_library
    job = create_job(
        library,
        [f"{H}/"],
        scope=Scope.HOST,
        limits=Limits(max_depth=2),
        rules=Rules(ignore=("/private/",), attempts=3, concurrency=2),
    )
    fetcher = MemorySiteFetcher(library, site())
    worker = run(library, fetcher)

    got = states(library, job)
    assert got == {
        f"{H}/": ("done", None),
        f"{H}/a": ("done", None),
        f"{H}/a1": ("done", None),
        f"{H}/a1/deep": ("skipped", "limit: depth 3 > 2"),
        f"{H}/b": ("done", None),
        f"{H}/b-final": ("done", None),  # in-scope redirect target: queued like a link
        f"{H}/from-b": ("done", None),
        f"{H}/c": ("done", None),  # captured; its off-site redirect is recorded, not followed
        "http://elsewhere.test/landing": (
            "skipped",
            f"scope: outside host scope (redirect target of {H}/c)",
        ),
        f"{H}/flaky": ("done", None),
        f"{H}/dead": ("failed", None),
        f"{H}/err": ("failed", None),
        f"{H}/cal?month=2026-01": ("skipped", states(library, job)[f"{H}/cal?month=2026-01"][1]),
        f"{H}/private/x": ("skipped", "ignore '/private/'"),
        "http://elsewhere.test/": ("skipped", "scope: outside host scope"),
    }
    assert got[f"{H}/cal?month=2026-01"][1].startswith("ignore set calendars")
    assert f"{H}/never" not in got  # links behind an off-site redirect are not followed
    assert fetcher.fetched.count(f"{H}/dead") == 3 and fetcher.fetched.count(f"{H}/flaky") == 2

    summary = api.list_jobs(library)[0]
    assert summary.status == "indexed"
    assert summary.items_downloaded == 8
    assert summary.items_queued == 10
    assert summary.error_count == 2  # the pages that failed: dead and err, each once
    assert summary.attempts_failed == 3 + 1 + 3  # dead x3, flaky x1, err x3
    assert summary.r5xx == 3 and summary.r2xx == 8 + 8 + 3  # page + resource per capture
    assert summary.runk == 4  # the failed network attempts have no status
    assert summary.bytes_downloaded == 8 * 1000 + 3 * 1000
    assert summary.concurrency == 0
    assert worker.stats.jobs_finished == {job: "indexed"}

    with library.session() as s:
        attempts = s.execute(
            select(Page.url, PageAttempt.attempt, PageAttempt.outcome, PageAttempt.ruleset_version)
            .join(Page, Page.id == PageAttempt.page_id)
            .where(Page.url == f"{H}/flaky")
            .order_by(PageAttempt.attempt)
        ).all()
        assert [tuple(a)[1:] for a in attempts] == [(1, "failed", 1), (2, "done", 1)]
        assert s.get(Worker, worker.id).state == "stopped"  # type: ignore[union-attr]

    folder = library.root / "jobs" / str(job)
    report = json.loads((folder / "coverage.json").read_text())
    assert report["counts"] == {
        "intended": 10,
        "captured": 8,
        "failed": 2,
        "excluded": 5,
        "not_attempted": 0,
        "aborted": 0,
        "error_answers": 0,  # /err's 503s failed: retried, never done
    }
    assert report["excluded_by_rule"]["ignore '/private/'"] == 1
    assert {f["url"] for f in report["failed"]} == {f"{H}/dead", f"{H}/err"}
    md = (folder / "coverage.md").read_text()
    assert "| captured | 8 |" in md and "ignore '/private/'" in md
    # the status the job ended in, as archiver jobs says it (it said "completed")
    assert report["status"] == "indexed" and "Status **indexed**" in md
    ledger = [json.loads(x) for x in (folder / "target-ledger.jsonl").read_text().splitlines()]
    assert len(ledger) == len(got)
    # the seed was found by nobody, though /a links back to it (it named /a)
    seed = next(x for x in ledger if x["url"] == f"{H}/")
    assert (seed["depth"], seed["discovered_from"]) == (0, None)
    deep = next(x for x in ledger if x["url"] == f"{H}/a1/deep")
    assert deep["discovered_from"] == f"{H}/a1" and deep["depth"] == 3
    moved = {x["url"]: x["redirected_to"] for x in ledger if x["redirected_to"]}
    assert moved == {f"{H}/b": f"{H}/b-final", f"{H}/c": "http://elsewhere.test/landing"}
    manifest = [json.loads(x) for x in (folder / "capture-manifest.jsonl").read_text().splitlines()]
    assert len(manifest) == 8 + 3  # every attempt that produced a snapshot (the 503s too)
    assert all(m["snapshot_uid"] for m in manifest)

    log = [line.message for line in api.tail_log(library, job)]
    assert log[0].startswith("job created") and log[-1].startswith("indexed")
    assert any("redirected to http://elsewhere.test/landing" in m for m in log)
    later = api.tail_log(library, job, after_id=api.tail_log(library, job)[-2].id)
    assert [x.message for x in later] == log[-1:]


def test_the_coverage_report_names_pages_captured_with_an_error_answer(
    library: Library,
) -> None:
    """A 404 is captured (the server's answer is the evidence), and counted as captured:
    the report also names it, so a gap does not read as a page."""
    job = create_job(library, [f"{H}/"], scope=Scope.HOST)
    pages = {f"{H}/": MemoryPage(links=[f"{H}/gone"]), f"{H}/gone": MemoryPage(status=404)}
    run(library, MemorySiteFetcher(library, pages))
    folder = library.root / "jobs" / str(job)
    report = json.loads((folder / "coverage.json").read_text())
    assert report["counts"]["captured"] == 2 and report["counts"]["error_answers"] == 1
    assert [(e["url"], e["http_status"]) for e in report["error_answers"]] == [(f"{H}/gone", 404)]
    md = (folder / "coverage.md").read_text()
    assert "| of them, an error answer (4xx, 5xx) | 1 |" in md
    assert f"| {H}/gone | 404 |" in md
    ledger = [json.loads(x) for x in (folder / "target-ledger.jsonl").read_text().splitlines()]
    assert {x["url"]: x["http_status"] for x in ledger} == {f"{H}/": 200, f"{H}/gone": 404}


def test_a_run_in_the_app_returns_the_error_answers_it_captured(library: Library) -> None:
    """What the app's status bar says after a capture: the 404 it holds."""
    from archiver_app.crawl.inline import run_job_inline

    job = create_job(library, [f"{H}/", f"{H}/gone"], scope=Scope.PAGE)
    pages = {f"{H}/": MemoryPage(), f"{H}/gone": MemoryPage(status=404)}
    ran = run_job_inline(
        library, job, fetcher_factory=memory_factory(MemorySiteFetcher(library, pages))
    )
    assert (ran.pages_done, ran.pages_failed, ran.error_answers) == (2, 0, (404,))


def test_concurrency_is_the_smaller_of_worker_and_job(library: Library) -> None:
    pages = {f"{H}/": MemoryPage(links=[f"{H}/{i}" for i in range(12)])}
    create_job(library, [f"{H}/"], rules=Rules(concurrency=3))
    fetcher = MemorySiteFetcher(library, pages, delay=0.01, gate=3)
    run(library, fetcher, concurrency=4)
    assert fetcher.max_active == 3
    create_job(library, [f"{H}/"], rules=Rules(concurrency=8))
    fetcher = MemorySiteFetcher(library, pages, delay=0.01, gate=2)
    run(library, fetcher, concurrency=2)
    assert fetcher.max_active == 2


def test_rules_edited_while_running_apply_without_restart(library: Library) -> None:
    pages = {
        f"{H}/": MemoryPage(
            links=[f"{H}/keep{i}" for i in range(3)] + [f"{H}/later/{i}" for i in range(3)]
        )
    }
    job = create_job(library, [f"{H}/"], rules=Rules(concurrency=1))

    def on_fetch(url: str) -> None:
        if url == f"{H}/keep0":
            update_rules(library, job, add_ignore=["/later/"], concurrency=1)

    fetcher = MemorySiteFetcher(library, pages, on_fetch=on_fetch)
    run(library, fetcher)
    assert not [u for u in fetcher.fetched if "/later/" in u]
    got = states(library, job)
    assert {u for u, (st, _) in got.items() if st == "skipped"} == {
        f"{H}/later/{i}" for i in range(3)
    }
    detail = api.job_detail(library, job)
    assert detail.summary.settings_age == 1 and detail.rule_versions == 2
    assert detail.rules.ignore == ("/later/",)


def test_disk_nearly_full_pauses_claims_and_says_so(library: Library) -> None:
    pages = {f"{H}/": MemoryPage(links=[f"{H}/x"])}
    job = create_job(library, [f"{H}/"])
    calls = {"n": 0}

    def disk_free(_path: str) -> int:
        calls["n"] += 1
        return 10 << 20 if calls["n"] <= 5 else 10 << 30

    fetcher = MemorySiteFetcher(library, pages)
    opts = WorkerOptions(
        once=True, poll_seconds=0.01, heartbeat_seconds=10, min_free_bytes=100 << 20
    )
    CrawlWorker(library, memory_factory(fetcher), opts, disk_free=disk_free).run()
    log = [x.message for x in api.tail_log(library, job)]
    low = next(i for i, m in enumerate(log) if m.startswith("disk nearly full"))
    back = next(i for i, m in enumerate(log) if m.startswith("disk space back"))
    assert "10 MiB free" in log[low] and "100 MiB needed" in log[low]
    assert low < back
    assert fetcher.fetched == [f"{H}/", f"{H}/x"]
    assert api.list_jobs(library)[0].status == "indexed"


def test_pause_resume_abort_and_retry(library: Library) -> None:
    pages = {f"{H}/": MemoryPage(links=[f"{H}/{i}" for i in range(6)])}
    job = create_job(library, [f"{H}/"], rules=Rules(concurrency=1))

    def on_fetch(url: str) -> None:
        if url == f"{H}/1":
            pause_job(library, job)

    fetcher = MemorySiteFetcher(library, pages, on_fetch=on_fetch)
    run(library, fetcher)  # stops when the job is paused: nothing else is runnable
    assert api.job_detail(library, job).summary.status == "paused"
    assert fetcher.fetched == [f"{H}/", f"{H}/0", f"{H}/1"]  # the page in flight finished
    with pytest.raises(InputError, match="only paused jobs can be resumed"):
        _resume_twice(library, job)
    abort_job(library, job)
    detail = api.job_detail(library, job)
    assert detail.summary.status == "aborted" and detail.page_states["skipped"] == 4
    assert (library.root / detail.coverage_json).exists()  # type: ignore[operator]
    # the pages left waiting were intended and not attempted, not excluded by a rule
    counts = json.loads((library.root / detail.coverage_json).read_text())["counts"]  # type: ignore[operator]
    assert counts["captured"] == 3 and counts["excluded"] == 0
    assert counts["intended"] == 7 and counts["not_attempted"] == counts["aborted"] == 4
    with pytest.raises(InputError, match=r"only .* jobs can be aborted"):
        abort_job(library, job)
    assert retry_job(library, job) == 4
    fetcher.on_fetch = None
    run(library, fetcher)
    assert api.job_detail(library, job).summary.status == "indexed"
    assert api.job_detail(library, job).summary.retry_count == 1


def test_a_resumed_crawl_waits_for_a_worker_then_runs(library: Library) -> None:
    """A pause ends the run that had the crawl (``archiver crawl``, the app's): resumed, it
    is queued for a worker, not shown running with nothing running it."""
    pages = {f"{H}/": MemoryPage(links=[f"{H}/{i}" for i in range(3)])}
    job = create_job(library, [f"{H}/"], rules=Rules(concurrency=1))

    def on_fetch(url: str) -> None:
        if url == f"{H}/0":
            pause_job(library, job)

    fetcher = MemorySiteFetcher(library, pages, on_fetch=on_fetch)
    run(library, fetcher)
    started = api.job_detail(library, job).summary.started_at
    assert started is not None and api.job_detail(library, job).summary.status == "paused"
    resume_job(library, job)
    assert api.job_detail(library, job).summary.status == "queued"
    row = next(r for r in library.jobs.rows(recover=False) if r.id == job)
    assert row.status == "queued" and row.eta_seconds(library.clock()) is None
    fetcher.on_fetch = None
    run(library, fetcher)  # a worker takes it up where it stopped
    summary = api.job_detail(library, job).summary
    assert summary.status == "indexed" and summary.started_at == started
    assert fetcher.fetched == [f"{H}/", f"{H}/0", f"{H}/1", f"{H}/2"]


def _resume_twice(library: Library, job: int) -> None:
    resume_job(library, job)
    pause_job(library, job)
    resume_job(library, job)
    resume_job(library, job)


def test_a_job_whose_only_page_answers_5xx_says_its_error_page_is_kept(library: Library) -> None:
    pages = {f"{H}/": MemoryPage(status=503)}
    job = create_job(library, [f"{H}/"], rules=Rules(attempts=1), max_retries=0)
    run(library, MemorySiteFetcher(library, pages))
    summary = api.job_detail(library, job).summary
    assert summary.status == "failed"
    assert summary.last_error == "no page captured; 1 failed (its error page kept)"


def test_a_job_whose_seeds_all_fail_is_retryable_then_failed(library: Library) -> None:
    pages = {f"{H}/": MemoryPage(fail_times=99)}
    job = create_job(library, [f"{H}/"], rules=Rules(attempts=1), max_retries=1)
    fetcher = MemorySiteFetcher(library, pages)
    run(library, fetcher)
    summary = api.job_detail(library, job).summary
    assert summary.status == "retryable" and summary.last_error == "no page captured; 1 failed"
    # the backoff has not passed: a --once worker leaves it alone
    run(library, fetcher)
    assert len(fetcher.fetched) == 1
    with library.write() as s:
        s.execute(
            api.Job.__table__.update().values(next_run_at=library.clock() - timedelta(seconds=1))
        )
    run(library, fetcher)
    summary = api.job_detail(library, job).summary
    assert summary.status == "failed" and summary.retry_count == 1 and len(fetcher.fetched) == 2


def test_schedule_requeues_the_seeds_as_a_new_run(library: Library) -> None:
    job = create_job(library, [f"{H}/", f"{H}/two"], schedule="daily", name="daily news")
    assert start_due_schedules(library) == []
    with library.session() as s:
        row = s.get(Job, job)
        first = row.next_run_at if row else None  # tomorrow's 03:00 (the day after's near it)
    assert first is not None and first - library.clock() <= timedelta(days=2)
    created = start_due_schedules(library, now=first + timedelta(minutes=1))
    assert len(created) == 1
    run_job = api.job_detail(library, created[0])
    assert run_job.summary.name == "daily news (run 2)"
    assert run_job.page_states["ready"] == 2 and run_job.spec.seeds == (f"{H}/", f"{H}/two")
    again = start_due_schedules(library, now=first + timedelta(minutes=2))
    assert again == []  # next run is a day later
    nxt = api.job_detail(library, job).summary
    assert nxt.schedule == "daily"


def test_byte_limit_skips_what_is_left_and_heartbeat_describes_the_worker(
    library: Library,
) -> None:
    pages = {f"{H}/": MemoryPage(links=[f"{H}/{i}" for i in range(6)])}
    pages |= {f"{H}/{i}": MemoryPage() for i in range(6)}  # 1000 bytes each
    job = create_job(library, [f"{H}/"], rules=Rules(concurrency=1), limits=Limits(max_bytes=2500))
    worker = run(library, MemorySiteFetcher(library, pages))
    got = states(library, job)
    assert sum(st == "done" for st, _ in got.values()) == 3  # 3 x 1000 bytes crosses 2500
    assert {r for st, r in got.values() if st == "skipped"} == {"limit: max bytes 2500"}
    with library.session() as s:
        row = s.get(Worker, worker.id)
        assert row is not None and row.pid > 0 and row.host and row.version
        assert row.disk_free and row.disk_free > 0 and row.memory_rss and row.memory_rss > 0


def test_duration_limit_and_politeness_delay(library: Library) -> None:
    import time

    pages = {f"{H}/": MemoryPage(links=[f"{H}/{i}" for i in range(3)])}
    job = create_job(library, [f"{H}/"], rules=Rules(concurrency=4, delay_min=0.2, delay_max=0.2))
    starts: list[float] = []
    run(
        library,
        MemorySiteFetcher(library, pages, on_fetch=lambda _u: starts.append(time.monotonic())),
    )
    assert len(starts) == 4
    assert starts[-1] - starts[0] >= 3 * 0.2 * 0.9  # one host: starts spaced by the delay

    job = create_job(library, [f"{H}/"], rules=Rules(concurrency=1), limits=Limits(max_duration=1))
    with library.write() as s:  # the job started two seconds ago
        s.get(api.Job, job).started_at = library.clock() - timedelta(seconds=2)  # type: ignore[union-attr]
        s.get(api.Job, job).status = "running"  # type: ignore[union-attr]
    run(library, MemorySiteFetcher(library, pages))
    assert states(library, job) == {f"{H}/": ("skipped", "limit: max duration 1s")}


def test_end_steps_a_killed_worker_left_undone_are_finished_by_the_next(library: Library) -> None:
    import shutil

    pages = {f"{H}/": MemoryPage()}
    first = create_job(library, [f"{H}/"])
    second = create_job(library, [f"{H}/"])
    third = create_job(library, [f"{H}/"])
    run(library, MemorySiteFetcher(library, pages))
    shutil.rmtree(library.root / "jobs")
    with library.write() as s:  # as if killed right after marking completed / while indexing
        a, b, c = s.get(api.Job, first), s.get(api.Job, second), s.get(api.Job, third)
        assert a is not None and b is not None and c is not None
        a.status, a.coverage_json = "completed", None
        b.status = "indexing"
        b.updated_at = library.clock() - timedelta(minutes=5)
        c.coverage_json = None  # indexed, killed before its report was written
    run(library, MemorySiteFetcher(library, pages))
    assert [api.job_detail(library, j).summary.status for j in (first, second, third)] == [
        "indexed",
        "indexed",
        "indexed",
    ]
    for job in (first, second, third):  # each report says how its job ended, once indexed
        report = json.loads((library.root / "jobs" / str(job) / "coverage.json").read_text())
        assert report["status"] == "indexed", job


def test_a_really_full_disk_pauses_claims_until_space_returns(tmp_path: Path) -> None:
    """The library on a real 8 MiB tmpfs: a capture fills it, claims stop, space comes back."""
    import threading

    from tests.helpers.mounts import small_drive

    with small_drive(tmp_path / "drive", 8 * 1024) as drive:
        lib = Library.open(drive / "lib")
        try:
            ballast = drive / "ballast.bin"
            pages = {f"{H}/": MemoryPage(links=[f"{H}/{i}" for i in range(3)])}
            job = create_job(lib, [f"{H}/"], rules=Rules(concurrency=1))

            def fill(url: str) -> None:
                if url == f"{H}/":
                    ballast.write_bytes(b"\0" * (5 << 20))

            fetcher = MemorySiteFetcher(lib, pages, on_fetch=fill)
            opts = WorkerOptions(once=True, poll_seconds=0.02, heartbeat_seconds=10,
                                 min_free_bytes=4 << 20)  # fmt: skip
            worker = threading.Thread(
                target=CrawlWorker(lib, memory_factory(fetcher), opts).run, daemon=True
            )
            worker.start()
            deadline = time.monotonic() + 60
            while not any(x.message.startswith("disk nearly full") for x in api.tail_log(lib, job)):
                assert time.monotonic() < deadline, "the worker never paused"
                time.sleep(0.05)
            assert fetcher.fetched == [f"{H}/"]  # nothing claimed while the disk is full
            ballast.unlink()
            worker.join(timeout=60)
            assert not worker.is_alive()
            assert fetcher.fetched == [f"{H}/", *(f"{H}/{i}" for i in range(3))]
            log = [x.message for x in api.tail_log(lib, job)]
            assert any(m.startswith("disk space back") for m in log)
            assert api.job_detail(lib, job).summary.status == "indexed"
        finally:
            lib.close()


def test_an_unexpected_error_while_recording_is_a_failed_attempt_with_its_reason(
    library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading the stored HTML's links is extra: when it breaks the page is still done with
    the fetcher's links; any other error while recording is a failed attempt saying why,
    not a dead task whose lease runs out (and is counted against the page's attempts)."""
    from archiver_app.crawl import unrecorded as recording

    def broken_links(_lib: Library, _snapshot_id: int) -> list[str]:
        raise ValueError("Invalid IPv6 URL")

    real_finish = recording.finish_page
    calls: list[str] = []

    def finish_once_broken(s, ctx, claimed, result, *, now):  # type: ignore[no-untyped-def]
        calls.append(result.url)
        if result.url == f"{H}/x" and calls.count(result.url) == 1:
            raise RuntimeError("boom")
        return real_finish(s, ctx, claimed, result, now=now)

    monkeypatch.setattr(recording, "links_from_snapshot", broken_links)
    monkeypatch.setattr(recording, "finish_page", finish_once_broken)
    pages = {f"{H}/": MemoryPage(links=[f"{H}/x"]), f"{H}/x": MemoryPage()}
    job = create_job(library, [f"{H}/"], rules=Rules(attempts=2), lease_seconds=2.0)
    run(library, MemorySiteFetcher(library, pages))
    # A dead task would show as attempt 1 "lease expired: ..." (the lease is 2 s so that it
    # would); the attempts below say the error was caught and recorded instead.
    assert states(library, job) == {f"{H}/": ("done", None), f"{H}/x": ("done", None)}
    with library.session() as s:
        attempts = s.execute(
            select(PageAttempt.attempt, PageAttempt.outcome, PageAttempt.error)
            .join(Page, Page.id == PageAttempt.page_id)
            .where(Page.url == f"{H}/x")
            .order_by(PageAttempt.attempt)
        ).all()
    assert [tuple(a) for a in attempts] == [
        (1, "failed", "recording the result failed: RuntimeError: boom"),
        (2, "done", None),
    ]


def test_a_failed_attempt_is_said_in_one_short_line(library: Library) -> None:
    """A capture that raised a database error was said with its SQL and parameters
    (``failed URL: IntegrityError: (psycopg.errors.ForeignKeyViolation) ... [SQL: ...]
    [parameters: ...]``, 4 KB); now its class and first line, the whole text in the log."""
    from sqlalchemy.exc import IntegrityError

    class Refused(Exception):
        pass

    violation = Refused(
        'insert or update on table "records" violates foreign key constraint'
        ' "fk_records_revisit_of_id_records"\nDETAIL:  Key (revisit_of_id)=(7) is not present'
    )
    sql = "INSERT INTO records (url_key, ts, url, revisit_of_id) VALUES (%s, %s, %s, %s)"
    refused = IntegrityError(sql, [("com,example)/", "2026", "x" * 2000, 7)] * 2, violation)

    class RaisingOnce(MemorySiteFetcher):
        async def fetch(self, url: str, **kw):  # type: ignore[no-untyped-def, override]
            if not self.fetched:
                self.fetched.append(url)
                raise refused
            return await super().fetch(url, **kw)

    lines: list[str] = []
    fetcher = RaisingOnce(library, {f"{H}/": MemoryPage()})
    create_job(library, [f"{H}/"], rules=Rules(attempts=2))
    opts = WorkerOptions(once=True, poll_seconds=0.01, heartbeat_seconds=0.05)
    worker = CrawlWorker(library, memory_factory(fetcher), opts)
    worker._progress = lambda u: lines.append(u.message or "")
    worker.run()

    [failed] = [line for line in lines if line.startswith("failed")]
    assert failed == (
        f"failed {H}/: IntegrityError: (tests.unit.crawl.test_worker.Refused) insert or update"
        ' on table "records" violates foreign key constraint "fk_records_revisit_of_id_records";'
        " trying again"
    )


def test_a_failure_that_says_nothing_is_given_a_reason(library: Library) -> None:
    """A fetcher's failed result with no error printed ``failed URL: `` (``None`` before
    the line was cut to one) and logged ``URL: HTTP None``; now every place says why."""

    class Speechless(MemorySiteFetcher):
        async def fetch(self, url: str, **kw):  # type: ignore[no-untyped-def, override]
            self.fetched.append(url)
            if url.endswith("/answered"):  # it answered, then failed without a word
                return FetchResult(url, url, False, 200, error="  ")
            return FetchResult(url, url, False, None)

    lines: list[str] = []
    fetcher = Speechless(library, {})
    job = create_job(library, [f"{H}/", f"{H}/answered"], scope=Scope.PAGE, rules=Rules(attempts=1))
    opts = WorkerOptions(once=True, poll_seconds=0.01, heartbeat_seconds=0.05)
    worker = CrawlWorker(library, memory_factory(fetcher), opts)
    worker._progress = lambda u: lines.append(u.message or "")
    worker.run()

    said = "no error was reported"
    answered = f"{said} (the page answered HTTP 200)"
    assert sorted(line for line in lines if line.startswith("failed")) == [
        f"failed {H}/: {said}",
        f"failed {H}/answered: {answered}",
    ]
    reasons = {p.url: p.reason for p in api.page_list(library, job, states=["failed"])}
    assert reasons == {f"{H}/": said, f"{H}/answered": answered}
    logged = [line.message for line in api.tail_log(library, job)]
    assert f"{H}/: {said} (attempt 1); failed, no attempts left" in logged
    assert not [line for line in logged if "None" in line or ":  (" in line]
