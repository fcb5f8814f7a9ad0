"""``archiver capture`` as a user runs it: a real process, real Chromium, the local site."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.testsite import LocalSite

ARCHIVER = Path(sys.executable).with_name("archiver")

pytestmark = pytest.mark.slow


def test_capture_reads_stdin_reports_each_page_and_fails_after_the_rest(
    tmp_path: Path, test_site: LocalSite
) -> None:
    lib = tmp_path / "lib"
    stdin = f"{test_site.url('/plain.txt')}\n# a comment\n\nftp://example.org/x\n"
    result = subprocess.run(
        [str(ARCHIVER), "--library", str(lib), "capture", test_site.page_url(3), "-",
         "--collection", "cli", "--tag", "t1", "--timeout", "30"],
        input=stdin, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("[")]
    assert len(lines) == 3 and all(f"/{3}]" in line for line in lines)
    assert sum(" ok 200 " in line for line in lines) == 2
    assert "unsupported URL scheme 'ftp'" in result.stderr
    assert "captured 2 of 3 page(s) into collection 'cli'" in result.stdout
    with sqlite3.connect(lib / "library.db") as db:
        rows = db.execute("SELECT url, state FROM snapshots ORDER BY url").fetchall()
        tags = db.execute("SELECT name FROM tags").fetchall()
    assert rows == [(test_site.page_url(3), "complete"), (test_site.url("/plain.txt"), "complete")]
    assert tags == [("t1",)]


def test_capture_without_urls_is_an_input_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(ARCHIVER), "--library", str(tmp_path / "lib"), "capture", "-"],
        input="\n", capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip() == "archiver: error: no URLs to capture"
