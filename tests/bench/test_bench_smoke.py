"""The benchmarks still run (tiny sizes); their figures live in docs/benchmarks.md."""

from __future__ import annotations

import pytest

from tests.bench import bench_open


def test_bench_open_runs(capsys: pytest.CaptureFixture[str]) -> None:
    ratio = bench_open.main(["--small", "200", "--large", "2000", "--repeat", "3"])
    out = capsys.readouterr().out
    assert "ratio large/small" in out
    assert ratio > 0


def test_bench_index_runs(
    capsys: pytest.CaptureFixture[str],
    tmp_path: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.bench import bench_index

    monkeypatch.setenv("ARCHIVER_BENCH_CORPUS", str(tmp_path))
    results = bench_index.main(["--mib", "1", "--pages", "200", "--words", "30", "--queries", "5"])
    out = capsys.readouterr().out
    assert "ratio vs cdxj-indexer" in out and "p95" in out
    assert results["vs_cdxj_cpu"] > 0 and results["search_p95_ms"] > 0
