"""Crawl throughput: pages per minute at concurrency 1, 2 and 4 on the generated local site.

For each concurrency, a fresh library crawls the generated site (``--scope host --depth 2``,
real Chromium through the capture engine). Side by side, in the same run:

* anchor 1, ``capture_urls``: the capture engine alone on the same URL list with the same
  concurrency (no queue, no claims, no discovery): the ratio is the crawl machinery's cost;
* anchor 2, ``wget --recursive`` on the same site (plain HTTP, no browser), for scale.

When Chromium's headless shell is installed, the highest concurrency is crawled once more
with it (the browser users may choose for crawls), as a ratio to full Chromium's rate.

Run: ``.venv/bin/python tests/bench/bench_crawl.py [--sections 4 --per-section 15]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from unittest.mock import patch

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.common import report


def crawl_once(server_site: object, root: Path, concurrency: int) -> tuple[int, float, list[str]]:
    from archiver_app.crawl.api import page_list
    from archiver_app.crawl.inline import run_job_inline
    from archiver_app.crawl.jobs import create_job
    from archiver_app.crawl.rules import Rules
    from archiver_app.crawl.spec import Limits
    from archiver_app.library import Library

    site = server_site
    with Library.open(root) as lib:
        job = create_job(
            lib, [site.seed], scope="host", limits=Limits(max_depth=2),  # type: ignore[attr-defined]
            rules=Rules(ignore=("/private/",), attempts=1, concurrency=concurrency,
                        settle_seconds=0, autoscroll=False, page_timeout=30),
        )  # fmt: skip
        start = time.perf_counter()
        run = run_job_inline(lib, job, concurrency=concurrency)
        elapsed = time.perf_counter() - start
        done = [p.url for p in page_list(lib, job, states=["done"], limit=100_000)]
    return run.pages_done, elapsed, done


def capture_once(root: Path, urls: list[str], concurrency: int) -> tuple[int, float]:
    from archiver_app.capture.engine import PageRules, capture_urls
    from archiver_app.library import Library

    with Library.open(root) as lib:
        start = time.perf_counter()
        results = capture_urls(
            lib, urls, concurrency=concurrency,
            rules=PageRules(settle_seconds=0, autoscroll=False, page_timeout=30),
        )  # fmt: skip
        elapsed = time.perf_counter() - start
    return sum(r.ok for r in results), elapsed


def wget_once(seed: str, folder: Path) -> tuple[int, float] | None:
    if not shutil.which("wget"):
        return None
    start = time.perf_counter()
    subprocess.run(
        ["wget", "-q", "-r", "-l", "2", "-np", "-P", str(folder), "--reject-regex",
         "/private/|[?&]month=|[?&]sid=", seed],
        check=False, capture_output=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    pages = sum(1 for p in folder.rglob("*") if p.is_file())
    return pages, elapsed


def main(argv: Sequence[str] | None = None) -> dict[int, float]:
    from archiver_app.capture.browser import BROWSER_ENV, find_headless_shell, is_headless_shell
    from tests.helpers.crawl_site import generated_site
    from tests.helpers.webserver import LocalServer

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sections", type=int, default=4)
    parser.add_argument("--per-section", type=int, default=15)
    parser.add_argument("--concurrency", default="1,2,4")
    parser.add_argument("--no-anchor", action="store_true", help="skip the anchor runs")
    args = parser.parse_args(argv)
    levels = [int(x) for x in args.concurrency.split(",")]

    server = LocalServer().start()
    rates: dict[int, float] = {}
    rows: list[tuple[str, str]] = []
    try:
        site = generated_site(server, sections=args.sections, per_section=args.per_section)
        with tempfile.TemporaryDirectory(prefix="bench-crawl-") as tmp:
            base = Path(tmp)
            for c in levels:
                pages, secs, done = crawl_once(site, base / f"crawl-{c}", c)
                rates[c] = pages / secs * 60
                row = f"{pages} pages in {secs:.1f} s = {rates[c]:.0f} pages/min"
                if not args.no_anchor:
                    ok, asecs = capture_once(base / f"capture-{c}", done, c)
                    anchor = ok / asecs * 60
                    row += (
                        f"; capture_urls alone {anchor:.0f} pages/min; "
                        f"ratio crawl/capture {rates[c] / anchor:.2f}"
                    )
                rows.append((f"concurrency {c}", row))
            shell = find_headless_shell()
            if shell is not None and not is_headless_shell(Path(os.environ.get(BROWSER_ENV, ""))):
                c = levels[-1]
                with patch.dict(os.environ, {BROWSER_ENV: str(shell)}):
                    pages, secs, _done = crawl_once(site, base / f"shell-{c}", c)
                rate = pages / secs * 60
                rows.append(
                    (f"concurrency {c}, headless shell",
                     f"{pages} pages in {secs:.1f} s = {rate:.0f} pages/min; "
                     f"ratio to full Chromium {rate / rates[c]:.2f}")
                )  # fmt: skip
            if not args.no_anchor:
                got = wget_once(site.seed, base / "wget")
                if got:
                    rows.append(
                        ("wget -r -l 2 (no browser)",
                         f"{got[0]} files in {got[1]:.1f} s = {got[0] / got[1] * 60:.0f} /min")
                    )  # fmt: skip
    finally:
        server.stop()
    if len(levels) > 1:
        rows.append(
            ("speed-up", ", ".join(f"x{rates[c] / rates[levels[0]]:.2f} at {c}" for c in levels))
        )
    report("crawl throughput (real Chromium, generated local site)", rows)
    return rates


if __name__ == "__main__":
    main()
