"""Open time is O(1): Library.open + the first page of 100 snapshots, small vs large library.

Run: .venv/bin/python tests/bench/bench_open.py [--small 1000] [--large 200000]
Prints both times (median of several runs) and their ratio; the target is <= 1.5.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from archiver_app.library import Library
from tests.bench.common import best_and_median, report
from tests.helpers.factories import bulk_snapshots


def open_and_first_page(root: Path) -> None:
    with Library.open(root, create=False) as lib:
        page = lib.recent_snapshots(limit=100)
        assert len(page) == 100


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--large", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-open-") as tmp:
        roots = {}
        for label, n in (("small", args.small), ("large", args.large)):
            root = Path(tmp) / label
            start = time.perf_counter()
            with Library.open(root) as lib:
                bulk_snapshots(lib, n)
            print(f"filled {label}: {n:,} snapshots in {time.perf_counter() - start:.1f}s")
            roots[label] = root
        for root in roots.values():
            open_and_first_page(root)  # warm the page cache and imports equally
        _, small = best_and_median(lambda: open_and_first_page(roots["small"]), args.repeat)
        _, large = best_and_median(lambda: open_and_first_page(roots["large"]), args.repeat)
    ratio = large / small
    report(
        "open = Library.open + first 100 snapshots by capture time (median)",
        [
            (f"{args.small:,} snapshots", f"{small * 1000:.1f} ms"),
            (f"{args.large:,} snapshots", f"{large * 1000:.1f} ms"),
            ("ratio large/small", f"{ratio:.2f} (target <= 1.5)"),
        ],
    )
    return ratio


if __name__ == "__main__":
    main()
