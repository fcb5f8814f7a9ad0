"""A job whose process died: found at once when that process ran here, and ended, not left
queued to resume for nothing, when a later job of its kind runs the same work again."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from archiver_app.cli import main
from archiver_app.jobs import (
    ClaimOutcome,
    JobKind,
    KindSpec,
    Registry,
    default_registry,
    enqueue,
    recover_interrupted,
    run_foreground,
    run_queued,
)
from archiver_app.jobs.operations import import_config, mirror_config, same_config
from archiver_app.jobs.runtime import claim
from archiver_app.library import Library
from archiver_app.store.models import Job, JobStatus
from archiver_app.tasks.liveness import process_gone
from tests.helpers.warcs import site, write_warc
from tests.unit.jobs.test_runtime import row

HERE = socket.gethostname()[:40]


def _running(lib: Library, job_id: int, owner: str, *, lease: float = -1.0) -> None:
    """What a SIGKILL leaves: a running row nobody renews (``lease`` seconds still to run:
    negative when it has run out)."""
    with lib.write() as s:
        s.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(
                status=JobStatus.RUNNING,
                lease_owner=owner,
                lease_expires_at=lib.clock() + timedelta(seconds=lease),
                started_at=lib.clock(),
            )
        )


def _killed_child() -> int:
    """The pid of a real process of this computer, killed by SIGKILL and reaped."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    assert not process_gone(child.pid)
    child.send_signal(signal.SIGKILL)
    child.wait()
    return child.pid


def test_a_job_whose_process_here_is_gone_is_found_at_once_not_a_lease_later(
    library: Library,
) -> None:
    """The Jobs panel showed a killed mirror running until its minute's lease ran out."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        job_id = enqueue(library, JobKind.MIRROR, mirror_config(), name="mirror")
        _running(library, job_id, f"{HERE}:{child.pid}:x", lease=60)
        assert recover_interrupted(library, default_registry()) == []  # it still runs
        assert library.jobs.rows()[0].status == JobStatus.RUNNING
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert library.jobs.rows()[0].status == JobStatus.QUEUED  # what the panel reads
    assert row(library, job_id).lease_owner is None

    other = enqueue(library, JobKind.MIRROR, mirror_config(), name="mirror")
    _running(library, other, f"{HERE}:{_killed_child()}:x", lease=60)
    assert claim(library, other, "me", default_registry()).outcome is ClaimOutcome.RESUMED
    # on another machine a pid says nothing: its lease decides
    third = enqueue(library, JobKind.MIRROR, mirror_config(), name="mirror")
    _running(library, third, f"another-host:{_killed_child()}:x", lease=60)
    assert claim(library, third, "me", default_registry()).outcome is ClaimOutcome.BUSY


def test_a_later_import_of_the_same_files_supersedes_the_interrupted_one(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`archiver jobs` listed the killed import as queued to resume forever after the
    same file was imported again; nothing ever ran it."""
    monkeypatch.chdir(tmp_path)
    write_warc(tmp_path / "a.warc.gz", site(2, host="a.example"))
    write_warc(tmp_path / "b.warc.gz", site(2, host="b.example"))
    config = import_config([Path("a.warc.gz")])  # as typed: kept absolute
    assert config["paths"] == [str(tmp_path / "a.warc.gz")]
    killed = enqueue(library, JobKind.IMPORT, config, name="import a")
    _running(library, killed, f"{HERE}:{_killed_child()}:x", lease=60)
    assert [c.outcome for c in recover_interrupted(library, default_registry())] == [
        ClaimOutcome.RESUMED
    ]
    never_started = enqueue(library, JobKind.IMPORT, config, name="queued by the app")

    reg = default_registry()
    other = run_foreground(
        library, JobKind.IMPORT, import_config([Path("b.warc.gz")]), reg, name="b"
    )
    assert other.status == JobStatus.COMPLETED
    assert row(library, killed).status == JobStatus.QUEUED  # other files: still its to do

    again = run_foreground(
        library,
        JobKind.IMPORT,
        import_config([Path("b.warc.gz"), Path("a.warc.gz")]),
        reg,
        name="ab",
    )
    job = row(library, killed)
    assert job.status == JobStatus.ABORTED and job.lease_owner is None
    assert (job.last_error or "").startswith("interrupted: the process running it stopped")
    assert f"superseded by job {again.job_id}" in (job.last_error or "")
    assert row(library, never_started).status == JobStatus.QUEUED  # someone's to run
    assert [r.job_id for r in run_queued(library, reg)] == [never_started]


def test_a_mirror_killed_while_a_later_one_ran_is_superseded_when_it_is_found(
    library: Library,
) -> None:
    """A killed mirror became "queued to resume" after a later mirror had completed."""
    ran: list[int] = []
    reg = Registry(
        [
            KindSpec(
                JobKind.MIRROR,
                lambda lib, job, progress, cancel: ran.append(job.id),
                resumable=True,
                supersedes=same_config("lock_wait"),
            )
        ]
    )
    killed = enqueue(library, JobKind.MIRROR, mirror_config(), name="mirror")
    _running(library, killed, "another-host:1:x", lease=60)  # its lease still runs
    later = run_foreground(library, JobKind.MIRROR, mirror_config(lock_wait=5), reg, name="m")
    assert later.status == JobStatus.COMPLETED
    assert row(library, killed).status == JobStatus.RUNNING  # as far as anyone here knows
    with library.write() as s:  # the lease runs out
        s.execute(update(Job).where(Job.id == killed).values(lease_expires_at=library.clock()))
    found = recover_interrupted(library, reg)
    assert [c.outcome for c in found] == [ClaimOutcome.ENDED]
    job = row(library, killed)
    assert job.status == JobStatus.ABORTED
    assert f"superseded by job {later.job_id}" in (job.last_error or "")
    assert run_queued(library, reg) == [] and ran == [later.job_id]


def test_the_command_line_says_who_resumes_an_interrupted_job(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`archiver worker --once` ran nothing ("no job ended"), and nothing said what would."""
    warc = write_warc(tmp_path / "a.warc.gz", site(2))
    job_id = enqueue(library, JobKind.IMPORT, import_config([warc]), name="import")
    _running(library, job_id, f"{HERE}:{_killed_child()}:x", lease=60)
    root = str(library.root)
    assert main(["--library", root, "jobs"]) == 0
    out = capsys.readouterr().out
    assert f"interrupted and queued to resume: {job_id}; the app resumes them" in out
    assert f"archiver job resume {job_id}" in out
    assert main(["--library", root, "job", "show", str(job_id)]) == 0
    assert (
        "next:      the app resumes it when it opens the library (Run in its Jobs panel if it"
        f" is open), or: archiver job resume {job_id}" in capsys.readouterr().out
    )
    assert main(["--library", root, "job", "resume", str(job_id)]) == 0
    capsys.readouterr()
    assert main(["--library", root, "jobs", "--json"]) == 0
    assert [j["status"] for j in json.loads(capsys.readouterr().out)] == ["completed"]


def test_process_gone_knows_this_process_and_a_reaped_one(tmp_path: Path) -> None:
    assert not process_gone(os.getpid())
    assert process_gone(_killed_child())
    assert not process_gone(0)
