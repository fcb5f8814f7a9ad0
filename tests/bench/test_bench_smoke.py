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
    assert results["search_prefix_p95_ms"] > 0


@pytest.mark.slow
def test_bench_gui_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.bench import bench_gui

    figures = bench_gui.main(
        [
            "--rows",
            "3000",
            "--launches",
            "1",
            "--hash-mb",
            "8",
            "--jumps",
            "5",
            "--queries",
            "museum",
            "--idle-seconds",
            "2",
        ]
    )
    out = capsys.readouterr().out
    assert "keystroke to results painted" in out and "longest event-loop stall" in out
    assert figures["launch_median"] > 0 and figures["key_p95"] > 0
    assert figures["launch_floor"] > 0 and "anchor: a bare Qt table" in out


@pytest.mark.slow
def test_bench_gui_work_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.bench import bench_gui_work

    figures = bench_gui_work.main(["--pages", "2", "--legacy", "20", "--legacy-kib", "4"])
    out = capsys.readouterr().out
    assert "longest stall" in out and "migration left 0" in out
    assert "crawl      ended" in out and "mirror     ended" in out
    assert figures["elapsed"] > 0 and figures["longest_ms"] >= 0


def test_bench_compare_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.bench import bench_compare

    figures = bench_compare.main(["--lines", "2000", "--height", "1500", "--repeat", "1"])
    out = capsys.readouterr().out
    assert "text diff (ours)" in out and "visual diff (ours)" in out
    assert figures["text_ms"] > 0 and figures["visual_ms"] > 0
