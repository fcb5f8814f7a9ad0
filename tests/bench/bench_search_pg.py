"""Search latency on PostgreSQL beside SQLite, on the same library (target: p95 within 2x).

Run: .venv/bin/python tests/bench/bench_search_pg.py [--pages 100000] [--queries 200]
     [--database-url postgresql://…]   (default: a throwaway server from Debian's binaries)

The library is built as ``bench_index.py``'s search part builds it (``--pages`` snapshot
rows with ``--words`` Zipf-distributed words of page text, in SQLite), then moved to
PostgreSQL with ``archiver library convert`` (copied, verified, switched; a ``VACUUM
ANALYZE`` after, as a database in service would have had; a copy of the SQLite library
stays beside it). The same queries then run, each on both engines back to back: two
frequent words with one filter (domain, date range, collection or mime), and the same with
the last word cut to 3 letters (search as you type). Prints p50/p95/max on each engine,
the ratios PostgreSQL/SQLite, how many queries gave different first pages, and
PostgreSQL's floor for the ranked query: reading once the ``tsvector`` of every page that
holds both words, which ``ts_rank`` needs (FTS5's bm25 reads only the words' postings).
At 100,000 pages it takes a few minutes, most of it building and converting the library.
``--words 1000`` builds pages whose ``tsvector`` is too large for its row (out of line, in
TOAST: ``ts_rank`` then reads it from there for every match); about 12 minutes.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_index import fill_text
from tests.bench.common import report


def _p95(ms: list[float]) -> float:
    return statistics.quantiles(ms, n=20, method="inclusive")[18]


def _spread(ms: list[float]) -> str:
    return f"p50 {statistics.median(ms):6.1f} ms  p95 {_p95(ms):6.1f} ms  max {max(ms):6.1f} ms"


@contextmanager
def _database(url: str | None) -> Iterator[str]:
    """``url``, or an empty database on a throwaway local server."""
    if url:
        yield url
        return
    from tests.helpers.postgres import _admin, running_server

    with running_server() as server:
        _admin(server, 'CREATE DATABASE "bench"')
        yield server.url("bench")


def _queries(vocab: list[str], count: int, seed: int) -> list[tuple[str, str, dict[str, object]]]:
    rng = random.Random(seed)
    start = datetime(2021, 1, 1, tzinfo=UTC)
    out = []
    for i in range(count):
        a, b = rng.sample(vocab[:2000], 2)
        kind = i % 4
        filters: dict[str, object]
        if kind == 0:
            filters = {"domain": f"site{rng.randrange(500)}.example"}
        elif kind == 1:
            since = start + timedelta(days=rng.randrange(1500))
            filters = {"since": since, "until": since + timedelta(days=90)}
        elif kind == 2:
            filters = {"collection": "default"}
        else:
            filters = {"mime": "text/html"}
        out.append((f"{a} {b}", f"{a} {b[:3]}", filters))
    return out


def _run(
    search: Callable[..., list[object]],
    libs: tuple[object, object],
    queries: list[tuple[str, str, dict[str, object]]],
) -> tuple[tuple[list[float], list[float], list[list[int]]], ...]:
    """Per engine, ``(words ms, typed ms, first page ids)``: each query runs on both
    engines back to back (which goes first alternates), so that both see the machine as
    it is at that moment: runs on a shared machine drift by a third over minutes."""
    from archiver_app.search import Query

    out: tuple[tuple[list[float], list[float], list[list[int]]], ...] = (
        ([], [], []),
        ([], [], []),
    )
    for lib in libs:
        search(lib, Query("warm up"))
    for i, (whole, prefix, filters) in enumerate(queries):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        for kind, q in enumerate(
            (Query(whole, prefix_last=False, **filters), Query(prefix, **filters))  # type: ignore[arg-type]
        ):
            for e in order:
                t = time.perf_counter()
                hits = search(libs[e], q, limit=50)
                out[e][kind].append((time.perf_counter() - t) * 1000)
                if kind == 0:
                    out[e][2].append([h.snapshot_id for h in hits])  # type: ignore[attr-defined]
    return out


#: The filter of query i is FILTERS[i % 4] (see _queries).
FILTERS = ("domain", "date range", "collection", "mime")


def _by_filter(
    lite: tuple[list[float], list[float], list[list[int]]],
    pg: tuple[list[float], list[float], list[list[int]]],
) -> list[tuple[str, str]]:
    """p95 per filter on both engines (where PostgreSQL's time goes)."""
    rows = []
    for k, name in enumerate(FILTERS):
        p95 = [_p95(times[k::4]) for times in (pg[0], lite[0], pg[1], lite[1])]
        rows.append(
            (
                f"p95 with a {name} filter",
                "words {:.1f} / SQLite {:.1f} ms, as you type {:.1f} / SQLite {:.1f} ms".format(
                    *p95
                ),
            )
        )
    return rows


def _floor(lib: object, queries: list[tuple[str, str, dict[str, object]]]) -> list[float]:
    """Per query, the time PostgreSQL takes to read the ``tsvector`` of every page holding
    both words once (``ts_rank`` cannot score a page without it; FTS5's bm25 reads only
    the words' postings): what any ranking of those pages costs at least."""
    from sqlalchemy import text

    from archiver_app.search.pg import words_by_index
    from archiver_app.search.query import build_fts_query
    from archiver_app.store.tsearch import fts_to_tsquery

    out = []
    with lib.engine.connect() as conn:  # type: ignore[attr-defined]
        for whole, _prefix, _filters in queries:
            tsq = fts_to_tsquery(str(build_fts_query(whole, prefix_last=False)))
            t = time.perf_counter()
            # through the words' index, as the search itself (no scan of every page)
            with words_by_index(lambda sql, values: conn.execute(text(sql), values)):
                conn.execute(
                    text(
                        "SELECT sum(length(doc)) FROM snapshot_fts WHERE doc @@ CAST(:q AS tsquery)"
                    ),
                    {"q": tsq},
                ).scalar()
            out.append((time.perf_counter() - t) * 1000)
    return out


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--words", type=int, default=300, help="words of text per page")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--database-url", default=None, help="an empty PostgreSQL database")
    args = parser.parse_args(argv)

    from sqlalchemy import text

    from archiver_app.library import Library
    from archiver_app.library_convert import convert_library
    from archiver_app.search import search
    from tests.helpers.factories import bulk_snapshots

    tmp = Path(tempfile.mkdtemp(prefix="bench-search-pg-"))
    try:
        with _database(args.database_url) as url:
            root = tmp / "lib"
            t0 = time.perf_counter()
            with Library.open(root) as lib:
                bulk_snapshots(lib, args.pages)
                vocab = fill_text(lib, args.pages, args.words, seed=1)
            built = time.perf_counter() - t0
            queries = _queries(vocab, args.queries, seed=2)
            # The SQLite library stays beside the converted one, to search both in turn.
            shutil.copytree(root, tmp / "lite")
            t0 = time.perf_counter()
            convert_library(root, url, batch=5000)
            with Library.open(root) as lib, Library.open(tmp / "lite") as lite_lib:
                with lib.engine.connect() as conn:
                    conn.execution_options(isolation_level="AUTOCOMMIT").execute(
                        text("VACUUM ANALYZE")
                    )
                converted = time.perf_counter() - t0
                lite, pg = _run(search, (lite_lib, lib), queries)
                floor = _floor(lib, queries)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    differ = sum(1 for a, b in zip(lite[2], pg[2], strict=True) if a != b)
    ratio_words = _p95(pg[0]) / _p95(lite[0])
    ratio_typed = _p95(pg[1]) / _p95(lite[1])
    report(
        "search on PostgreSQL beside SQLite (target: p95 within 2x)",
        [
            ("library", f"{args.pages} pages x {args.words} words (built in {built:.0f} s)"),
            ("converted to PostgreSQL", f"{converted:.0f} s (copy, verify, VACUUM ANALYZE)"),
            ("SQLite, two words + filter", _spread(lite[0])),
            ("PostgreSQL, two words + filter", _spread(pg[0])),
            ("SQLite, as you type", _spread(lite[1])),
            ("PostgreSQL, as you type", _spread(pg[1])),
            ("ratio p95 PostgreSQL/SQLite", f"{ratio_words:.2f}x words, {ratio_typed:.2f}x typed"),
            ("floor: read each match's tsvector", _spread(floor)),
            ("ratio p95 words / floor", f"{_p95(pg[0]) / _p95(floor):.2f}x"),
            ("first pages that differ", f"{differ} of {len(queries)}"),
            *_by_filter(lite, pg),
        ],
    )
    return {"ratio_words_p95": ratio_words, "ratio_typed_p95": ratio_typed, "differ": differ}


if __name__ == "__main__":
    main()
