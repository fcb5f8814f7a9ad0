"""bench_crawl still runs (a tiny site, one concurrency); its figures are in docs/benchmarks.md."""

from __future__ import annotations

import pytest

from tests.bench import bench_crawl

pytestmark = pytest.mark.slow


def test_bench_crawl_runs(capsys: pytest.CaptureFixture[str]) -> None:
    rates = bench_crawl.main(
        ["--sections", "1", "--per-section", "1", "--concurrency", "2", "--no-anchor"]
    )
    out = capsys.readouterr().out
    assert "concurrency 2" in out and "pages/min" in out
    assert rates[2] > 0
