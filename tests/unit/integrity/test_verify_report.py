"""A verify that finds more files than a job's row keeps loses none of them: every verdict
is in the job's report file, in ``archiver verify``'s output and in the findings the GUI
lists; the counts agree; a crash while the report is written leaves no report or all of it.

A real library with 620 small captured files (600 altered, 20 missing), a real WARC import
for the snapshots they belong to, the real CLI and a real child process killed mid-write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app import cli
from archiver_app.durable import temp_name
from archiver_app.importers.warcs import import_warc_file
from archiver_app.integrity import IntegrityCode
from archiver_app.integrity.report import REPORT_NAME, read_report, write_job_report
from archiver_app.integrity.verify import FileVerdict
from archiver_app.jobs.kinds import MAX_STORED_ITEMS, JobKind
from archiver_app.library import Library
from archiver_app.store.files import register_file
from archiver_app.store.models import File, FileKind, Job, Origin
from tests.helpers.warcs import site, write_warc

ALTERED, MISSING = 600, 20


@pytest.fixture
def damaged(library: Library, tmp_path: Path) -> dict[str, tuple[IntegrityCode, int]]:
    """620 captured text files across two snapshots, then 600 altered and 20 deleted: each
    one's path -> (its expected verdict, its snapshot)."""
    import_warc_file(library, write_warc(tmp_path / "in.warc.gz", site(2)), collection="c")
    with library.session() as s:
        sids = sorted(set(s.scalars(select(File.snapshot_id).where(File.snapshot_id.is_not(None)))))
    folder = library.root / "archive" / "bulk"
    folder.mkdir(parents=True)
    expected: dict[str, tuple[IntegrityCode, int]] = {}
    with library.write() as s:
        for i in range(ALTERED + MISSING):
            rel = f"archive/bulk/page-{i:04}.txt"
            (library.root / rel).write_text(f"page {i} as captured\n")
            sid = sids[i % len(sids)]
            register_file(s, library.root, rel, FileKind.TEXT, sid, origin=Origin.CAPTURE)
            code = IntegrityCode.ALTERED if i < ALTERED else IntegrityCode.MISSING
            expected[rel] = (code, sid)
    for rel, (code, _sid) in expected.items():
        if code is IntegrityCode.ALTERED:
            (library.root / rel).write_text("edited later\n")
        else:
            (library.root / rel).unlink()
    return expected


def _verify_job(library: Library) -> Job:
    with library.session() as s:
        job = s.scalars(select(Job).where(Job.kind == str(JobKind.VERIFY))).one()
        s.expunge(job)
        return job


def test_every_verdict_is_in_the_report_the_output_and_the_findings(
    library: Library,
    damaged: dict[str, tuple[IntegrityCode, int]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["verify", "--library", str(library.root)]) == 1
    out = capsys.readouterr().out

    printed = {
        line.split(": ")[1]: line.split(": ")[0]
        for line in out.splitlines()
        if line.startswith(("altered after capture: ", "missing: "))
    }
    assert printed == {rel: str(code) for rel, (code, _sid) in damaged.items()}

    job = _verify_job(library)
    assert job.result is not None
    report = library.root / job.result["report"]
    assert report == library.root / "jobs" / str(job.id) / REPORT_NAME
    assert f"every verdict: {report}" in out
    assert len(job.result["verdicts"]) <= MAX_STORED_ITEMS + 1  # the row stays small

    in_report = {v.path: (v.code, v.snapshot_id) for v in read_report(report)}
    assert in_report == damaged
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert {"path", "snapshot_id", "code", "detail", "repaired_from"} <= set(lines[0])

    counts = job.result["counts"]
    assert counts[IntegrityCode.ALTERED] == ALTERED and counts[IntegrityCode.MISSING] == MISSING
    assert f"{ALTERED} altered after capture, {MISSING} missing" in out

    findings = library.integrity.findings(job.id)
    assert findings is not None and findings.not_listed == 0
    found = {f.path: (f.code, s.snapshot_id) for s in findings.snapshots for f in s.files}
    assert found == damaged


def test_verify_json_holds_every_verdict_and_the_counts(
    library: Library,
    damaged: dict[str, tuple[IntegrityCode, int]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["verify", "--json", "--library", str(library.root)]) == 1
    found = json.loads(capsys.readouterr().out)
    counts = found["counts"]
    assert found["ok"] is False and found["checked"] == sum(counts.values())
    assert (counts["altered after capture"], counts["missing"]) == (ALTERED, MISSING)
    listed = {v["path"]: (IntegrityCode(v["code"]), v["snapshot_id"]) for v in found["verdicts"]}
    assert listed == damaged  # all of them, past the 500 a job's row keeps
    assert Path(found["report"]) == library.root / _verify_job(library).result["report"]


def test_a_capture_past_the_rows_500_still_shows_its_altered_files(
    library: Library, damaged: dict[str, tuple[IntegrityCode, int]]
) -> None:
    """The details pane reads the report, not the row cut at 500: the last (missing) files
    are named."""
    assert cli.main(["verify", "--library", str(library.root)]) == 1
    last = max(damaged)
    code, sid = damaged[last]
    assert code is IntegrityCode.MISSING
    state = library.integrity.snapshot_state(sid)
    assert Path(last).name in state.message and "missing" in state.message


def test_saved_report_holds_every_finding_as_csv(
    library: Library, damaged: dict[str, tuple[IntegrityCode, int]], tmp_path: Path
) -> None:
    findings = library.integrity.verify()
    dest = tmp_path / "saved" / "verify.csv"
    assert library.integrity.save_report(findings, dest) == len(damaged)
    rows = dest.read_text().splitlines()
    assert rows[0] == "path,snapshot_id,code,detail,repaired_from,drive,kind"
    assert {r.split(",")[0] for r in rows[1:]} == set(damaged)


_KILLED_WRITE = """
import os, signal, sys
from pathlib import Path
from archiver_app import durable
from archiver_app.integrity.judge import IntegrityCode
from archiver_app.integrity.report import write_report
from archiver_app.integrity.verify import FileVerdict

target, step = Path(sys.argv[1]), sys.argv[2]

def hook(name, final):
    if name == step:
        os.kill(os.getpid(), signal.SIGKILL)

verdicts = [
    FileVerdict(f"archive/p{i}.txt", "text", i, IntegrityCode.ALTERED, "differs")
    for i in range(620)
]
with durable.step_hook(hook):
    write_report(target, verdicts)
"""


@pytest.mark.parametrize("step", ["written", "synced", "renamed", "folder-synced"])
def test_a_kill_while_the_report_is_written_leaves_none_or_all(tmp_path: Path, step: str) -> None:
    target = tmp_path / "jobs" / "7" / REPORT_NAME
    run = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITE, str(target), step],
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        check=False,
    )
    assert run.returncode == -9  # killed at that step, not finished
    if step in ("written", "synced"):
        assert not target.exists()
    else:
        assert [v.path for v in read_report(target)] == [f"archive/p{i}.txt" for i in range(620)]


def test_a_scrub_of_this_computer_reports_every_damaged_file(
    library: Library,
    damaged: dict[str, tuple[IntegrityCode, int]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``archiver drives verify --laptop`` (the scrub): its row keeps 500 of each list; the
    report has every file, with its snapshot."""
    assert cli.main(["drives", "verify", "--laptop", "--library", str(library.root)]) == 1
    out = capsys.readouterr().out
    job = _verify_job(library)
    assert job.result is not None
    [result] = job.result["value"]
    report = library.root / result["report"]
    assert f"every damaged copy: {report}" in out
    assert len(result["corrupted"]) == MAX_STORED_ITEMS + 1  # cut: "... and N more"
    in_report = {v.path: (v.code, v.snapshot_id) for v in read_report(report)}
    assert in_report == damaged


def test_a_run_after_a_killed_write_leaves_only_the_report(library: Library) -> None:
    """What a kill left in the job's folder (a temporary file) goes when the job writes
    its report again."""
    folder = library.root / "jobs" / "3"
    folder.mkdir(parents=True)
    left = folder / temp_name(REPORT_NAME)
    left.write_text('{"path": "half')
    verdict = FileVerdict("archive/a.txt", "text", 1, IntegrityCode.MISSING, "gone")
    assert write_job_report(library, 3, [verdict]) == f"jobs/3/{REPORT_NAME}"
    assert sorted(p.name for p in folder.iterdir()) == [REPORT_NAME]
    assert read_report(folder / REPORT_NAME) == [verdict]
