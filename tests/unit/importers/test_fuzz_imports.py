"""Hundreds of mutated WARC (gzip and plain) and WACZ files, imported one after the other
into one library: no traceback, no hang, no intact record lost, earlier data unchanged.

The mutations come from a seeded generator (the same files on every run): bit flips,
truncations, inserted and deleted bytes, duplicated gzip members or records, headers with
bad values. A record of the original is *intact* when the mutation left every byte of it
alone (it may have moved); each intact record must be indexed at its new offset.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import signal
import sqlite3
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import pytest

from archiver_app.errors import ArchiverError
from archiver_app.importers.outcome import FileOutcome, OutcomeState
from archiver_app.importers.wacz import import_wacz_file
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.warc.scan import scan_records
from tests.helpers.warcs import Resp, html_page, write_warc

SEED = 20261125
#: Mutated files of each kind.
WARCS_GZ = 90
WARCS_PLAIN = 90
WACZS = 40
#: Seconds one import may take before it counts as a hang (they take about 0.1 s).
PER_FILE = 20


@dataclass
class Mutant:
    """A mutated copy of an original: its bytes and where each intact record now starts."""

    name: str
    data: bytes
    what: str
    moved: dict[int, int] = field(default_factory=dict)  # original offset -> new offset
    urls: dict[int, str] = field(default_factory=dict)  # original offset -> its URL


def _site(host: str, n: int) -> list[Resp]:
    out = []
    for i in range(n):
        out.append(
            Resp(f"https://{host}/p{i}", html_page(f"{host} {i}", f"word{i} river " * (i + 1)))
        )
        out.append(Resp(f"https://{host}/i{i}.png", bytes([i]) * (50 + 40 * i), mime="image/png"))
    return out


def _mutate(rng: random.Random, data: bytes, spans: list[tuple[int, int]], gz: bool) -> Mutant:
    """One random mutation of ``data`` (records at ``spans``) and the intact records."""
    kind = rng.choice(["flip", "truncate", "insert", "delete", "duplicate", "header"])
    size = len(data)
    buf = bytearray(data)
    if kind == "flip":
        hits = sorted(rng.randrange(size) for _ in range(rng.randint(1, 4)))
        for at in hits:
            buf[at] ^= 1 << rng.randrange(8)
        touched = [(at, at + 1) for at in hits]
        return Mutant("", bytes(buf), f"flip {hits}", _moved(spans, touched, 0, size))
    if kind == "truncate":
        cut = rng.randrange(1, size)
        return Mutant("", data[:cut], f"truncate {cut}", _moved(spans, [(cut, size)], 0, size))
    if kind == "insert":
        at = rng.choice([rng.randrange(size), *(o for o, _ in spans)])  # often at a boundary
        junk = rng.choice([b"\r\n", b"WARC/1.1\r\n", b"\x1f\x8b\x08", rng.randbytes(40)])
        return Mutant(
            "",
            data[:at] + junk + data[at:],
            f"insert {len(junk)} at {at}",
            _moved(spans, [(at, at)], len(junk), at),
        )
    if kind == "delete":
        at = rng.randrange(size)
        end = min(size, at + rng.randint(1, 300))
        return Mutant(
            "",
            data[:at] + data[end:],
            f"delete {at}:{end}",
            _moved(spans, [(at, end)], at - end, end),
        )
    if kind == "duplicate":  # a gzip member (or a plain record) written twice
        i = rng.randrange(len(spans))
        off, length = spans[i]
        end = off + length if gz else min(size, off + length + 4)
        copy = data[off:end]
        moved = {o: o for o, _ in spans}
        moved.update({o: o + len(copy) for o, _ in spans if o >= end})
        return Mutant("", data[:end] + copy + data[end:], f"duplicate record {i}", moved)
    # a header with a bad value (plain only: inside gzip the bytes are compressed)
    if gz:
        return _mutate(rng, data, spans, gz)
    i = rng.randrange(len(spans))
    off, length = spans[i]
    block = data[off : off + length]
    name = rng.choice([b"Content-Length", b"WARC-Type", b"WARC-Date", b"WARC-Target-URI"])
    start = block.find(name + b": ")
    if start < 0:
        return _mutate(rng, data, spans, gz)
    start += len(name) + 2
    end = block.find(b"\r\n", start)
    value = rng.choice([b"", b"-1", b"99999999999", b"abc", rng.randbytes(8), b"0"])
    new = block[:start] + value + block[end:]
    delta = len(new) - len(block)
    return Mutant(
        "",
        data[:off] + new + data[off + length :],
        f"header {name.decode()}={value!r} in record {i}",
        _moved(spans, [(off, off + length)], delta, off + length),
    )


def _moved(
    spans: list[tuple[int, int]], touched: list[tuple[int, int]], shift: int, shift_from: int
) -> dict[int, int]:
    """Intact records (no touched byte inside them; an insertion point strictly inside
    touches) and their new offsets (``shift`` for those at or after ``shift_from``)."""
    out = {}
    for off, length in spans:
        end = off + length
        if any((a < end and b > off) or (a == b and off < a < end) for a, b in touched):
            continue
        out[off] = off + shift if off >= shift_from else off
    return out


def _wacz(warc: bytes, *, name: str = "archive/data.warc.gz") -> bytes:
    import io

    pages = b'{"format": "json-pages-1.0"}\n'
    entries = {name: warc, "pages/pages.jsonl": pages}
    resources = [
        {"path": n, "bytes": len(d), "hash": "sha256:" + hashlib.sha256(d).hexdigest()}
        for n, d in entries.items()
    ]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for n, d in entries.items():
            zf.writestr(n, d, zipfile.ZIP_STORED)
        zf.writestr("datapackage.json", json.dumps({"resources": resources}))
    return out.getvalue()


class _Hang(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float, what: str) -> Iterator[None]:
    def alarm(_sig: int, _frame: FrameType | None) -> None:
        raise _Hang(f"{what} took over {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _indexed(lib: Library, file_rel: str) -> dict[str, int]:
    """URL -> offset of the records indexed from that file (each URL is once in a base)."""
    conn = sqlite3.connect(lib.db_path)
    try:
        rows = conn.execute(
            'SELECT r.url, r."offset" FROM records r JOIN files f ON f.id = r.file_id '
            "WHERE f.path = ?",
            (file_rel,),
        ).fetchall()
    finally:
        conn.close()
    return {str(u): int(o) for u, o in rows}


def _snapshot_of_library(lib: Library) -> object:
    conn = sqlite3.connect(lib.db_path)
    try:
        return (
            conn.execute('SELECT url, ts, "offset", length, digest FROM records').fetchall(),
            conn.execute("SELECT uid, url, title, warc_file FROM snapshots").fetchall(),
            conn.execute("SELECT path, sha256 FROM files").fetchall(),
        )
    finally:
        conn.close()


def _import(lib: Library, path: Path) -> FileOutcome | None:
    """The outcome, or None for an ArchiverError (a clear refusal, no traceback)."""
    with _time_limit(PER_FILE, path.name):
        try:
            if path.suffix == ".wacz":
                return import_wacz_file(lib, path)
            return import_warc_file(lib, path)
        except ArchiverError:
            return None


def _warc_mutants(rng: random.Random, base: Path, count: int, gz: bool) -> Iterator[Mutant]:
    data = base.read_bytes()
    records = list(scan_records(base))
    spans = [(r.offset, r.length) for r in records]
    for n in range(count):
        m = _mutate(rng, data, spans, gz)
        m.urls = {r.offset: r.url for r in records}
        m.name = f"m{n:03d}-{'gz' if gz else 'plain'}.warc{'.gz' if gz else ''}"
        yield m


@pytest.mark.timeout(600)
def test_mutated_archives_import_without_traceback_hang_or_loss(
    library: Library, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    earlier = import_warc_file(
        library, write_warc(tmp_path / "earlier.warc.gz", _site("earlier.example", 3))
    )
    assert earlier.state is OutcomeState.IMPORTED
    base_gz = write_warc(tmp_path / "base.warc.gz", _site("fuzz.example", 4))
    base_plain = write_warc(tmp_path / "base.warc", _site("fuzz.example", 4), gz=False)
    before = _snapshot_of_library(library)
    earlier_files = sorted(
        (p, p.read_bytes()) for p in (library.root / "collections").rglob("*") if p.is_file()
    )
    lost: list[str] = []
    work = tmp_path / "mutants"
    work.mkdir()
    mutants = [
        *_warc_mutants(rng, base_gz, WARCS_GZ, True),
        *_warc_mutants(rng, base_plain, WARCS_PLAIN, False),
    ]
    for m in mutants:
        path = work / m.name
        path.write_bytes(m.data)
        outcome = _import(library, path)
        if outcome is None or outcome.state is OutcomeState.SKIPPED:
            assert not m.moved or outcome is not None, (m.what, "refused with intact records")
            continue  # the same bytes as an earlier mutant
        assert outcome.reason or outcome.state is OutcomeState.IMPORTED, m.what
        if not m.moved:
            continue
        assert outcome.state is OutcomeState.IMPORTED, (m.name, m.what, outcome.reason)
        rel = f"{outcome.folder}/{path.name}"
        got = _indexed(library, rel)
        # at its new offset; or, junk glued to its header, from where the junk starts
        missing = sorted(
            m.urls[o]
            for o, new in m.moved.items()
            if new not in got.values() and m.urls[o] not in got
        )
        if missing:
            lost.append(f"{m.name} ({m.what}): intact records {missing} not indexed")
    wacz_base = base_gz.read_bytes()
    spans = [(r.offset, r.length) for r in scan_records(base_gz)]
    for n in range(WACZS):
        if n % 2:  # a damaged WARC, packed with its own (matching) hashes
            inner = _mutate(rng, wacz_base, spans, True).data
            data, what = _wacz(inner), "damaged WARC inside"
        else:  # damage to the zip itself
            zipped = bytearray(_wacz(wacz_base))
            for _ in range(rng.randint(1, 3)):
                zipped[rng.randrange(len(zipped))] ^= 1 << rng.randrange(8)
            data, what = bytes(zipped), "damaged zip"
        path = work / f"w{n:03d}.wacz"
        path.write_bytes(data)
        outcome = _import(library, path)
        if outcome is not None and outcome.state is not OutcomeState.IMPORTED:
            assert outcome.reason, (path.name, what)
        elif outcome is not None and what == "damaged zip":
            if not outcome.problems:  # its WARC passed its hash: every record
                assert outcome.records == len(spans), path.name
            else:  # the WARC's or the zip's bytes were hit: said, the records that read kept
                said = ("cannot be read", "was changed", "read from their own headers")
                assert any(w in outcome.problems[0] for w in said), (path.name, outcome.problems)
                assert outcome.records <= len(spans), path.name
    assert not lost, "\n".join(lost)
    # the earlier import is untouched: its rows and its files
    after = _snapshot_of_library(library)
    for table_before, table_after in zip(before, after, strict=True):  # type: ignore[call-overload]
        assert set(table_before) <= set(table_after)
    assert all(p.read_bytes() == data for p, data in earlier_files)
