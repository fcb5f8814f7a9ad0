"""Shared bits of the benchmarks: timing, medians and one result format."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path


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


class StallSampler:
    """A watchdog thread: when the GUI thread misses its heartbeat for 60 ms, it records
    where the GUI thread is (``--diagnose``), so each stall has a culprit."""

    def __init__(self, last: list[float]) -> None:
        import threading

        self.last = last
        self.main = threading.get_ident()
        self.samples: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import traceback

        while not self._stop.wait(0.02):
            if time.perf_counter() - self.last[0] > 0.06:
                frame = sys._current_frames().get(self.main)
                if frame is not None:
                    stack = traceback.extract_stack(frame)[-6:]
                    key = " <- ".join(
                        f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(stack)
                    )
                    self.samples[key] = self.samples.get(key, 0) + 1

    def print_top(self, n: int = 12) -> None:
        """The places the GUI thread was seen stalled most often."""
        for where, count in sorted(self.samples.items(), key=lambda kv: -kv[1])[:n]:
            print(f"  stalled x{count}: {where}")
