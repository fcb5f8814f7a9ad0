"""Shared bits of the benchmarks: timing, medians and one result format."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


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


# ----------------------------------------------------------------------- machine-wide stalls

#: An idle Qt process on a 10 ms timer: each gap over 30 ms it sees is printed as
#: ``gap START END`` (``time.perf_counter`` is the system-wide monotonic clock on Linux and
#: macOS, so its times compare with this process's). A gap there is the machine's: the
#: process has nothing to do but wake up.
IDLE_ANCHOR = r"""
import time
from PySide6.QtCore import QCoreApplication, QTimer, Qt
app = QCoreApplication([])
last = [time.perf_counter()]
def tick():
    now = time.perf_counter()
    if now - last[0] > 0.030:
        print("gap", last[0] + 0.010, now, flush=True)
    last[0] = now
t = QTimer(); t.setTimerType(Qt.TimerType.PreciseTimer); t.setInterval(10); t.timeout.connect(tick)
t.start()
app.exec()
"""


def start_idle_anchor() -> Any:
    """Start :data:`IDLE_ANCHOR` in its own process (normal priority)."""
    import subprocess

    return subprocess.Popen([sys.executable, "-c", IDLE_ANCHOR], stdout=subprocess.PIPE, text=True)


def stop_idle_anchor(anchor: Any) -> list[tuple[float, float]]:
    """Stop the anchor; return its gaps as ``(start, end)`` perf_counter seconds."""
    anchor.terminate()
    out, _ = anchor.communicate(timeout=30)
    gaps = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "gap":
            gaps.append((float(parts[1]), float(parts[2])))
    return gaps


def own_part(stall: tuple[float, float], machine: list[tuple[float, float]]) -> float:
    """Seconds of ``stall`` (start, end) during which the idle anchor was not stalled too.

    What remains is the part of a stall this process can be blamed for; the rest the whole
    machine lost (the CPU given to another virtual machine, the kernel, a saturated core
    that even an idle process waited for).
    """
    start, end = stall
    shared = sum(max(0.0, min(end, b) - max(start, a)) for a, b in machine)
    return max(0.0, end - start - shared)


def steal_seconds() -> float | None:
    """CPU time taken from this virtual machine by its host so far (Linux; else None)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    import os

    return int(fields[8]) / os.sysconf("SC_CLK_TCK")
