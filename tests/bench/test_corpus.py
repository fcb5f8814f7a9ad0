"""The benchmark corpus is deterministic, valid, cached, and lists its records correctly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from archiver_app.warc.reader import read_record_at
from tests.bench.corpus import build_corpus


def test_small_corpus_is_valid_deterministic_and_cached(tmp_path: Path) -> None:
    a = build_corpus(tmp_path / "a", total_bytes=3 << 20, seed=7)
    b = build_corpus(tmp_path / "b", total_bytes=3 << 20, seed=7)
    assert [p.read_bytes() for p in a.files] == [p.read_bytes() for p in b.files]
    assert 3 << 20 <= a.bytes < (3 << 20) + 3_000_000
    check = subprocess.run(
        [str(Path(sys.executable).with_name("warcio")), "check", *map(str, a.files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    entries = [json.loads(line) for line in a.entries_path.read_text().splitlines()]
    assert len(entries) == a.responses
    for entry in entries[:: max(1, len(entries) // 20)]:
        rec = read_record_at(a.folder / entry["file"], entry["offset"], entry["length"])
        assert rec.uri == entry["url"]
        assert rec.rec_type == entry["type"]
    # A revisit repeats its original's payload, so its HTTP headers must match it.
    by_url = {e["url"]: e for e in entries if e["type"] == "response"}
    revisits = [e for e in entries if e["type"] == "revisit"]
    assert revisits
    for entry in revisits:
        rec = read_record_at(a.folder / entry["file"], entry["offset"], entry["length"])
        original = by_url[rec.warc_header("WARC-Refers-To-Target-URI")]
        orig = read_record_at(a.folder / original["file"], original["offset"], original["length"])
        assert rec.http_header("Content-Length") == str(len(orig.payload))
        assert rec.http_header("Content-Type") == orig.http_header("Content-Type")
    mtime = a.files[0].stat().st_mtime_ns
    again = build_corpus(tmp_path / "a", total_bytes=3 << 20, seed=7)
    assert again.files[0].stat().st_mtime_ns == mtime  # reused, not rebuilt
