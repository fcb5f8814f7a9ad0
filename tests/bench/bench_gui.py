"""The desktop app at a million captures: launch, scroll, search-as-you-type, stalls.

Run: .venv/bin/python tests/bench/bench_gui.py [--rows 1000000] [--library DIR]

Builds (once, cached in --library) a library of ``--rows`` snapshot rows with their titles
and URLs in the full-text index, then measures:

* launch: a fresh ``python`` process imports the app, opens the library, shows the main
  window; wall time from spawning it to the captures table's first paint with rows;
* scroll to end: the complete ordered id list streamed in, then End pressed and the last
  row painted; and random jumps through the table (page fetch + paint per jump);
* search-as-you-type: each keystroke of a few queries, from the key press to the first
  result rows painted (p50/p95), plus the time until a large result set is fully sorted;
* the longest event-loop stall, from a 10 ms ``QTimer`` heartbeat, while background work
  runs: id streaming and re-sorting a million rows, searches, and a stand-in for a crawl
  and a mirror run the way the app runs them (in a child process, see
  ``archiver_app.tasks.isolated``) that hashes 256 MB while appending job-log lines every
  50 ms until the end (``bench_gui_work.py`` runs the real crawl, mirror and migration).

Targets: first paint <= 1.5 s, keystroke-to-results p95 <= 150 ms, longest stall <= 100 ms.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

CHILD = r"""
import os, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
from PySide6.QtCore import QEvent, QObject, QSettings, QTimer
from PySide6.QtWidgets import QApplication
from archiver_app.gui.collector import GuiCollector
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
app = QApplication([])
collector = GuiCollector(app)  # as the app starts (gui/app.py)
collector.take_over()
lib = Library.open({lib!r}, create=False)
runner = OpRunner(app)
settings = QSettings({settings!r}, QSettings.Format.IniFormat)
window = MainWindow(lib, runner=runner, settings=settings)
class Watch(QObject):
    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Paint and window.model.rowCount() > 0:
            QTimer.singleShot(0, done)
        return False
def done():
    print("painted", time.perf_counter() - t0, window.model.rowCount(), flush=True)
    os._exit(0)
watch = Watch()
window.table.viewport().installEventFilter(watch)
window.show()
QTimer.singleShot(0, collector.settle)
app.exec()
"""

#: The launch's anchor: the same libraries imported (Qt widgets, QtWebEngine, SQLAlchemy's
#: ORM), the library's newest 100 rows read and painted in a bare ``QTableView``. What any
#: window of this stack costs on this machine, before the app's own code.
FLOOR_CHILD = r"""
import os, time
t0 = time.perf_counter()
from PySide6.QtCore import QAbstractTableModel, QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QTableView
from PySide6 import QtWebEngineCore, QtWebEngineWidgets
import sqlalchemy, sqlalchemy.orm
app = QApplication([])
engine = sqlalchemy.create_engine("sqlite:///" + {db!r})
with engine.connect() as conn:
    rows = conn.exec_driver_sql(
        "SELECT id, title, url FROM snapshots ORDER BY id DESC LIMIT 100").fetchall()
class Rows(QAbstractTableModel):
    def rowCount(self, parent=None): return len(rows)
    def columnCount(self, parent=None): return 3
    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole:
            return str(rows[index.row()][index.column()])
view = QTableView(); model = Rows(); view.setModel(model); view.resize(1280, 800)
class Watch(QObject):
    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Paint:
            QTimer.singleShot(0, done)
        return False
def done():
    print("painted", time.perf_counter() - t0, flush=True)
    os._exit(0)
watch = Watch()
view.viewport().installEventFilter(watch)
view.show()
app.exec()
"""


IDLE_HEARTBEAT = r"""
import sys, time
from PySide6.QtCore import QCoreApplication, QTimer, Qt
app = QCoreApplication([])
gaps, last = [], [time.perf_counter()]
def tick():
    now = time.perf_counter(); gaps.append(now - last[0]); last[0] = now
t = QTimer(); t.setTimerType(Qt.TimerType.PreciseTimer); t.setInterval(10); t.timeout.connect(tick)
t.start()
QTimer.singleShot(int(float(sys.argv[1]) * 1000), app.quit)
app.exec()
print("idle", max(gaps) - 0.010, flush=True)
"""


def start_idle_heartbeat(seconds: float) -> subprocess.Popen[str]:
    """The anchor for stalls: an idle Qt process's longest timer gap on this machine now."""
    return subprocess.Popen(
        [sys.executable, "-c", IDLE_HEARTBEAT, str(seconds)], stdout=subprocess.PIPE, text=True
    )


def sql_floor(db: Path, texts: list[str]) -> list[float]:
    """The anchor for search: the same two steps a keystroke runs, alone, per prefix."""
    from archiver_app.api.table import SnapshotQuery, compile_ids_sql
    from archiver_app.gui.snapshot_model import FIRST_CHUNK
    from archiver_app.search.stream import TableSearch

    search = TableSearch()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    out = []
    try:
        for text in texts:
            for i in range(1, len(text) + 1):
                typed = text[:i]
                start = time.perf_counter()
                newest = search.newest_matches(conn.cursor(), typed, FIRST_CHUNK + 1)
                sql, params = compile_ids_sql(
                    SnapshotQuery(search=typed), search, within=newest[:FIRST_CHUNK]
                )
                conn.execute(sql, params).fetchall()
                out.append(time.perf_counter() - start)
    finally:
        conn.close()
    return out


def background_load(library: Any, job_id: int, hash_mb: int, *, progress: Any, cancel: Any) -> str:
    """The stand-in for a crawl and a mirror (runs in a child process): hashes ``hash_mb``
    MB while a thread appends 20 job-log lines every 50 ms, until cancelled."""
    from archiver_app.store.models import JobLog
    from archiver_app.tasks import Cancelled

    def writer() -> None:
        n = 0
        while not cancel.wait(0.05):
            with library.write() as s:
                s.add_all(JobLog(job_id=job_id, message=f"fetched page {n + i}") for i in range(20))
            n += 20

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    block = os.urandom(1 << 20)
    digest = hashlib.sha256()
    for _ in range(hash_mb):
        if cancel.cancelled:
            break
        digest.update(bytes(block))  # a fresh buffer per block, as reading a file gives
    thread.join()
    raise Cancelled


def build_library(root: Path, rows: int) -> None:
    from archiver_app.library import Library
    from tests.helpers.factories import bulk_snapshots

    marker = root / f".bench-gui-{rows}"
    if marker.exists():
        return
    start = time.perf_counter()
    with Library.open(root) as lib:
        bulk_snapshots(lib, rows)
        conn = sqlite3.connect(lib.db_path)
        conn.execute(
            "INSERT INTO snapshot_fts(rowid, title, url, body, tags) "
            "SELECT id, title, url, '', '' FROM snapshots"
        )
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    marker.touch()
    print(f"built {rows:,} rows + full-text index in {time.perf_counter() - start:.0f} s")


def measure_launch(root: Path, repeat: int) -> tuple[list[float], list[float]]:
    """Wall times from spawn to the first painted table: the app's, and its anchor's
    (:data:`FLOOR_CHILD`), run alternately so both see the same machine."""
    import compileall

    # An installed app ships byte-compiled; this worktree runs with PYTHONDONTWRITEBYTECODE.
    compileall.compile_dir(str(ROOT / "archiver_app"), quiet=1)
    times: list[float] = []
    floors: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        code = CHILD.format(root=str(ROOT), lib=str(root), settings=f"{tmp}/s.ini")
        floor = FLOOR_CHILD.format(db=str(root / "library.db"))
        for _ in range(repeat):
            times.append(_painted_after(code))
            floors.append(_painted_after(floor))
    return times, floors


def _painted_after(code: str) -> float:
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    wall = time.perf_counter() - start
    if not any(x.startswith("painted") for x in out.stdout.splitlines()):
        raise RuntimeError(f"launch child failed: {out.stderr[-2000:]}")
    return wall


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--library", type=Path, default=None)
    parser.add_argument("--launches", type=int, default=3)
    parser.add_argument("--hash-mb", type=int, default=256)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--diagnose", action="store_true", help="print where the GUI thread stalls")
    parser.add_argument("--jumps", type=int, default=60)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--queries", default="climate riv,museum,site42")
    args = parser.parse_args(argv)
    tmp = None
    if args.library is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench-gui-")
        args.library = Path(tmp.name) / "lib"
    build_library(args.library, args.rows)
    was_collecting = gc.isenabled()
    try:
        return run(args)
    finally:
        gc.unfreeze()  # leave the process as it was (the smoke test runs in pytest's)
        if was_collecting:
            gc.enable()
        if tmp is not None:
            tmp.cleanup()


def run(args: argparse.Namespace) -> dict[str, float]:
    from PySide6.QtCore import QEvent, QEventLoop, QObject, QSettings, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from archiver_app.gui.collector import GuiCollector
    from archiver_app.gui.main_window import MainWindow
    from archiver_app.gui.ops import BackgroundOp, OpRunner
    from archiver_app.library import Library
    from archiver_app.store.models import Job
    from archiver_app.tasks.isolated import run_isolated
    from tests.bench.common import StallSampler, report

    launches, floors = measure_launch(args.library, args.launches)
    if args.verbose:
        print("launches", [round(x, 3) for x in launches], flush=True)

    # The anchor starts before this process holds a million ids: forking it later, from
    # the GUI thread, would stall the very loop it is the anchor for.
    idle = start_idle_heartbeat(args.idle_seconds)
    app = QApplication.instance() or QApplication([])
    collector = GuiCollector(app)  # as the app's: on the GUI thread only, from the start
    collector.take_over()
    lib = Library.open(args.library, create=False)
    runner = OpRunner(app)
    settings_dir = tempfile.TemporaryDirectory()
    settings = QSettings(f"{settings_dir.name}/s.ini", QSettings.Format.IniFormat)
    window = MainWindow(lib, runner=runner, settings=settings)
    window.resize(1280, 800)
    # The jobs panel is open from the start (as a saved layout restores it), so its live
    # log and counters refresh while the background work below writes to the job.
    window.jobs_dock.show()
    window.show()
    collector.settle()  # as the app does once its window is up
    model, table = window.model, window.table

    paints: list[float] = []

    class PaintWatch(QObject):
        def eventFilter(self, obj: QObject, ev: QEvent) -> bool:
            if ev.type() == QEvent.Type.Paint:
                paints.append(time.perf_counter())
            return False

    watch = PaintWatch()
    table.viewport().installEventFilter(watch)
    # Launch is measured above, in a fresh process; stalls are measured once the window
    # has painted its first frame, while the background work below runs.
    end_wait = time.perf_counter() + 60
    while not paints and time.perf_counter() < end_wait:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 5)

    # ---- heartbeat: the longest gap between 10 ms ticks, from here to the end
    gaps: list[float] = []
    last = [time.perf_counter()]

    big_gaps: list[tuple[float, float]] = []

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        if gaps[-1] > 0.08:
            big_gaps.append((now, gaps[-1]))
        last[0] = now

    sampler = StallSampler(last)
    if args.diagnose:
        sampler.start()
    heart = QTimer()
    heart.setTimerType(Qt.TimerType.PreciseTimer)
    heart.setInterval(10)
    heart.timeout.connect(tick)
    heart.start()

    def spin_until(cond, timeout: float = 120.0, what: str = "") -> None:  # type: ignore[no-untyped-def]
        """Run the event loop (idle while there is nothing to do, as the app's own loop
        is) until ``cond()``, checked every 2 ms: a loop of processEvents() calls would
        keep a core and the GIL busy and slow down what is measured."""
        if cond():
            return
        end = time.perf_counter() + timeout
        loop = QEventLoop()
        poll = QTimer()
        poll.setTimerType(Qt.TimerType.PreciseTimer)
        poll.setInterval(2)

        def check() -> None:
            if cond() or time.perf_counter() > end:
                loop.quit()

        poll.timeout.connect(check)
        poll.start()
        loop.exec()
        poll.stop()
        if not cond():
            raise TimeoutError(f"benchmark condition not reached: {what}")

    chunks: list[float] = []
    model.first_chunk.connect(lambda: chunks.append(time.perf_counter()))

    def painted_after(t: float) -> bool:
        return bool(paints) and paints[-1] > t

    # ---- background load: hashing and a job-log writer, run as the app runs such work
    with lib.write() as s:
        job = Job(collection_id=1, name="bench", status="running")
        s.add(job)
        s.flush()
        job_id = job.id
    # imported by its package name so the child process can import it too (not __main__)
    from tests.bench.bench_gui import background_load as stand_in

    load = BackgroundOp(
        runner,
        lambda p, c: run_isolated(
            stand_in,
            lib,
            job_id,
            args.hash_mb,
            progress=p,
            cancel=c,
        ),
        label="background load",
    ).run_in_background()

    def step(text: str) -> None:
        if args.verbose:
            print(f"[{time.perf_counter() - bench_start:6.1f}s] {text}", flush=True)

    bench_start = time.perf_counter()
    step("launched; streaming ids")
    # ---- all ids streamed, then End
    start = time.perf_counter()
    spin_until(lambda: not model.loading)
    all_ids = time.perf_counter() - start
    rows = model.rowCount()
    table.setFocus()
    t = time.perf_counter()
    QTest.keyClick(table, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    spin_until(lambda: painted_after(t))
    end_press = time.perf_counter() - t
    last_visible = table.rowAt(table.viewport().height() - 2)

    step("scrolled to end")
    # ---- random jumps (page fetch + paint each)
    import random

    rng = random.Random(7)
    jumps = []
    for _ in range(args.jumps):
        target = rng.randrange(rows)
        t = time.perf_counter()
        table.scrollTo(model.index(target, 0))
        spin_until(lambda t=t: painted_after(t))
        jumps.append(time.perf_counter() - t)

    step("jumps done")
    # ---- search as you type
    keystrokes: list[float] = []
    full_sorts: list[float] = []
    window.search.setFocus()
    for text in args.queries.split(","):
        window.search.clear()
        spin_until(lambda: window.model.query.search == "" and not model.loading)
        for ch in text:
            expected = window.search.text() + ch
            t = time.perf_counter()
            QTest.keyClick(window.search, ch)
            spin_until(
                lambda e=expected, t=t: (
                    model.query.search == e
                    and bool(chunks)
                    and chunks[-1] > t
                    and painted_after(chunks[-1])
                )
            )
            keystrokes.append(time.perf_counter() - t)
            step(f"key {expected!r}: {keystrokes[-1] * 1000:.0f} ms, {model.rowCount()} rows")
        if model.partial:  # the complete, sorted result of the whole word
            spin_until(lambda: not model.loading, what="full search result")
            full_sorts.append(time.perf_counter() - t)
    window.search.clear()
    QTest.keyClick(window.search, Qt.Key.Key_Escape)

    step("search done")
    # ---- re-sort a million rows by title while everything else runs
    t = time.perf_counter()
    model.sort(1, Qt.SortOrder.AscendingOrder)
    spin_until(lambda: not model.loading and model.query.sort == "title")
    sort_title = time.perf_counter() - t
    step("sorted by title")
    load.cancel()
    spin_until(lambda: not runner.busy(), timeout=300, what="background work to end")
    with lib.write() as s:
        s.get(Job, job_id).status = "finished"  # type: ignore[union-attr]
    heart.stop()
    if args.diagnose:
        sampler.stop()
        sampler.print_top()
    stall = max(gaps) - 0.010 if gaps else 0.0
    if args.verbose:
        for at, gap in big_gaps:
            print(f"  gap {gap * 1000:.0f} ms ending at {at - bench_start:.1f}s")
    idle_out, _ = idle.communicate(timeout=120)
    idle_stall = float(idle_out.split()[-1]) if idle_out.strip() else float("nan")
    floor = sql_floor(args.library / "library.db", args.queries.split(","))
    worst = sorted(gaps, reverse=True)[:5]
    window.request_quit()
    runner.shutdown()
    lib.close()
    collector.stop()
    settings_dir.cleanup()

    figures = {
        "launch_median": statistics.median(launches),
        "launch_floor": statistics.median(floors),
        "all_ids": all_ids,
        "end_press": end_press,
        "jump_p95": pct(jumps, 95),
        "key_p50": pct(keystrokes, 50),
        "key_p95": pct(keystrokes, 95),
        "key_max": max(keystrokes),
        "stall": stall,
        "sort_title": sort_title,
        "idle_stall": idle_stall,
        "sql_p95": pct(floor, 95),
    }
    launch_ratio = figures["launch_median"] / figures["launch_floor"]
    report(
        f"desktop app with {rows:,} captures (QT_QPA_PLATFORM={os.environ['QT_QPA_PLATFORM']})",
        [
            (
                "launch to first painted table",
                f"median {figures['launch_median'] * 1000:.0f} ms of {len(launches)} "
                f"(runs: {', '.join(f'{x * 1000:.0f}' for x in launches)}) (target <= 1500)",
            ),
            (
                "  anchor: a bare Qt table of the same rows",
                f"median {figures['launch_floor'] * 1000:.0f} ms (the same imports, 100 rows "
                f"painted); ratio app/anchor {launch_ratio:.2f}",
            ),
            ("all ids streamed in (scroll range complete)", f"{all_ids * 1000:.0f} ms"),
            (
                "End pressed to last row painted",
                f"{end_press * 1000:.1f} ms (row {last_visible:,})",
            ),
            (
                "random jump, page fetch + paint",
                f"p95 {figures['jump_p95'] * 1000:.1f} ms of {len(jumps)}",
            ),
            (
                "keystroke to results painted",
                f"p50 {figures['key_p50'] * 1000:.0f} ms, p95 {figures['key_p95'] * 1000:.0f} ms, "
                f"max {figures['key_max'] * 1000:.0f} ms of {len(keystrokes)} (target p95 <= 150)",
            ),
            (
                "  anchor: the same SQL alone, per keystroke",
                f"p50 {pct(floor, 50) * 1000:.0f} ms, p95 {figures['sql_p95'] * 1000:.0f} ms; "
                f"ratio app/SQL p95 {figures['key_p95'] / max(figures['sql_p95'], 1e-6):.2f}",
            ),
            (
                "large result sets fully sorted",
                ", ".join(f"{x * 1000:.0f}" for x in full_sorts) + " ms" if full_sorts else "none",
            ),
            ("re-sort all rows by title", f"{sort_title * 1000:.0f} ms (background)"),
            (
                "longest event-loop stall",
                f"{stall * 1000:.0f} ms over 10 ms ticks "
                f"(worst gaps {', '.join(f'{g * 1000:.0f}' for g in worst)}) (target <= 100)",
            ),
            (
                f"  anchor: idle Qt process, {args.idle_seconds:.0f} s alongside",
                f"{idle_stall * 1000:.0f} ms longest gap (machine noise); "
                f"ratio {stall / max(idle_stall, 1e-6):.1f}",
            ),
        ],
    )
    return figures


if __name__ == "__main__":
    main()
