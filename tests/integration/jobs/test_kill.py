"""SIGKILL of a job mid-import and mid-mirror, then a restart through the runtime.

Each job runs the way the app runs it: claimed by the runtime in another process (a
forked child, killed by a real SIGKILL after a random number of progress events or a
random few milliseconds). After each kill the library is reopened: nothing under a final
name is partial, the job is found and queued again (both kinds skip the work already
done), and once run again everything is there exactly once. It is found through its
expired lease after even rounds, and at once through its process being gone after odd
ones (how the app finds a job killed on this computer).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlalchemy import select as sql_select

from archiver_app.durable import is_temp
from archiver_app.jobs import (
    ClaimOutcome,
    JobKind,
    default_registry,
    enqueue,
    recover_interrupted,
    run_job,
    run_queued,
)
from archiver_app.jobs.operations import import_config, mirror_config
from archiver_app.library import Library
from archiver_app.mirror import add_destination, set_policy
from archiver_app.store.models import Destination, File, Job, JobStatus, Snapshot
from archiver_app.tasks import ProgressUpdate
from tests.helpers.kill import kill_at_random
from tests.helpers.mirror_data import check_drive, make_snapshot, present_ids
from tests.helpers.warcs import site, write_warc

LEASE = 1.0  # seconds: how soon the next start sees that the killed process is gone
ROUNDS = 4


def _kill_at_random(
    library: Library, job_id: int, rng: random.Random, *, most_events: int = 12
) -> str:
    def run(lib: Library, tick: Callable[[ProgressUpdate], None]) -> object:
        return run_job(
            lib,
            job_id,
            default_registry(),
            progress=tick,
            lease_seconds=LEASE,
            heartbeat_seconds=0.2,
            progress_seconds=0.05,
        )

    return kill_at_random(library, run, rng, most_events=most_events)


def _status(library: Library, job_id: int) -> str:
    with library.session() as s:
        return str(s.scalar(sql_select(Job.status).where(Job.id == job_id)))


def _wait_out_lease(round_no: int) -> None:
    """After even rounds, the dead process's lease runs out before the job is looked for;
    after odd ones it still runs, and only the process being gone says it was killed."""
    if round_no % 2 == 0:
        time.sleep(LEASE + 0.2)


def _restart(library: Library, job_id: int, round_no: int) -> None:
    """What the app does at its next start: find the job, queue it again, run it."""
    if _status(library, job_id) == JobStatus.COMPLETED:
        return
    _wait_out_lease(round_no)
    found = recover_interrupted(library, default_registry())
    if _status(library, job_id) == JobStatus.RUNNING:  # pragma: no cover - diagnostics
        raise AssertionError(f"job {job_id} still looks running: {found}")
    assert all(claim.outcome is ClaimOutcome.RESUMED for claim in found), found
    runs = run_queued(library, default_registry())
    assert [(r.job_id, r.status) for r in runs] == [(job_id, JobStatus.COMPLETED)]


def _files_whole(library: Library) -> None:
    """Every file the library records is whole: its bytes match the recorded hash."""
    with library.session() as s:
        files = [(f.path, f.size, f.sha256) for f in s.scalars(sql_select(File))]
    for path, size, digest in files:
        data = (library.root / path).read_bytes()
        assert len(data) == size, path
        if digest is not None:
            assert hashlib.sha256(data).hexdigest() == digest, path


@pytest.mark.slow
def test_an_import_killed_at_random_moments_resumes_and_loses_nothing(
    library: Library, tmp_path: Path
) -> None:
    rng = random.Random(7)
    outcomes = []
    expected_urls: set[str] = set()
    for round_no in range(ROUNDS):
        folder = tmp_path / f"in{round_no}"
        folder.mkdir()
        for i in range(6):
            pages = site(3, host=f"r{round_no}-{i}.example")
            write_warc(folder / f"w{i}.warc.gz", pages)
            expected_urls |= {p.url for p in pages if p.mime.startswith("text/html")}
        job_id = enqueue(library, JobKind.IMPORT, import_config([folder]), name="import")
        outcomes.append(_kill_at_random(library, job_id, rng))
        _files_whole(library)  # nothing partial under a final name, right after the kill
        _restart(library, job_id, round_no)
        _files_whole(library)
        with library.session() as s:
            urls = s.scalars(sql_select(Snapshot.url)).all()
            total = s.scalar(sql_select(func.count()).select_from(Snapshot))
        assert set(urls) == expected_urls, f"round {round_no}"
        assert total == len(expected_urls), f"round {round_no}: a page imported twice"
    assert outcomes.count("killed") >= ROUNDS // 2, outcomes


@pytest.mark.slow
def test_a_mirror_killed_at_random_moments_resumes_and_loses_nothing(
    library: Library, tmp_path: Path
) -> None:
    rng = random.Random(11)
    (tmp_path / "drive").mkdir()
    dest = add_destination(library, tmp_path / "drive", "drive").id
    set_policy(library, copies=2, batch_size=4, parallelism=2)
    outcomes = []
    for round_no in range(ROUNDS):
        sizes = [rng.choice([0, 2000, 30_000, 200_000]) for _ in range(8)]
        make_snapshot(library, sizes, seed=round_no, name=f"r{round_no:02d}")
        job_id = enqueue(library, JobKind.MIRROR, mirror_config(), name="mirror")
        outcomes.append(_kill_at_random(library, job_id, rng))
        assert check_drive(library, tmp_path / "drive", dest) == []  # nothing partial
        _restart(library, job_id, round_no)
        with library.session() as s:
            all_ids = set(s.scalars(sql_select(File.id)))
        assert present_ids(library, dest) == all_ids, f"round {round_no}"
        assert check_drive(library, tmp_path / "drive", dest) == []
    assert outcomes.count("killed") >= ROUNDS // 2, outcomes


@pytest.mark.slow
def test_an_export_killed_at_random_moments_is_reported_and_leaves_no_partial_file(
    library: Library, tmp_path: Path
) -> None:
    import zipfile

    from archiver_app.jobs import run_foreground
    from archiver_app.jobs.operations import export_config

    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(8):
        write_warc(folder / f"w{i}.warc.gz", site(4, host=f"e{i}.example"))
    run_foreground(library, JobKind.IMPORT, import_config([folder]), default_registry(), name="i")
    rng = random.Random(3)
    outcomes = []
    for round_no in range(ROUNDS):
        out = tmp_path / f"out{round_no}.wacz"
        job_id = enqueue(library, JobKind.EXPORT, export_config(out), name="export")
        outcomes.append(_kill_at_random(library, job_id, rng))
        if out.exists():  # only ever a whole export under the final name
            with zipfile.ZipFile(out) as zf:
                assert zf.testzip() is None, f"round {round_no}"
        if _status(library, job_id) == JobStatus.COMPLETED:
            continue
        if _status(library, job_id) == JobStatus.QUEUED:  # killed before it claimed the job
            assert not out.exists()
            outcomes[-1] = "before the claim"
            continue
        _wait_out_lease(round_no)
        found = recover_interrupted(library, default_registry())
        assert [c.outcome for c in found] == [ClaimOutcome.REPORTED]
        outcomes[-1] = "reported"
        with library.session() as s:
            job = s.get(Job, job_id)
            assert job is not None and job.status == JobStatus.FAILED
            assert (job.last_error or "").startswith("interrupted")
        assert not [p.name for p in tmp_path.iterdir() if is_temp(p.name)]  # cleaned up
        # Killed after the final rename but before the job was marked done, the export is
        # whole (checked above); killed earlier, nothing is under the final name.
        again = run_foreground(
            library,
            JobKind.EXPORT,
            export_config(out, overwrite=True),
            default_registry(),
            name="again",
        )
        assert again.status == JobStatus.COMPLETED and again.result.pages == 32
        with zipfile.ZipFile(out) as zf:
            assert zf.testzip() is None
    assert outcomes.count("reported") >= ROUNDS // 2, outcomes


@pytest.mark.slow
def test_a_migration_killed_at_random_moments_resumes_and_loses_nothing(
    library: Library,
) -> None:
    """The app's idle folder upgrade is a migrate job: killed, it resumes from the database."""
    from archiver_app.jobs.operations import migrate_config
    from archiver_app.layout import CURRENT_FS_VERSION
    from archiver_app.layout.migrator import pending_count
    from tests.helpers.legacy import legacy_library

    originals = legacy_library(library, 120)
    rng = random.Random(5)
    outcomes = []
    for round_no in range(ROUNDS):
        if not pending_count(library):
            break
        job_id = enqueue(library, JobKind.MIGRATE, migrate_config(batch_size=5), name="upgrade")
        outcomes.append(_kill_at_random(library, job_id, rng))
        _files_whole(library)  # every recorded file whole, right after the kill
        _restart(library, job_id, round_no)
        _files_whole(library)
    assert pending_count(library) == 0
    assert "killed" in outcomes, outcomes
    with library.session() as s:
        versions = set(s.scalars(sql_select(Snapshot.fs_version).distinct()))
        files = {f.sha256 for f in s.scalars(sql_select(File))}
    assert versions == {CURRENT_FS_VERSION}
    assert {digest for _size, digest in originals.values()} <= files  # nothing lost


@pytest.mark.slow
@pytest.mark.parametrize("kind", [JobKind.IMPORT, JobKind.MIRROR])
def test_a_killed_job_run_again_by_hand_is_superseded_not_left_queued(
    library: Library, tmp_path: Path, kind: JobKind
) -> None:
    """A killed `archiver import` (or mirror), run again at once, the way a person does:
    the new job does the work, and the killed one ends naming it. It was listed "queued
    to resume" for ever, and a killed mirror showed "running" for a minute first."""
    from archiver_app.jobs import run_foreground

    rng = random.Random(13)
    urls: set[str] = set()
    if kind is JobKind.MIRROR:
        (tmp_path / "drive").mkdir()
        add_destination(library, tmp_path / "drive", "drive")
        set_policy(library, copies=2, batch_size=2, parallelism=1)
    killed = []
    for round_no in range(ROUNDS):
        if kind is JobKind.MIRROR:  # new work each round
            make_snapshot(library, [rng.choice([2000, 30_000, 200_000]) for _ in range(12)],
                          seed=40 + round_no, name=f"again{round_no:02d}")  # fmt: skip
            config = mirror_config()
        else:
            folder = tmp_path / f"in{round_no}"
            folder.mkdir()
            for i in range(6):
                pages = site(3, host=f"again-{round_no}-{i}.example")
                write_warc(folder / f"w{i}.warc.gz", pages)
                urls |= {p.url for p in pages if p.mime.startswith("text/html")}
            config = import_config([folder])
        job_id = enqueue(library, kind, config, name=str(kind))
        events = 2 if kind is JobKind.MIRROR else 5  # a mirror's are throttled: few
        outcome = _kill_at_random(library, job_id, rng, most_events=events)
        if outcome != "killed" or _status(library, job_id) in {
            JobStatus.QUEUED,  # killed before it claimed the job: nothing to supersede
            JobStatus.COMPLETED,
        }:
            run_queued(library, default_registry())  # what the app does with a queued one
            continue
        killed.append(job_id)
        # its lease still runs: only the process being gone says it was killed
        again = run_foreground(library, kind, config, default_registry(), name="again")
        assert again.status == JobStatus.COMPLETED
        with library.session() as s:
            job = s.get(Job, job_id)
            assert job is not None and job.status == JobStatus.ABORTED, job.status
            assert f"superseded by job {again.job_id}" in (job.last_error or "")
        assert recover_interrupted(library, default_registry()) == []
        assert run_queued(library, default_registry()) == []
        _files_whole(library)
    assert len(killed) >= ROUNDS // 2, killed
    with library.session() as s:
        if kind is JobKind.MIRROR:
            dest = s.scalars(sql_select(Destination.id)).one()
            assert present_ids(library, dest) == set(s.scalars(sql_select(File.id)))
        else:
            assert set(s.scalars(sql_select(Snapshot.url))) == urls
            assert s.scalar(sql_select(func.count()).select_from(Snapshot)) == len(urls)
