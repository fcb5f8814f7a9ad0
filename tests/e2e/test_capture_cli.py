"""``archiver capture`` as a user runs it: a real process, real Chromium, the local site."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from archiver_app.capture.persist import mark_interrupted
from archiver_app.library import Library
from archiver_app.replay.replayer import Replayer
from archiver_app.store.models import Snapshot, SnapshotState
from tests.helpers.testsite import LocalSite
from tests.helpers.warcs import read_warc, warcio_check

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
    assert "captured 2 of 3 pages into collection 'cli'" in result.stdout
    with sqlite3.connect(lib / "library.db") as db:
        rows = db.execute("SELECT url, state FROM snapshots ORDER BY url").fetchall()
        tags = db.execute("SELECT name FROM tags").fetchall()
        ids = dict(db.execute("SELECT url, id FROM snapshots").fetchall())
    assert rows == [(test_site.page_url(3), "complete"), (test_site.url("/plain.txt"), "complete")]
    # each line names the capture's id, which cite, diff and delete take
    assert {line.split()[-1] for line in lines if " ok 200 " in line} == {
        f"(#{i})" for i in ids.values()
    }
    assert tags == [("t1",)]


def test_a_deleted_newest_capture_s_number_is_not_printed_again(
    tmp_path: Path, test_site: LocalSite
) -> None:
    """A researcher's walkthrough: delete the newest capture, capture two pages: they were
    numbered from the deleted one's number on, so `archiver cite N` cited another page."""
    lib = tmp_path / "lib"

    def archiver(*args: str) -> str:
        result = subprocess.run(
            [str(ARCHIVER), "--library", str(lib), *args],
            capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def numbers(out: str) -> list[int]:
        return [int(n) for n in re.findall(r" ok .*\(#(\d+)\)$", out, re.MULTILINE)]

    first = numbers(archiver("capture", test_site.page_url(1), test_site.page_url(2)))
    archiver("delete", str(max(first)), "--yes")
    again = numbers(archiver("capture", test_site.page_url(3), test_site.page_url(4)))
    assert len(first) == len(again) == 2 and min(again) > max(first), (first, again)


def test_capture_without_urls_is_an_input_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(ARCHIVER), "--library", str(tmp_path / "lib"), "capture", "-"],
        input="\n", capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip() == "archiver: error: no URLs to capture"


def test_a_killed_capture_leaves_a_valid_part_file_and_a_pending_row(
    tmp_path: Path, test_site: LocalSite
) -> None:
    lib = tmp_path / "lib"
    main_url = test_site.url("/slow.html")
    proc = subprocess.Popen(
        [str(ARCHIVER), "--library", str(lib), "capture", main_url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        part = None
        # wait until the page's first responses are on disk and the page hangs on /hang
        while time.monotonic() < deadline:
            parts = list(lib.glob("collections/*/*/*/*/capture.warc.gz.part"))
            if parts and test_site.main.requested("/hang"):
                try:
                    recs = read_warc(parts[0])
                except Exception:  # the last record is being written right now
                    recs = []
                # the main document's record may be written after a subresource's: wait
                # for both, so the kill always finds records of each on disk
                if any(r.uri.endswith("/img/a.png") and r.type == "request" for r in recs) and (
                    any(r.uri == main_url and r.type == "response" for r in recs)
                ):
                    part = parts[0]
                    break
            time.sleep(0.1)
        assert part is not None, "the capture never got going"
    finally:
        proc.kill()
        proc.wait(30)
    assert warcio_check(part).returncode == 0
    assert not part.with_name("capture.warc.gz").exists()
    kinds = [(r.type, r.uri) for r in read_warc(part)]
    assert ("response", main_url) in kinds
    with sqlite3.connect(lib / "library.db") as db:
        assert db.execute("SELECT state FROM snapshots").fetchall() == [("pending",)]
        assert db.execute("SELECT count(*) FROM files").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM records").fetchone() == (0,)

    # The next capture run finds it: what was recorded becomes a replayable snapshot.
    part_bytes = part.read_bytes()
    with Library.open(lib) as library:
        (marked,) = mark_interrupted(library, older_than=timedelta(0))
        with library.session() as s:
            snap = s.get(Snapshot, marked)
            assert snap is not None and snap.state == SnapshotState.COMPLETE
            assert snap.capture_fidelity == "fallback"
            assert snap.provenance["provenance"] == "interrupted"
            assert snap.provenance["salvaged"]["records"] >= 3
        served = Replayer.for_library(library).serve(main_url)
        assert served.status == 200 and b"<html" in served.body.lower()
    warc = part.with_name("capture.warc.gz")
    assert warcio_check(warc).returncode == 0
    assert part_bytes.startswith(warc.read_bytes())  # a verified prefix of what was written
    assert part.read_bytes() == part_bytes  # the part file itself is untouched
    with sqlite3.connect(lib / "library.db") as db:
        assert db.execute("SELECT count(*) FROM files").fetchone() == (2,)  # WARC + index.json
        assert db.execute("SELECT count(*) FROM records").fetchone()[0] >= 3
