"""The job runtime on a real library: claim, lease, progress, cancel, recovery, log."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from archiver_app.errors import InputError
from archiver_app.jobs import (
    CancelOutcome,
    ClaimOutcome,
    JobKind,
    KindSpec,
    Registry,
    RunningJob,
    default_registry,
    enqueue,
    recover_interrupted,
    request_cancel,
    run_foreground,
    run_job,
    run_queued,
)
from archiver_app.jobs.operations import import_config
from archiver_app.jobs.runtime import claim
from archiver_app.library import Library
from archiver_app.store.models import Job, JobLog, JobStatus
from archiver_app.tasks import Cancelled, CancelToken, Progress, ProgressUpdate
from tests.helpers.warcs import site, write_warc

Run = Callable[[Library, RunningJob, Progress, CancelToken], Any]


def registry(run: Run, *, resumable: bool = True, kind: JobKind = JobKind.MIRROR) -> Registry:
    return Registry([KindSpec(kind, run, resumable=resumable)])


def row(lib: Library, job_id: int) -> Job:
    with lib.session() as s:
        job = s.get(Job, job_id)
        assert job is not None
        s.expunge(job)
        return job


def log(lib: Library, job_id: int) -> list[str]:
    with lib.session() as s:
        return list(
            s.scalars(select(JobLog.message).where(JobLog.job_id == job_id).order_by(JobLog.id))
        )


def wait_for(check: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_job_runs_with_its_progress_result_and_log_in_the_database(library: Library) -> None:
    seen: list[RunningJob] = []

    def run(lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken) -> Any:
        seen.append(job)
        progress(ProgressUpdate(3, 10, "copying"))
        # the heartbeat thread writes progress to the row while the runner still runs
        wait_for(lambda: row(lib, job.id).progress_done == 3)
        return {"copied": 3, "where": Path("/x")}

    job_id = enqueue(library, JobKind.MIRROR, {"a": 1}, name="mirror")
    assert row(library, job_id).status == JobStatus.QUEUED
    done = run_job(library, job_id, registry(run), progress_seconds=0.05)
    assert done.status == JobStatus.COMPLETED and done.result["copied"] == 3
    job = row(library, job_id)
    assert (job.kind, job.status, job.result) == (
        "mirror",
        "completed",
        {"copied": 3, "where": "/x"},
    )
    assert (job.progress_done, job.progress_total, job.progress_message) == (3, 10, "copying")
    assert job.lease_owner is None and job.finished_at is not None
    assert seen[0].config == {"a": 1} and not seen[0].resumed
    messages = log(library, job_id)
    assert messages[0] == "mirror job queued" and messages[1].startswith("started by ")
    assert messages[-1] == "completed"


def test_a_result_that_cannot_describe_itself_still_completes_its_job(library: Library) -> None:
    """The summary lines are written after the work: one that fails must not leave the
    job running until its lease runs out (and then be redone as interrupted)."""

    class Broken:
        def describe(self) -> list[str]:
            raise ValueError("no words")

    class Said:
        def describe(self) -> str:
            return "  blue: 3 copied  "

    job_id = enqueue(library, JobKind.MIRROR, {}, name="mirror")
    done = run_job(library, job_id, registry(lambda *_: [Broken(), Said()]))
    assert done.status == JobStatus.COMPLETED
    assert row(library, job_id).status == JobStatus.COMPLETED
    assert log(library, job_id)[-2:] == ["blue: 3 copied", "completed"]


def test_a_job_another_process_holds_is_not_claimed_twice(library: Library) -> None:
    reg = registry(lambda *a: None)
    job_id = enqueue(library, JobKind.MIRROR, {}, name="m")
    first = claim(library, job_id, "one", reg, lease_seconds=60)
    second = claim(library, job_id, "two", reg, lease_seconds=60)
    assert (first.outcome, second.outcome) == (ClaimOutcome.CLAIMED, ClaimOutcome.BUSY)
    with pytest.raises(InputError, match="not started"):
        run_job(library, job_id, reg)
    assert row(library, job_id).lease_owner == "one"


def test_cancel_through_the_row_reaches_the_running_code(library: Library) -> None:
    started = threading.Event()

    def run(lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken) -> None:
        started.set()
        while not cancel.wait(0.02):
            pass
        raise Cancelled

    job_id = enqueue(library, JobKind.MIRROR, {}, name="m")
    results: list[Any] = []
    thread = threading.Thread(
        target=lambda: results.append(
            run_job(library, job_id, registry(run), progress_seconds=0.05)
        )
    )
    thread.start()
    assert started.wait(20)
    assert request_cancel(library, job_id) is CancelOutcome.ASKED
    thread.join(20)
    assert results[0].status == JobStatus.ABORTED
    assert row(library, job_id).status == JobStatus.ABORTED
    assert log(library, job_id)[-2:] == ["cancel asked", "cancelled"]
    assert request_cancel(library, job_id) is CancelOutcome.ENDED


def test_a_queued_job_is_cancelled_at_once(library: Library) -> None:
    job_id = enqueue(library, JobKind.MIRROR, {}, name="m")
    assert request_cancel(library, job_id) is CancelOutcome.CANCELLED
    assert row(library, job_id).status == JobStatus.ABORTED


def test_a_failing_runner_leaves_a_failed_job_with_its_reason(library: Library) -> None:
    def run(lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken) -> None:
        raise OSError(28, "No space left on device")

    job_id = enqueue(library, JobKind.MIRROR, {}, name="m")
    with pytest.raises(OSError, match="No space"):
        run_job(library, job_id, registry(run))
    job = row(library, job_id)
    assert job.status == JobStatus.FAILED and "No space" in (job.last_error or "")


def _kill(lib: Library, job_id: int, owner: str = "dead:1:x") -> None:
    """What a SIGKILL leaves: a running row whose lease nobody renews any more."""
    with lib.write() as s:
        s.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(
                status=JobStatus.RUNNING,
                lease_owner=owner,
                lease_expires_at=lib.clock() - timedelta(seconds=1),
                progress_done=4,
                progress_total=9,
            )
        )


def test_a_killed_resumable_job_is_queued_again_and_resumes(library: Library) -> None:
    runs: list[RunningJob] = []

    def run(lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken) -> int:
        runs.append(job)
        return 1

    reg = registry(run, resumable=True)
    job_id = enqueue(library, JobKind.MIRROR, {}, name="m")
    _kill(library, job_id)
    found = recover_interrupted(library, reg)
    assert [c.outcome for c in found] == [ClaimOutcome.RESUMED]
    assert row(library, job_id).status == JobStatus.QUEUED
    done = run_queued(library, reg)
    assert [d.status for d in done] == [JobStatus.COMPLETED]
    assert "interrupted at 4 of 9" in " ".join(log(library, job_id))


def test_claiming_a_killed_job_resumes_it_directly(library: Library) -> None:
    runs: list[RunningJob] = []

    def run(lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken) -> None:
        runs.append(job)

    job_id = enqueue(library, JobKind.MIRROR, {}, name="m")
    _kill(library, job_id)
    assert run_job(library, job_id, registry(run)).status == JobStatus.COMPLETED
    assert runs[0].resumed


def test_a_killed_job_that_cannot_resume_is_reported_failed(library: Library) -> None:
    reg = registry(lambda *a: None, resumable=False, kind=JobKind.EXPORT)
    job_id = enqueue(library, JobKind.EXPORT, {}, name="e")
    _kill(library, job_id)
    found = recover_interrupted(library, reg)
    assert [c.outcome for c in found] == [ClaimOutcome.REPORTED]
    job = row(library, job_id)
    assert job.status == JobStatus.FAILED and job.lease_owner is None
    assert job.last_error == (
        "interrupted at 4 of 9: the process running it stopped (killed or crashed)"
    )
    assert recover_interrupted(library, reg) == []


DEAD_PID = 9_999_999  # above any pid Linux hands out (at most 2**22)


def _leftover(folder: Path, label: str, pid: int = DEAD_PID, *, folder_too: bool = False) -> Path:
    path = folder / f".{label}.{pid}-abcdef-1.tmp-archiver"
    if folder_too:
        path.mkdir()
        (path / "data").write_bytes(b"old")
    else:
        path.write_bytes(b"partial")
    return path


@pytest.mark.parametrize("found_by", ["recover", "claim"])
def test_a_killed_export_on_this_machine_leaves_no_temporary_files(
    library: Library, tmp_path: Path, found_by: str
) -> None:
    """Its temporary files go once it is reported; another process's stay, and so do all
    of them when it ran on another machine (its files may be in use there)."""
    from archiver_app.jobs.operations import export_config

    here = socket.gethostname()[:40]
    out = tmp_path / "out.wacz"
    ours = [_leftover(tmp_path, "out.wacz"), _leftover(tmp_path, "data.warc.gz-spool")]
    alive = _leftover(tmp_path, "out.wacz", pid=os.getpid())
    job_id = enqueue(library, JobKind.EXPORT, export_config(out), name="e")
    _kill(library, job_id, owner=f"{here}:{DEAD_PID}:x")
    if found_by == "recover":
        found = recover_interrupted(library, default_registry())
        assert [c.outcome for c in found] == [ClaimOutcome.REPORTED]
    else:
        assert claim(library, job_id, "me", default_registry()).outcome is ClaimOutcome.REPORTED
    assert [p.exists() for p in ours] == [False, False]
    assert alive.exists() and not out.exists()

    elsewhere = _leftover(tmp_path, "out.wacz")
    job_id = enqueue(library, JobKind.EXPORT, export_config(out), name="e")
    _kill(library, job_id, owner=f"another-host:{DEAD_PID}:x")
    recover_interrupted(library, default_registry())
    assert elsewhere.exists()


def test_a_folder_export_killed_while_replacing_the_old_one_puts_the_old_one_back(
    library: Library, tmp_path: Path
) -> None:
    """Killed between setting the previous export aside and renaming the new one in, the
    previous one comes back under its name; the half-made new one goes."""
    from archiver_app.jobs.operations import export_config

    out = tmp_path / "site"
    set_aside = _leftover(tmp_path, "site.old", folder_too=True)
    new = _leftover(tmp_path, "site", folder_too=True)
    job_id = enqueue(library, JobKind.EXPORT, export_config(out, overwrite=True), name="e")
    _kill(library, job_id, owner=f"{socket.gethostname()[:40]}:{DEAD_PID}:x")
    recover_interrupted(library, default_registry())
    assert (out / "data").read_bytes() == b"old"
    assert not set_aside.exists() and not new.exists()


def test_a_live_lease_is_left_alone(library: Library) -> None:
    reg = registry(lambda *a: None)
    job_id = enqueue(library, JobKind.MIRROR, {}, name="m")
    claim(library, job_id, "alive", reg, lease_seconds=60)
    assert recover_interrupted(library, reg) == []
    assert row(library, job_id).status == JobStatus.RUNNING


def test_an_unknown_kind_is_refused_before_it_is_claimed(library: Library) -> None:
    job_id = enqueue(library, JobKind.OFFLOAD, {}, name="o")
    with pytest.raises(InputError, match="cannot run offload jobs"):
        run_job(library, job_id, registry(lambda *a: None))
    assert row(library, job_id).status == JobStatus.QUEUED


def test_crawl_kinds_are_not_enqueued_here(library: Library) -> None:
    with pytest.raises(InputError, match="create_job"):
        enqueue(library, JobKind.CRAWL, {}, name="c")


def test_the_crawl_worker_leaves_runtime_jobs_alone(library: Library) -> None:
    from archiver_app.crawl.worker import CrawlWorker, WorkerOptions

    enqueue(library, JobKind.IMPORT, {}, name="i")
    worker = CrawlWorker(library, lambda n: None, WorkerOptions(once=True))  # type: ignore[arg-type,return-value]
    assert worker._pick_job() is None


def test_an_import_job_imports_and_a_second_run_skips_what_is_done(
    library: Library, tmp_path: Path
) -> None:
    warc = write_warc(tmp_path / "site.warc.gz", site(3))
    outcomes: list[object] = []
    reg = default_registry()
    first = run_foreground(
        library, JobKind.IMPORT, import_config([warc]), reg, name="import", emit=outcomes.append
    )
    assert first.status == JobStatus.COMPLETED and first.result.pages == 3
    assert len(outcomes) == 1
    stored = row(library, first.job_id).result
    assert stored is not None and stored["outcomes"][0]["state"] == "imported"
    # what it did is in its log, as the CLI says it (the Jobs panel shows the log)
    assert log(library, first.job_id)[-2:] == [
        f"1 input: {first.result.records} records, 3 pages, 0 failed",
        "completed",
    ]
    again = run_foreground(library, JobKind.IMPORT, import_config([warc]), reg, name="import")
    assert again.result.pages == 0
    assert row(library, first.job_id).error_count == 0


def test_a_job_with_failed_parts_counts_them(library: Library, tmp_path: Path) -> None:
    """An import with an input that failed completes, and says so in its error count and
    its last line (``archiver jobs`` showed it as clean: errors 0)."""
    good = write_warc(tmp_path / "site.warc.gz", site(1))
    bad = tmp_path / "noise.warc.gz"
    bad.write_bytes(b"not a web archive at all")
    run = run_foreground(
        library, JobKind.IMPORT, import_config([good, bad]), default_registry(), name="import"
    )
    assert run.status == JobStatus.COMPLETED and run.result.failures == 1
    assert row(library, run.job_id).error_count == 1
    assert log(library, run.job_id)[-1] == "completed; 1 failed (see above)"


def test_running_the_queue_skips_a_kind_it_cannot_run_and_runs_the_rest(
    library: Library,
) -> None:
    done: list[int] = []

    def run(lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken) -> None:
        done.append(job.id)

    unknown = enqueue(library, JobKind.OFFLOAD, {}, name="o")
    known = enqueue(library, JobKind.MIRROR, {}, name="m")
    runs = run_queued(library, registry(run))
    assert [(r.job_id, r.status) for r in runs] == [(known, JobStatus.COMPLETED)]
    assert done == [known] and row(library, unknown).status == JobStatus.QUEUED


def test_a_start_up_resume_leaves_the_jobs_queued_after_it_to_their_owner(
    library: Library,
) -> None:
    """The app resumes at start-up what a dead process left queued; a job its own window
    queued since (an import dropped at once) is the window's to run, not the resume's."""
    done: list[int] = []

    def run(lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken) -> None:
        done.append(job.id)

    left_over = enqueue(library, JobKind.MIRROR, {}, name="queued by a dead process")
    time.sleep(0.01)
    opened = library.clock()
    time.sleep(0.01)
    own = enqueue(library, JobKind.MIRROR, {}, name="queued by the new window")
    runs = run_queued(library, registry(run), queued_before=opened)
    assert [r.job_id for r in runs] == [left_over] and done == [left_over]
    assert row(library, own).status == JobStatus.QUEUED


def test_a_library_wide_job_makes_no_empty_default_collection(library: Library) -> None:
    """A verification queued in a library whose captures are all in "Climate" is filed
    under Climate: an empty "Default" appeared in the sidebar beside it."""
    from archiver_app.jobs.kinds import JobKind

    climate = library.ensure_collection("climate")
    library.mirror.scheduled_scrub()  # what the app runs when idle
    with library.session() as s:
        verify = s.scalars(select(Job.id).where(Job.kind == JobKind.VERIFY)).one()
    assert [c.slug for c in library.collections.all()] == ["climate"]
    with library.session() as s:
        assert s.get(Job, verify).collection_id == climate  # type: ignore[union-attr]
    # Default, once it exists, is where such jobs go; a library with none makes it
    default = library.ensure_collection("default")
    again = library.jobs.enqueue(JobKind.VERIFY, {}, name="Verification")
    with library.session() as s:
        assert s.get(Job, again).collection_id == default  # type: ignore[union-attr]
