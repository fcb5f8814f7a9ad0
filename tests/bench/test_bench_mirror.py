"""The mirror benchmark still runs (tiny sizes); its figures live in docs/benchmarks.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench import bench_mirror


def test_bench_mirror_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    times = bench_mirror.main(
        ["--mib", "1", "--small", "20", "--corpus", str(tmp_path / "corpus"), "--no-loop"]
    )
    out = capsys.readouterr().out
    assert "ratio to cp -a" in out and "every copy sha256-verified" in out
    assert times["archiver mirror"] > 0 and times["cp -a"] > 0
    if "rsync -a" in times:  # the floor any verified, durable copy meets here
        floor = next(line for line in out.splitlines() if line.startswith("floor: the larger"))
        durable = times["rsync -a + sync"] / times["rsync -a"]
        assert float(floor.split()[3].rstrip("x")) >= round(durable, 2)
