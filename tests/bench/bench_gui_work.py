"""Event-loop stalls while real background work runs: a crawl, a mirror and a migration.

Run: .venv/bin/python tests/bench/bench_gui_work.py [--pages 24] [--legacy 1500]

The real main window (offscreen) over a fresh library of ``--legacy`` snapshots in the old
``archiver-1`` layout, with a destination folder added. Then, at once and through the same
code paths the buttons use: a crawl of the local generated site with real Chromium at
concurrency 4 (the capture dialog's crawl), *Mirror Now* to the destination, and the
background migrator over the old snapshots. A 10 ms ``QTimer`` heartbeat on the GUI thread
records every gap; the anchor is an idle Qt process's longest gap over the same time on
the same machine. Target (issue: the desktop app): the longest stall <= 100 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QTWEBENGINE_DISABLE_SANDBOX", "1")


IDLE_ANCHOR = r"""
import time
from PySide6.QtCore import QCoreApplication, QTimer, Qt
app = QCoreApplication([])
worst, last = [0.0], [time.perf_counter()]
def tick():
    now = time.perf_counter()
    if now - last[0] > worst[0]:
        worst[0] = now - last[0]
        print("idle", worst[0] - 0.010, flush=True)
    last[0] = now
t = QTimer(); t.setTimerType(Qt.TimerType.PreciseTimer); t.setInterval(10); t.timeout.connect(tick)
t.start()
app.exec()
"""


def main(argv: list[str] | None = None) -> dict[str, float]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pages", type=int, default=24, help="crawl page limit")
    p.add_argument("--legacy", type=int, default=1500, help="old-layout snapshots to migrate")
    p.add_argument("--legacy-kib", type=int, default=64, help="size of each old file, KiB")
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--diagnose", action="store_true", help="print where the GUI thread stalls")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-gui-work-") as tmp:
        return run(args, Path(tmp))


def run(args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    from PySide6.QtCore import QEventLoop, QSettings, Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from archiver_app.gui.capture_input import CaptureRequest, CrawlOptions
    from archiver_app.gui.main_window import MainWindow
    from archiver_app.gui.ops import BackgroundOp, OpRunner
    from archiver_app.layout.migrator import pending_count
    from archiver_app.library import Library
    from archiver_app.mirror import add_destination
    from archiver_app.tasks.isolated import run_isolated
    from tests.bench.common import StallSampler
    from tests.helpers.crawl_site import generated_site
    from tests.helpers.legacy import legacy_library
    from tests.helpers.webserver import LocalServer

    lib = Library.open(tmp / "lib", create=True)
    legacy_library(lib, args.legacy, file_bytes=args.legacy_kib * 1024)
    (tmp / "drive").mkdir()
    add_destination(lib, tmp / "drive", "bench")
    server = LocalServer().start()
    site = generated_site(server, sections=2, per_section=max(1, args.pages // 2))

    app = QApplication.instance() or QApplication([])
    runner = OpRunner(app)
    window = MainWindow(
        lib, runner=runner, settings=QSettings(str(tmp / "s.ini"), QSettings.Format.IniFormat)
    )
    window.migrator.stop()  # the bench runs the migrator itself, beside the user's work
    window.resize(1200, 800)
    window.show()
    deadline = time.monotonic() + 30
    while window.model.loading and time.monotonic() < deadline:
        app.processEvents()

    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    heartbeat = QTimer()
    heartbeat.setTimerType(Qt.TimerType.PreciseTimer)
    heartbeat.setInterval(10)
    heartbeat.timeout.connect(tick)

    started = time.perf_counter()
    ended: dict[str, float] = {}
    crawl = window.run_capture(
        CaptureRequest(
            urls=(site.seed,),
            crawl=CrawlOptions(scope="host", depth=2, page_limit=args.pages, concurrency=4),
        )
    )
    mirror = window.drives.mirror_now()
    migration = BackgroundOp(  # as the app's idle migrator runs it: in a child process
        runner,
        lambda p, c: run_isolated(
            "archiver_app.layout.migrator:run_migrator", lib, progress=p, cancel=c
        ),
        label="migration",
        blocks_quit=False,
    ).run_in_background()
    ops: dict[str, Any] = {"crawl": crawl, "mirror": mirror, "migration": migration}
    anchor = subprocess.Popen(
        [sys.executable, "-c", IDLE_ANCHOR], stdout=subprocess.PIPE, text=True
    )
    last[0] = time.perf_counter()
    heartbeat.start()
    sampler = StallSampler(last)
    if args.diagnose:
        sampler.start()

    def check() -> None:
        running = {op.cancel for op in runner.running()}
        for name, op in ops.items():
            if name not in ended and (op is None or op.cancel_token not in running):
                ended[name] = time.perf_counter() - started
        if len(ended) == len(ops) or time.perf_counter() - started > args.timeout:
            loop.quit()

    loop = QEventLoop()
    watcher = QTimer()
    watcher.setInterval(200)
    watcher.timeout.connect(check)
    watcher.start()
    loop.exec()  # a local loop: quitting it leaves the application as it was
    heartbeat.stop()
    watcher.stop()
    if args.diagnose:
        sampler.stop()
    elapsed = time.perf_counter() - started
    anchor.terminate()
    anchor_out, _ = anchor.communicate(timeout=30)
    idle_lines = [ln for ln in anchor_out.splitlines() if ln.startswith("idle")]
    idle_gap = float(idle_lines[-1].split()[1]) if idle_lines else None
    left = pending_count(lib)
    for t in (window.jobs.timer, window.drives.timer, window.status.timer):
        t.stop()
    window.request_quit()
    runner.shutdown(wait=True)
    lib.close()
    server.stop()

    stalls = sorted((g - 0.010) * 1000 for g in gaps)
    longest = stalls[-1] if stalls else 0.0
    p99 = stalls[int(0.99 * (len(stalls) - 1))] if stalls else 0.0
    over = sum(1 for s in stalls if s > 100)
    print("# GUI event loop while a crawl (4 pages at once), a mirror and a migration run")
    for name in ops:
        when = ended.get(name)
        print(f"{name:<10} ended after {when:.1f} s" if when else f"{name:<10} still running")
    print(f"migration left {left} old-layout snapshot(s)")
    print(f"heartbeat ticks        {len(gaps)} over {elapsed:.1f} s")
    print(f"longest stall          {longest:.0f} ms (target <= 100)")
    print(f"p99 stall              {p99:.0f} ms; median {statistics.median(stalls):.1f} ms")
    print(f"stalls over 100 ms     {over}")
    if idle_gap is not None:
        print(f"  anchor: idle Qt process alongside, longest gap {idle_gap * 1000:.0f} ms")
    sampler.print_top()
    return {"longest_ms": longest, "p99_ms": p99, "over_100": float(over), "elapsed": elapsed}


if __name__ == "__main__":
    main()
