"""Capture throughput: pages per minute for N test-site pages at several concurrencies,
and the peak memory of the whole process tree (Python + Playwright driver + Chromium).

Run: .venv/bin/python tests/bench/bench_capture.py [--pages 50] [--concurrency 1 2 4]

Anchor, run side by side: the same pages loaded by bare Playwright (goto + load, no
recording, no files, no database) at the same concurrency, so the ratio shows what
recording costs. Targets: >= 30 pages/min, < 1.5 GB peak.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from archiver_app.capture.browser import launch_options, require_browser
from archiver_app.capture.engine import Capturer, PageRules
from archiver_app.library import Library
from tests.bench.common import report
from tests.helpers.testsite import LocalSite, start_site

RULES = PageRules(page_timeout=60, settle_seconds=0.2)


def _pss(entry: Path) -> int:
    """Proportional set size of one process (shared pages divided among sharers)."""
    try:
        for line in (entry / "smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_rss(root: int) -> int:
    """Memory of ``root`` and all its descendants, in bytes: the sum of their PSS (Linux
    /proc), so pages Chromium's processes share are counted once, not once per process."""
    parents: dict[int, int] = {}
    rss: dict[int, Path] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(stat.rsplit(")", 1)[1].split()[1])
        rss[pid] = entry
    total = 0
    for pid, entry in rss.items():
        p = pid
        while p > 1 and p != root:
            p = parents.get(p, 0)
        if p == root:
            total += _pss(entry)
    return total


class PeakMemory:
    """Samples the process tree's RSS every ``interval`` seconds in a thread."""

    def __init__(self, interval: float = 0.25) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._interval = interval
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(os.getpid()))
            self._stop.wait(self._interval)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, tree_rss(os.getpid()))


@dataclass
class Run:
    label: str
    pages: int
    ok: int
    seconds: float
    peak: int

    @property
    def per_minute(self) -> float:
        return self.pages / self.seconds * 60


async def _capture(site: LocalSite, root: Path, pages: int, concurrency: int) -> int:
    with Library.open(root) as lib:
        async with Capturer(lib, concurrency=concurrency) as cap:
            results = await asyncio.gather(
                *(cap.capture(site.page_url(n), rules=RULES) for n in range(pages))
            )
    return sum(r.ok for r in results)


async def _bare(site: LocalSite, pages: int, concurrency: int) -> int:
    from playwright.async_api import async_playwright

    sem = asyncio.Semaphore(concurrency)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(**launch_options(require_browser()))

        async def one(n: int) -> bool:
            async with sem:
                context = await browser.new_context()
                page = await context.new_page()
                resp = await page.goto(site.page_url(n), wait_until="load")
                await context.close()
                return bool(resp and resp.ok)

        done = await asyncio.gather(*(one(n) for n in range(pages)))
        await browser.close()
    return sum(done)


def measure(label: str, pages: int, work: object) -> Run:
    with PeakMemory() as mem:
        start = time.perf_counter()
        ok = asyncio.run(work)  # type: ignore[arg-type]
        seconds = time.perf_counter() - start
    return Run(label, pages, ok, seconds, mem.peak)


def main(argv: list[str] | None = None) -> list[Run]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--no-anchor", action="store_true")
    args = parser.parse_args(argv)
    runs: list[Run] = []
    site = start_site()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-capture-") as tmp:
            for level in args.concurrency:
                root = Path(tmp) / f"c{level}"
                runs.append(
                    measure(
                        f"archiver c={level}", args.pages, _capture(site, root, args.pages, level)
                    )
                )
                if not args.no_anchor:
                    runs.append(
                        measure(
                            f"bare playwright c={level}", args.pages, _bare(site, args.pages, level)
                        )
                    )
    finally:
        site.close()
    rows = [
        (
            r.label,
            f"{r.per_minute:6.1f} pages/min  ({r.ok}/{r.pages} ok, {r.seconds:.1f} s, "
            f"peak tree PSS {r.peak / 2**20:.0f} MiB)",
        )
        for r in runs
    ]
    ours = {r.label.split("=")[1]: r for r in runs if r.label.startswith("archiver")}
    bare = {r.label.split("=")[1]: r for r in runs if r.label.startswith("bare")}
    for level, r in ours.items():
        if level in bare:
            rows.append(
                (f"ratio archiver/bare c={level}", f"{r.seconds / bare[level].seconds:.2f}x time")
            )
    report(f"capture: {args.pages} test-site pages", rows)
    return runs


if __name__ == "__main__":
    main()
