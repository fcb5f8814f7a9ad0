"""Mirror and verify jobs that fall short keep their planned total and say how they ended.

Before, a mirror whose drive was pulled or filled up read "completed 0/0" (the last
progress said total = done), a verify of every drive showed the last drive's count and a
verify that found a missing copy without repairing it showed errors 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver_app.jobs import JobKind, default_registry, run_foreground
from archiver_app.jobs.operations import mirror_config, verify_config
from archiver_app.library import Library
from archiver_app.mirror import add_destination, run_mirror, set_policy
from archiver_app.mirror.progress import RunProgress
from archiver_app.store.models import Job, JobStatus
from archiver_app.tasks import ProgressUpdate, ThrottledProgress
from tests.helpers.mirror_data import make_snapshot


def _drive(library: Library, tmp_path: Path, name: str) -> tuple[int, Path]:
    path = tmp_path / name
    path.mkdir()
    return add_destination(library, path, name).id, path


def _row(library: Library, job_id: int) -> Job:
    with library.session() as s:
        job = s.get(Job, job_id)
        assert job is not None
        s.expunge(job)
        return job


def test_the_last_word_of_a_short_run_keeps_its_planned_total() -> None:
    """``finish`` said done of done ("so throttled sinks forward it"): 28/28 of 41."""
    sent: list[ProgressUpdate] = []
    throttled = ThrottledProgress(sent.append, interval=3600)
    tracker = RunProgress(throttled, "mirror", 41, 41_000, interval=3600)
    tracker.add(files=1, nbytes=1000)  # the first update goes through
    tracker.add(files=27, nbytes=27_000)  # throttled away
    tracker.finish()
    last = sent[-1]
    assert (last.done, last.total, last.final) == (28, 41, True)
    assert last.fraction is not None and last.fraction < 1.0
    assert last.message.startswith("mirror: 28 of 41 files"), last.message


def test_a_mirror_job_whose_drive_goes_mid_run_reads_short_not_completed(
    library: Library, tmp_path: Path
) -> None:
    make_snapshot(library, [1000, 2000, 3000, 4000], seed=41)
    _, mount = _drive(library, tmp_path, "usb")

    def pull(_plan: object) -> None:  # the plan is made: the drive goes before any copy
        mount.rename(tmp_path / "pulled")

    updates: list[ProgressUpdate] = []
    run = run_foreground(
        library,
        JobKind.MIRROR,
        mirror_config(),
        default_registry(),
        name="mirror",
        progress=updates.append,
        emit=pull,
    )
    assert run.status == JobStatus.COMPLETED and not run.result.ok
    assert (updates[-1].done, updates[-1].total) == (0, 4)
    job = _row(library, run.job_id)
    assert (job.progress_done, job.progress_total) == (0, 4)
    assert job.error_count == run.result.failures  # none failed: none was tried
    assert job.last_error == "the retention policy is not met"
    [shown] = [r for r in library.jobs.rows() if r.id == run.job_id]
    assert shown.status_text == "incomplete"


def test_a_verify_of_every_drive_counts_them_all(library: Library, tmp_path: Path) -> None:
    make_snapshot(library, [100, 200, 300], seed=42)
    _drive(library, tmp_path, "a")
    _drive(library, tmp_path, "b")
    set_policy(library, copies=3)  # this computer and both drives
    assert run_mirror(library).ok  # 3 files on each drive
    run = run_foreground(
        library, JobKind.VERIFY, verify_config(), default_registry(), name="verify"
    )
    job = _row(library, run.job_id)
    assert (job.progress_done, job.progress_total, job.error_count) == (6, 6, 0)
    assert job.last_error is None


def test_a_verify_that_finds_a_missing_copy_without_repair_counts_it(
    library: Library, tmp_path: Path
) -> None:
    snap = make_snapshot(library, [100, 200, 300], seed=43)
    _, mount = _drive(library, tmp_path, "a")
    assert run_mirror(library).ok
    (mount / "Archiver" / library.id / snap.paths[0]).unlink()
    run = run_foreground(
        library,
        JobKind.VERIFY,
        verify_config("a", repair=False),
        default_registry(),
        name="verify",
    )
    job = _row(library, run.job_id)
    assert (job.progress_done, job.progress_total, job.error_count) == (3, 3, 1)
    assert job.last_error == "1 failed; a: 1 copy not repaired"
    [shown] = [r for r in library.jobs.rows() if r.id == run.job_id]
    assert shown.status_text == "with errors"


def test_running_a_job_again_copies_its_work_and_refuses_one_not_ended(
    library: Library,
) -> None:
    from archiver_app.errors import InputError
    from archiver_app.jobs import enqueue
    from archiver_app.jobs.again import enqueue_again

    first = enqueue(library, JobKind.VERIFY, verify_config("red"), name="Verify red")
    with pytest.raises(InputError, match="is queued: it has not ended"):
        enqueue_again(library, first)
    library.jobs.cancel(first)
    again = enqueue_again(library, first)
    job = _row(library, again)
    assert (job.kind, job.name, job.status, job.config) == (
        "verify",
        "Verify red",
        "queued",
        _row(library, first).config,
    )


def test_a_resumed_mirror_that_leaves_the_policy_unmet_says_so_and_exits_1(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`archiver job resume` printed "job N completed" and exited 0 where `archiver mirror`
    exits 1, and with no drive plugged in the job read "with errors", though none failed."""
    from archiver_app.cli import main
    from archiver_app.jobs import enqueue

    make_snapshot(library, [1000, 2000], seed=44)
    _, mount = _drive(library, tmp_path, "usb")
    mount.rename(tmp_path / "in a drawer")  # not plugged in: nothing can be copied
    job_id = enqueue(library, JobKind.MIRROR, mirror_config(), name="mirror")
    assert main(["--library", str(library.root), "job", "resume", str(job_id)]) == 1
    out = capsys.readouterr().out
    assert f"job {job_id} completed; the retention policy is not met" in out
    [shown] = [r for r in library.jobs.rows() if r.id == job_id]
    assert (shown.failed, shown.status_text) == (0, "incomplete")
    assert main(["--library", str(library.root), "jobs"]) == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if x.split()[:1] == [str(job_id)]]
    assert line.split()[1:3] == ["mirror", "incomplete"]


def test_job_retry_runs_a_mirror_that_fell_short_again_as_the_jobs_panel_does(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`archiver job retry` of a mirror that fell short refused ("not a crawl: ... not
    retried") while the Jobs panel offered Retry. It now does what the panel does, through
    the same call: a new job doing the same work, run here; one that did all its work, or
    a kind Retry does not run again, is refused alike in both."""
    from archiver_app.cli import main
    from archiver_app.jobs import enqueue

    def cli(*args: str) -> tuple[int, str]:
        code = main(["--library", str(library.root), "job", *args])
        said = capsys.readouterr()
        return code, said.out + said.err

    snap = make_snapshot(library, [1000, 2000], seed=45)
    _, mount = _drive(library, tmp_path, "usb")
    drawer = tmp_path / "in a drawer"
    mount.rename(drawer)  # not plugged in: the mirror falls short
    short = enqueue(library, JobKind.MIRROR, mirror_config(), name="mirror")
    assert cli("resume", str(short))[0] == 1
    [row] = [r for r in library.jobs.rows() if r.id == short]
    assert row.runs_again and row.status_text == "incomplete"  # the panel's Retry is on
    drawer.rename(mount)
    code, out = cli("retry", str(short))
    again = short + 1
    assert code == 0, out
    assert f"job {short} queued again as job {again}" in out
    assert f"job {again} completed" in out
    assert _row(library, again).name == "mirror"
    assert _row(library, short).status == JobStatus.COMPLETED  # keeps its record
    assert (mount / "Archiver" / library.id / snap.paths[1]).is_file()
    # a mirror that did all its work: nothing to retry, here as in the panel
    [row] = [r for r in library.jobs.rows() if r.id == again]
    assert not row.runs_again
    code, out = cli("retry", str(again))
    assert code != 0 and "did all its work: nothing to retry" in out
    assert max(r.id for r in library.jobs.rows()) == again
