"""The benchmarks still run (tiny sizes); their figures live in docs/benchmarks.md."""

from __future__ import annotations

import pytest

from tests.bench import bench_open


def test_bench_open_runs(capsys: pytest.CaptureFixture[str]) -> None:
    ratio = bench_open.main(["--small", "200", "--large", "2000", "--repeat", "3"])
    out = capsys.readouterr().out
    assert "ratio large/small" in out
    assert ratio > 0
