"""bench_capture still runs (3 pages, one concurrency); figures live in docs/benchmarks.md."""

from __future__ import annotations

import pytest

from tests.bench import bench_capture


def test_bench_capture_runs(capsys: pytest.CaptureFixture[str]) -> None:
    runs = bench_capture.main(["--pages", "3", "--concurrency", "2"])
    out = capsys.readouterr().out
    assert "pages/min" in out and "ratio archiver/bare c=2" in out
    assert [r.ok for r in runs] == [3, 3]
    assert all(r.peak > 0 and r.per_minute > 0 for r in runs)
