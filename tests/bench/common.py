"""Shared bits of the benchmarks: timing, medians and one result format."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def best_and_median(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Run ``fn`` ``repeat`` times; return (min, median) wall seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def report(title: str, rows: list[tuple[str, str]]) -> None:
    """Print a small aligned table of figures."""
    print(f"# {title}")
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
