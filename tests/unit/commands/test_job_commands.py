"""Long commands run as jobs: ``archiver jobs`` and ``job show`` list them with their kind."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from archiver_app.cli import main
from archiver_app.library import Library
from archiver_app.store.models import Job
from tests.helpers.mirror_data import make_snapshot
from tests.helpers.warcs import site, write_warc


def run(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--library", str(root), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_import_mirror_and_verify_are_jobs_with_their_reports_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    warc = write_warc(tmp_path / "site.warc.gz", site(2))
    code, out, _ = run(capsys, root, "import", str(warc))
    assert code == 0 and out.startswith("imported") and "1 input: " in out
    with Library.open(root) as lib:
        make_snapshot(lib, [1000], seed=1)
    (tmp_path / "BLUE").mkdir()
    assert run(capsys, root, "drives", "add", str(tmp_path / "BLUE"), "--label", "blue")[0] == 0
    code, out, _ = run(capsys, root, "mirror")
    assert code == 0 and "done: " in out
    code, out, _ = run(capsys, root, "drives", "verify", "blue")
    assert code == 0

    code, out, _ = run(capsys, root, "jobs", "--json")
    jobs = json.loads(out)
    assert [(j["kind"], j["status"]) for j in jobs] == [
        ("verify", "completed"),
        ("mirror", "completed"),
        ("import", "completed"),
    ]
    assert jobs[2]["result"]["pages"] == 2 and jobs[1]["result"]["copied"] >= 1
    code, out, _ = run(capsys, root, "jobs")
    assert code == 0 and out.split("\n")[1].split()[1:3] == ["verify", "completed"]
    code, out, _ = run(capsys, root, "job", "show", str(jobs[2]["id"]))
    assert code == 0 and "(import)" in out and "result:" in out and "completed" in out


def test_a_failing_command_is_a_failed_job_and_keeps_its_error_and_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    Library.open(root).close()
    code, _, err = run(capsys, root, "drives", "verify", "nowhere")
    assert code != 0 and "archiver: error:" in err
    code, out, _ = run(capsys, root, "jobs", "--json")
    (job,) = json.loads(out)
    assert (job["kind"], job["status"]) == ("verify", "failed") and job["last_error"]


def test_a_killed_job_is_reported_by_archiver_jobs_and_can_be_cancelled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app.jobs import JobKind, enqueue

    root = tmp_path / "lib"
    with Library.open(root) as lib:
        dead = enqueue(lib, JobKind.EXPORT, {}, name="export")
        waiting = enqueue(lib, JobKind.MIRROR, {}, name="mirror")
        with lib.write() as s:  # what SIGKILL leaves: a running row nobody renews
            s.execute(
                update(Job)
                .where(Job.id == dead)
                .values(
                    status="running",
                    lease_owner="gone:1:x",
                    lease_expires_at=lib.clock() - timedelta(seconds=5),
                )
            )
    code, out, _ = run(capsys, root, "job", "show", str(dead))
    assert code == 0 and "failed (interrupted: the process running it stopped" in out
    code, out, _ = run(capsys, root, "job", "abort", str(waiting))
    assert code == 0 and out.strip() == f"job {waiting} cancelled"
    code, _, err = run(capsys, root, "job", "pause", str(waiting))
    assert code == 2 and "can be cancelled (job abort) or resumed, not paused" in err


def test_an_interrupted_import_resumes_with_job_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app.jobs import JobKind, enqueue
    from archiver_app.jobs.operations import import_config

    root = tmp_path / "lib"
    warc = write_warc(tmp_path / "site.warc.gz", site(2))
    with Library.open(root) as lib:
        job_id = enqueue(lib, JobKind.IMPORT, import_config([warc]), name="import")
        with lib.write() as s:  # killed before it wrote anything
            s.execute(
                update(Job)
                .where(Job.id == job_id)
                .values(
                    status="running",
                    lease_owner="gone:1:x",
                    lease_expires_at=lib.clock() - timedelta(seconds=5),
                )
            )
    code, out, _ = run(capsys, root, "job", "resume", str(job_id))
    assert code == 0 and out.strip() == f"job {job_id} completed"
    code, out, _ = run(capsys, root, "job", "show", str(job_id), "--json")
    shown = json.loads(out)
    assert shown["result"]["pages"] == 2
    assert any("queued to resume" in line["message"] for line in shown["log"])


def test_a_library_made_on_the_way_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped --library must not send an import to a new library unnoticed."""
    warc = write_warc(tmp_path / "site.warc.gz", site(1))
    code, _, err = run(capsys, tmp_path / "typo", "import", str(warc))
    assert code == 0 and f"no library was at {tmp_path / 'typo'}: created a new one there" in err
    code, _, err = run(capsys, tmp_path / "typo", "import", str(warc))
    assert code == 0 and "created" not in err  # the second time, it is there
    code, out, err = run(capsys, tmp_path / "made", "init")
    assert code == 0 and out.startswith("created library") and err == ""  # said once
    code, out, err = run(capsys, tmp_path / "made", "jobs", "--status", "bogus")
    assert code == 2 and "no job status 'bogus'; the statuses are queued, " in err


def test_a_read_only_or_full_destination_is_said_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The place written to refuses (read-only, full, not ours): one line naming the folder,
    no traceback. A read-only mount cannot be made here without privileges: the writer
    raises what the kernel would."""
    import errno

    root = tmp_path / "lib"
    run(capsys, root, "import", str(write_warc(tmp_path / "site.warc.gz", site(1))))
    (tmp_path / "ro").mkdir()
    temp = str(tmp_path / "ro" / ".x.wacz.1-ab-0.tmp-archiver")

    def refuse(*_a: object, **_k: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system", temp)

    monkeypatch.setattr("archiver_app.export.writer.write_wacz", refuse)
    code, _, err = run(capsys, root, "export", "-o", str(tmp_path / "ro" / "x.wacz"))
    assert (code, err) == (1, f"archiver: error: Read-only file system: {tmp_path / 'ro'}\n")

    def bug(*_a: object, **_k: object) -> None:
        raise OSError(errno.EBADF, "Bad file descriptor")  # ours, not the place's: shown whole

    monkeypatch.setattr("archiver_app.export.writer.write_wacz", bug)
    with pytest.raises(OSError, match="Bad file descriptor"):
        run(capsys, root, "export", "-o", str(tmp_path / "x2.wacz"))


def test_an_export_into_a_missing_folder_is_refused_before_any_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        make_snapshot(lib, [1000], seed=1)
    out = tmp_path / "out"
    for bibliography in ([], ["--bibliography"]):
        code, _, err = run(capsys, root, "export", "-o", str(out / "x.wacz"), *bibliography)
        assert code == 2
        assert f"the folder {out} does not exist: make it first, or export somewhere else" in err
    out.mkdir()
    (out / "x.bib").write_text("mine")
    code, _, err = run(capsys, root, "export", "-o", str(out / "x.wacz"), "--bibliography")
    assert code == 2 and f"{out / 'x.bib'} exists already" in err
    code, listed, _ = run(capsys, root, "jobs")
    assert code == 0 and "export" not in listed  # no failed export job left behind


def test_job_names_and_log_lines_show_their_addresses_readable_and_json_keeps_them_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app.crawl.jobs import create_job
    from archiver_app.crawl.queue import log_line

    stored = "http://xn--bcher-kva.example/%D0%BC%D0%B8%D1%80/%E6%9D%B1%E4%BA%AC.html"
    shown = "http://bücher.example/мир/東京.html"
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        job_id = create_job(lib, [stored])
        with lib.session() as s, s.begin():
            log_line(s, job_id, f"failed {stored}: timeout", at=lib.clock())
        row = next(r for r in lib.jobs.rows(recover=False) if r.id == job_id)  # the Jobs panel
        assert row.name == shown and row.config["seeds"] == [stored]
        assert lib.jobs.log_after(job_id, 0)[-1][3] == f"failed {shown}: timeout"

    code, out, _ = run(capsys, root, "jobs")
    assert code == 0 and shown in out and stored not in out
    code, out, _ = run(capsys, root, "job", "show", str(job_id))
    assert code == 0 and f"{job_id} {shown} (" in out and f"failed {shown}: timeout" in out
    assert f"host: {shown}" in out and stored not in out
    code, out, _ = run(capsys, root, "job", "log", str(job_id))
    assert code == 0 and f"failed {shown}: timeout" in out and stored not in out
    code, out, _ = run(capsys, root, "jobs", "--json")  # for tools: the stored form
    assert json.loads(out)[0]["name"] == stored
