"""The PostgreSQL search benchmark still runs (tiny sizes); its figures go in docs/benchmarks.md."""

from __future__ import annotations

import pytest

from tests.helpers.postgres import _find_bin


def test_bench_search_pg_runs(capsys: pytest.CaptureFixture[str]) -> None:
    if _find_bin() is None:
        pytest.skip("PostgreSQL server binaries not found (install postgresql-15)")
    from tests.bench import bench_search_pg

    figures = bench_search_pg.main(["--pages", "300", "--words", "40", "--queries", "8"])
    out = capsys.readouterr().out
    assert "ratio p95 PostgreSQL/SQLite" in out and "first pages that differ" in out
    assert "p95 with a date range filter" in out
    assert figures["ratio_words_p95"] > 0 and figures["ratio_typed_p95"] > 0
