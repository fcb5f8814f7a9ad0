"""bench_capture still runs (2 pages, concurrency 1); figures live in docs/benchmarks.md."""

from __future__ import annotations

import pytest

from tests.bench import bench_capture


def test_bench_capture_runs(capsys: pytest.CaptureFixture[str]) -> None:
    runs = bench_capture.main(["--pages", "2", "--concurrency", "1"])
    out = capsys.readouterr().out
    assert "pages/min" in out and "ratio archiver/bare c=1" in out
    assert [r.ok for r in runs] == [2, 2]
    assert all(r.peak > 0 and r.per_minute > 0 for r in runs)
