"""The replay benchmark still runs end to end (tiny corpus, pywb alongside)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench import bench_replay


def test_bench_replay_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ratio = bench_replay.main(["--mib", "3", "--requests", "40", "--work", str(tmp_path)])
    out = capsys.readouterr().out
    assert "pywb id_ (HTTP)" in out and "ratio archiver/pywb" in out
    ours = out.split("archiver serve, first pass (HTTP)")[1].splitlines()[0]
    assert "failures 0" in ours
    assert "failures 0" in out.split("Replayer.serve, cached (in process)")[1].splitlines()[0]
    assert ratio > 0
