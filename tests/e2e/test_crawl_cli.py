"""``archiver crawl``, ``jobs``, ``job ...`` as a user runs them (real processes, Chromium)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from archiver_app.units import human_bytes
from tests.helpers.webserver import LocalServer

ARCHIVER = Path(sys.executable).with_name("archiver")


def archiver(lib: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ARCHIVER), "--library", str(lib), *args],
        capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def test_bad_crawl_input_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    r = archiver(lib, "crawl", "http://example.org/", "--ignore", "a(b", "--queue")
    assert r.returncode == 2
    assert r.stderr.strip() == (
        "archiver: error: invalid ignore pattern 'a(b' at position 1: "
        "missing ), unterminated subpattern"
    )
    r = archiver(lib, "crawl", "http://example.org/blog", "--scope", "custom", "--include",
                 "/wiki/", "--queue")  # fmt: skip
    assert r.returncode == 2 and "outside the scope it defines" in r.stderr
    r = archiver(lib, "crawl", "http://example.org/", "--max-bytes", "lots", "--queue")
    assert r.returncode == 2 and "cannot read the size 'lots'" in r.stderr
    r = archiver(lib, "job", "show", "42")
    assert r.returncode == 2 and r.stderr.strip() == "archiver: error: there is no job 42"


@pytest.mark.slow
def test_crawl_then_inspect_and_control_the_job(tmp_path: Path) -> None:
    server = LocalServer().start()
    try:
        page = "<html><head><title>{0}</title></head><body>{1}</body></html>"
        server.add_static("/", page.format("home", '<a href="/a">a</a> <a href="/b">b</a> '
                                                   '<a href="/skip/me">s</a>'))  # fmt: skip
        server.add_static("/a", page.format("a", '<a href="/a/deeper">deeper</a>'))
        server.add_static("/b", page.format("b", ""))
        lib = tmp_path / "lib"
        r = archiver(lib, "crawl", server.url("/"), "--depth", "1", "--ignore", "/skip/",
                     "--timeout", "30", "--concurrency", "2", timeout=300)  # fmt: skip
        assert r.returncode == 0, r.stdout + r.stderr
        assert "job 1 indexed: 3 captured, 0 failed, 2 excluded" in r.stdout
        assert sum(" ok 200 " in line for line in r.stdout.splitlines()) == 3
        assert (lib / "jobs" / "1" / "coverage.md").exists()

        r = archiver(lib, "jobs", "--json")
        jobs = json.loads(r.stdout)
        assert [(j["id"], j["status"], j["items_downloaded"]) for j in jobs] == [(1, "indexed", 3)]
        r = archiver(lib, "jobs")  # its data in the units the Jobs panel gives (decimal)
        size = human_bytes(jobs[0]["bytes_downloaded"])
        assert size.endswith(" KB") and f" {size} " in r.stdout.splitlines()[1], r.stdout
        r = archiver(lib, "job", "show", "1")
        assert "3 done" in r.stdout and "2 skipped" in r.stdout and "indexed: 3 pages" in r.stdout

        r = archiver(lib, "crawl", server.url("/"), "--queue", "--name", "later")
        assert r.returncode == 0 and "job 2 queued" in r.stdout
        r = archiver(lib, "job", "rules", "2", "--ignore", "/b$", "--concurrency", "3")
        assert r.returncode == 0 and "rules v2 saved" in r.stdout
        r = archiver(lib, "job", "rules", "2", "--ignore", "[")
        assert r.returncode == 2 and "at position 0" in r.stderr
        assert archiver(lib, "job", "pause", "2").returncode == 0
        r = archiver(lib, "job", "pause", "2")
        assert (
            r.returncode == 2 and "only queued, retryable, running jobs can be paused" in r.stderr
        )
        r = archiver(lib, "job", "resume", "2")  # and how it runs when no worker does
        assert r.stdout.splitlines() == [
            "job 2 resumed: queued for a worker",
            "without a worker running: archiver worker --once --job 2",
        ]
        assert archiver(lib, "job", "pause", "2").returncode == 0
        assert archiver(lib, "job", "abort", "2").returncode == 0
        r = archiver(lib, "job", "log", "2")
        assert "rules v2" in r.stdout and "aborted" in r.stdout
        r = archiver(lib, "jobs")
        assert "aborted" in r.stdout and "later" in r.stdout
    finally:
        server.stop()
