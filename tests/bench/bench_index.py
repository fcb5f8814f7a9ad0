"""Indexing speed against ``warcio index`` and ``cdxj-indexer``; search latency at 100k pages.

Run: .venv/bin/python tests/bench/bench_index.py [--mib 1024] [--pages 100000]

1. Indexing: the shared deterministic corpus (tests/bench/corpus.py, ~1 GiB, ~35k records)
   is indexed by ``warcio index`` and ``cdxj-indexer`` (subprocesses, output discarded) and
   by our indexer (records rows + page snapshots + extracted text into FTS5, in a fresh
   library, files linked in place, each next file named to ``index_warc`` as a folder
   import does, so it is read ahead) in the same run (``--serial``: ours once more without
   the reading worker process, ``pipeline=False``). Prints wall and CPU seconds (ours: all
   threads and the reading worker process) and the ratios; the target is <= 1.5x
   cdxj-indexer in wall time. CPU time is printed because a shared machine inflates wall
   time unevenly.
2. Search: a library with ``--pages`` snapshot rows and synthetic page text (Zipf-distributed
   words), then ``--queries`` two-word queries, each with one filter (domain, date range,
   collection or mime); prints p50/p95/max latency (target p95 <= 50 ms), and the same
   queries with the second word cut to 3 letters (search as you type: the engine's bounded
   path for short prefixes, ``archiver_app/search/quick.py``).
"""

from __future__ import annotations

import argparse
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from typing import TYPE_CHECKING

from tests.bench.common import report
from tests.bench.corpus import WORDS, build_corpus

if TYPE_CHECKING:
    from archiver_app.library import Library

# The application's modules are imported where they are used: the indexer's worker
# process imports this (main) module again, as multiprocessing does, and the app's own
# entry point is just as light.

BIN = Path(sys.executable).parent
_last_worker_cpu = 0.0  # CPU seconds of the reading worker process in the last run_ours


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_tool(args: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and output lines of one anchor tool run."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    out = subprocess.run(args, check=True, capture_output=True).stdout
    return time.perf_counter() - t0, _children_cpu() - cpu0, out.count(b"\n")


def run_ours(
    files: list[Path], root: Path, *, pipeline: bool = True
) -> tuple[float, float, int, int]:
    """Wall and CPU seconds (all threads, and the worker processes), records and pages of
    our indexer over ``files``."""
    from archiver_app.library import Library
    from archiver_app.store.models import File, FileKind
    from archiver_app.warc.indexer import IndexTarget, index_warc

    with Library.open(root) as lib:
        coll = lib.ensure_collection("bench")
        targets = []
        with lib.write() as s:
            for path in files:
                row = File(
                    path=f"linked/{path.name}",
                    size=path.stat().st_size,
                    kind=FileKind.WARC,
                    external_path=str(path),
                )
                s.add(row)
                s.flush()
                targets.append(
                    IndexTarget(path=path, file_id=row.id, warc_file=row.path, collection_id=coll)
                )
        cpu0, t0 = time.process_time(), time.perf_counter()
        records = pages = 0
        worker_cpu = 0.0
        for i, target in enumerate(targets):
            then = targets[i + 1].path if i + 1 < len(targets) else None
            rep = index_warc(lib, target, pipeline=pipeline, then=then)
            records += rep.records
            pages += rep.pages
            worker_cpu += rep.worker_cpu
            assert not rep.problems, rep.problems[:3]
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        global _last_worker_cpu  # noqa: PLW0603 - a figure for the report only
        _last_worker_cpu = worker_cpu
        return wall, cpu + worker_cpu, records, pages


def bench_indexing(mib: int, max_files: int | None, serial: bool = False) -> dict[str, float]:
    corpus = build_corpus(total_bytes=mib << 20)
    files = corpus.files[:max_files] if max_files else corpus.files
    names = [str(f) for f in files]
    size = sum(f.stat().st_size for f in files)
    w_wall, w_cpu, w_lines = run_tool([str(BIN / "warcio"), "index", *names])
    c_wall, c_cpu, c_lines = run_tool([str(BIN / "cdxj-indexer"), *names])
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp:
        o_wall, o_cpu, records, pages = run_ours(files, Path(tmp) / "lib")
    o_worker = _last_worker_cpu
    assert records == w_lines, (records, w_lines)
    extra = []
    if serial:
        with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp:
            s_wall, s_cpu, s_records, _ = run_ours(files, Path(tmp) / "lib", pipeline=False)
        assert s_records == records
        extra = [
            ("archiver, one thread", f"{s_wall:7.2f} s wall {s_cpu:7.2f} s CPU  (pipeline=False)"),
            ("one thread vs cdxj (wall/CPU)", f"{s_wall / c_wall:.2f}x / {s_cpu / c_cpu:.2f}x"),
        ]
    rows = [
        ("corpus", f"{len(files)} files, {size / 2**20:.0f} MiB, {records} records, {pages} pages"),
        ("warcio index", f"{w_wall:7.2f} s wall {w_cpu:7.2f} s CPU  ({w_lines} lines)"),
        ("cdxj-indexer", f"{c_wall:7.2f} s wall {c_cpu:7.2f} s CPU  ({c_lines} lines)"),
        ("archiver index", f"{o_wall:7.2f} s wall {o_cpu:7.2f} s CPU  (records+pages+text)"),
        ("  CPU: reading worker / writer", f"{o_worker:.2f} s / {o_cpu - o_worker:.2f} s"),
        ("ratio vs warcio (wall/CPU)", f"{o_wall / w_wall:.2f}x / {o_cpu / w_cpu:.2f}x"),
        ("ratio vs cdxj-indexer (wall/CPU)", f"{o_wall / c_wall:.2f}x / {o_cpu / c_cpu:.2f}x"),
        ("throughput", f"{size / 2**20 / o_wall:.1f} MiB/s, {records / o_wall:.0f} records/s"),
        *extra,
    ]
    report("indexing (target: <= 1.5x cdxj-indexer)", rows)
    return {"vs_cdxj_wall": o_wall / c_wall, "vs_cdxj_cpu": o_cpu / c_cpu}


def _vocabulary(rng: random.Random, size: int) -> tuple[list[str], list[float]]:
    words = list(dict.fromkeys(WORDS))
    seen = set(words)
    syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "ven", "dor", "al", "is"]
    while len(words) < size:
        word = "".join(rng.choice(syllables) for _ in range(rng.randrange(2, 5)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    cum, total = [], 0.0
    for rank in range(1, len(words) + 1):
        total += 1.0 / rank
        cum.append(total)
    return words, cum


def fill_text(lib: Library, pages: int, words_per_page: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    vocab, cum = _vocabulary(rng, 20_000)
    conn = sqlite3.connect(lib.db_path)
    try:
        ids = [r[0] for r in conn.execute("SELECT id FROM snapshots ORDER BY id")]
        titles = dict(conn.execute("SELECT id, title FROM snapshots"))
        urls = dict(conn.execute("SELECT id, url FROM snapshots"))
        batch = []
        for sid in ids:
            body = " ".join(rng.choices(vocab, cum_weights=cum, k=words_per_page))
            batch.append((sid, titles[sid], urls[sid], body, ""))
            if len(batch) >= 5000:
                conn.executemany(
                    "INSERT INTO snapshot_fts(rowid, title, url, body, tags) VALUES (?,?,?,?,?)",
                    batch,
                )
                batch.clear()
        conn.executemany(
            "INSERT INTO snapshot_fts(rowid, title, url, body, tags) VALUES (?,?,?,?,?)", batch
        )
        conn.commit()
    finally:
        conn.close()
    return vocab


def _spread(ms: list[float]) -> str:
    p95 = statistics.quantiles(ms, n=20, method="inclusive")[18]
    return f"p50 {statistics.median(ms):.1f} ms  p95 {p95:.1f} ms  max {max(ms):.1f} ms"


def bench_search(
    pages: int, queries: int, words_per_page: int, seed: int = 1
) -> tuple[float, float]:
    """p95 milliseconds of two-word queries and of the same with a 3-letter last word."""
    from archiver_app.library import Library
    from archiver_app.search import Query, search
    from tests.helpers.factories import bulk_snapshots

    rng = random.Random(seed + 1)
    start = datetime(2021, 1, 1, tzinfo=UTC)

    def a_filter(i: int) -> dict[str, object]:
        kind = i % 4
        if kind == 0:
            return {"domain": f"site{rng.randrange(500)}.example"}
        if kind == 1:
            since = start + timedelta(days=rng.randrange(1500))
            return {"since": since, "until": since + timedelta(days=90)}
        if kind == 2:
            return {"collection": "default"}
        return {"mime": "text/html"}

    timings: list[float] = []
    cpu: list[float] = []
    typed: list[float] = []
    with (
        tempfile.TemporaryDirectory(prefix="bench-search-") as tmp,
        Library.open(Path(tmp) / "lib") as lib,
    ):
        t0 = time.perf_counter()
        bulk_snapshots(lib, pages)
        vocab = fill_text(lib, pages, words_per_page, seed)
        build = time.perf_counter() - t0
        search(lib, Query("warm up"))
        for i in range(queries):
            # Two words a user might type: from the 2,000 most frequent.
            a, b = rng.sample(vocab[:2000], 2)
            filters = a_filter(i)
            t, c = time.perf_counter(), time.process_time()
            search(lib, Query(f"{a} {b}", prefix_last=False, **filters), limit=50)  # type: ignore[arg-type]
            timings.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
            t = time.perf_counter()
            search(lib, Query(f"{a} {b[:3]}", **filters), limit=50)  # type: ignore[arg-type]
            typed.append((time.perf_counter() - t) * 1000)
    report(
        "search latency (target: p95 <= 50 ms)",
        [
            ("library", f"{pages} pages x {words_per_page} words (built in {build:.0f} s)"),
            ("two words + filter", _spread(timings)),
            ("  same, CPU time", _spread(cpu)),
            ("as you type (3-letter prefix, wall)", _spread(typed)),
            ("queries", str(queries)),
        ],
    )
    return (
        statistics.quantiles(timings, n=20, method="inclusive")[18],
        statistics.quantiles(typed, n=20, method="inclusive")[18],
    )


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mib", type=int, default=1024, help="corpus size")
    parser.add_argument("--files", type=int, default=None, help="only the first N corpus files")
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--words", type=int, default=300, help="words of text per page")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--skip-index", action="store_true")
    parser.add_argument(
        "--serial",
        action="store_true",
        help="also time our indexer without its reading worker (pipeline=False)",
    )
    parser.add_argument("--skip-search", action="store_true")
    args = parser.parse_args(argv)
    results: dict[str, float] = {}
    if not args.skip_index:
        results.update(bench_indexing(args.mib, args.files, args.serial))
    if not args.skip_search:
        words_p95, prefix_p95 = bench_search(args.pages, args.queries, args.words)
        results["search_p95_ms"] = words_p95
        results["search_prefix_p95_ms"] = prefix_p95
    return results


if __name__ == "__main__":
    main()
