"""bench_migrate still runs (tiny sizes); its figures live in docs/benchmarks.md."""

from __future__ import annotations

import pytest

from tests.bench import bench_migrate


def test_bench_migrate_runs(capsys: pytest.CaptureFixture[str]) -> None:
    open_ratio, move_ratio = bench_migrate.main(
        [
            "--small",
            "150",
            "--large",
            "600",
            "--repeat",
            "2",
            "--snapshots",
            "20",
            "--file-bytes",
            "2048",
            "--rounds",
            "2",
            "--here",
        ]
    )
    out = capsys.readouterr().out
    assert "ratio large/small" in out
    assert "ratio vs cp -a" in out and "round 2" in out
    assert open_ratio > 0
    assert move_ratio > 0
