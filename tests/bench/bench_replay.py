"""Replay throughput and latency on the shared WARC corpus, side by side with pywb.

Run: .venv/bin/python tests/bench/bench_replay.py [--mib 1024] [--requests 1000]

Both sides index the same CDXJ (made once with cdxj-indexer and cached): pywb serves it
in ``id_`` mode (original bytes, no rewriting) from its own process; our side is
``archiver serve`` in its own process. The same random records (seeded) are fetched by
one keep-alive HTTP client from each, after the records' bytes were read once so both
start from a warm OS page cache. Our in-process ``Replayer.serve`` is timed too (first
pass: resolve + read; second pass: the LRU caches). Targets: >= 2x pywb's requests per
second, p95 <= 10 ms for cached lookups.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from archiver_app.library import Library
from archiver_app.replay import Replayer
from archiver_app.store.models import FileKind
from archiver_app.warc.records import RecordRow, insert_record_rows
from archiver_app.warc.timestamps import normalise_ts
from tests.bench.common import report
from tests.bench.corpus import CorpusInfo, build_corpus, default_corpus_folder

VENV_BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Sample:
    url: str
    ts14: str
    file: Path
    offset: int
    length: int


@dataclass
class Timing:
    label: str
    seconds: list[float]
    total: float
    failures: int
    failed: list[str]

    @property
    def rps(self) -> float:
        return len(self.seconds) / self.total

    def pct(self, p: float) -> float:
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000


# ---------------------------------------------------------------------- setup


def cdxj_index(corpus: CorpusInfo, work: Path) -> Path:
    """The corpus' sorted CDXJ (cdxj-indexer), cached in ``work``."""
    out = work / "pywb" / "collections" / "bench" / "indexes" / "index.cdxj"
    stamp = work / "pywb" / "corpus.json"
    manifest = (corpus.folder / "corpus.json").read_text()
    if out.exists() and stamp.exists() and stamp.read_text() == manifest:
        return out
    archive = work / "pywb" / "collections" / "bench" / "archive"
    shutil.rmtree(work / "pywb", ignore_errors=True)
    archive.mkdir(parents=True)
    out.parent.mkdir(parents=True)
    for f in corpus.files:
        (archive / f.name).symlink_to(f)
    subprocess.run(
        [str(VENV_BIN / "cdxj-indexer"), "-s", "-o", str(out), *map(str, corpus.files)],
        check=True,
    )
    stamp.write_text(manifest)
    return out


def parse_cdxj(path: Path) -> list[tuple[str, str, dict[str, str]]]:
    rows = []
    with path.open() as fh:
        for line in fh:
            key, ts, data = line.split(" ", 2)
            rows.append((key, ts, json.loads(data)))
    return rows


def library_from_cdxj(
    corpus: CorpusInfo, cdxj: list[tuple[str, str, dict[str, str]]], root: Path
) -> Library:
    """A library whose ``files`` link to the corpus and whose ``records`` are the CDXJ."""
    fresh = not root.exists()
    lib = Library.open(root)
    if not fresh:
        return lib
    with lib.write() as s:
        conn = s.connection()
        file_ids = {}
        for f in corpus.files:
            conn.exec_driver_sql(
                "INSERT INTO files (path, size, kind, local_state, external_path, created_at)"
                " VALUES (?, ?, ?, 'present', ?, '2024-01-01 00:00:00.000000')",
                (f"imports/{f.name}", f.stat().st_size, str(FileKind.WARC), str(f)),
            )
            file_ids[f.name] = conn.exec_driver_sql("SELECT last_insert_rowid()").scalar()
        rows = []
        for key, ts, data in cdxj:
            mime = data.get("mime")
            rows.append(
                RecordRow(
                    url_key=key,
                    ts=normalise_ts(ts),
                    url=data["url"],
                    record_type="revisit" if mime == "warc/revisit" else "response",
                    status=int(data["status"]) if data.get("status", "-").isdigit() else None,
                    mime=mime,
                    digest=data.get("digest"),
                    file_id=file_ids[Path(data["filename"]).name],
                    offset=int(data["offset"]),
                    length=int(data["length"]),
                )
            )
        insert_record_rows(conn, rows)
    return lib


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_http(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


# ---------------------------------------------------------------------- timing


def serve_session(port: int, token: str) -> str:
    """The Cookie header of an ``archiver serve`` session: the entry address sets it."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", f"/{token}/latest/http://example.com/")
    entry = conn.getresponse()
    entry.read()
    conn.close()
    cookie = (entry.getheader("Set-Cookie") or "").split(";")[0]
    assert cookie, "serve set no session cookie"
    return cookie


def content_hosts(port: int, cookie: str, urls: list[str]) -> tuple[int, dict[str, str]]:
    """(content port, {origin: Host header}): serve answers each archived origin on its own
    ``<label>.localhost`` host, named in the frame page the shell gives for one of its URLs
    (asked once per origin, before any timing)."""
    hosts: dict[str, str] = {}
    content_port = 0
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for url in urls:
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        if origin in hosts:
            continue
        path, frame = f"/latest/{url}", ""
        for _ in range(3):  # `latest` redirects to the capture's exact address
            conn.request("GET", path, headers={"Cookie": cookie})
            resp = conn.getresponse()
            frame = resp.read().decode()
            if resp.status not in (301, 302, 303, 307, 308):
                break
            path = (
                urlsplit(resp.getheader("Location") or "")._replace(scheme="", netloc="").geturl()
            )
        match = re.search(r'<iframe src="http://([a-z0-9]+\.localhost):(\d+)/', frame)
        assert match, frame
        hosts[origin] = f"{match.group(1)}:{match.group(2)}"
        content_port = int(match.group(2))
    conn.close()
    return content_port, hosts


def fetch_all(
    port: int, paths: list[str], label: str, hosts: list[str] | None = None
) -> tuple[Timing, list[int]]:
    """GET each path on a fresh connection (pywb's id_ framing does not survive keep-alive
    for every record, so neither side gets keep-alive)."""
    times, sizes, failures, failed = [], [], 0, []
    start = time.perf_counter()
    for i, path in enumerate(paths):
        t0 = time.perf_counter()
        status: object = None
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            headers = {"Connection": "close", **({"Host": hosts[i]} if hosts else {})}
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
            status = resp.status
            ok = resp.status in (200, 206, 301, 302, 303, 307, 308)
        except (OSError, http.client.HTTPException) as exc:
            body, ok, status = b"", False, exc
        finally:
            conn.close()
        times.append(time.perf_counter() - t0)
        sizes.append(len(body))
        if not ok:
            failures += 1
            failed.append(f"{status} {path}")
    return Timing(label, times, time.perf_counter() - start, failures, failed), sizes


def in_process(
    replayer: Replayer, samples: list[Sample], label: str, sizes: list[int] | None = None
) -> Timing:
    times, failures, failed = [], 0, []
    start = time.perf_counter()
    for s in samples:
        t0 = time.perf_counter()
        try:
            body = replayer.serve(s.url, s.ts14).body
            if sizes is not None:
                sizes.append(len(body))
        except Exception as exc:
            if sizes is not None:
                sizes.append(-1)
            failures += 1
            failed.append(f"{exc} {s.url}")
        times.append(time.perf_counter() - t0)
    return Timing(label, times, time.perf_counter() - start, failures, failed)


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mib", type=int, default=1024, help="corpus size (default 1024)")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--hot", type=int, default=200, help="records in the cached passes")
    parser.add_argument("--work", type=Path, help="cache folder for the indexes")
    args = parser.parse_args(argv)

    total_bytes = args.mib << 20
    corpus = (
        build_corpus(
            default_corpus_folder(total_bytes) if args.mib >= 1024 else None,
            total_bytes=total_bytes,
        )
        if args.work is None
        else build_corpus(args.work / "corpus", total_bytes=total_bytes)
    )
    work = args.work or corpus.folder.parent / f"replay-work-{args.mib}MiB"
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    cdxj_path = cdxj_index(corpus, work)
    cdxj = parse_cdxj(cdxj_path)
    lib = library_from_cdxj(corpus, cdxj, work / "library")
    setup = time.perf_counter() - t0

    rng = random.Random(args.seed)
    picks = rng.sample(cdxj, min(args.requests, len(cdxj)))
    samples = [
        Sample(
            d["url"],
            ts[:14],
            corpus.folder / Path(d["filename"]).name,
            int(d["offset"]),
            int(d["length"]),
        )
        for _k, ts, d in picks
    ]
    for s in samples:  # warm the OS page cache for both sides alike
        with s.file.open("rb") as fh:
            fh.seek(s.offset)
            fh.read(s.length)

    pywb_port = free_port()
    pywb = subprocess.Popen(
        [str(VENV_BIN / "wayback"), "-b", "127.0.0.1", "-p", str(pywb_port), "-t", "4"],
        cwd=work / "pywb",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ours = subprocess.Popen(
        [sys.executable, "-m", "archiver_app", "--library", str(work / "library"), "serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        wait_http(pywb_port)
        assert ours.stdout is not None
        line = ours.stdout.readline()
        match = re.search(r"127\.0\.0\.1:(\d+)/([\w-]+)/", line)
        assert match, line
        cookie = serve_session(int(match.group(1)), match.group(2))
        urls = [s.url for s in samples]
        our_port, by_origin = content_hosts(int(match.group(1)), cookie, urls)
        hosts = [by_origin["{0.scheme}://{0.netloc}".format(urlsplit(u))] for u in urls]

        pywb_paths = [f"/bench/{s.ts14}id_/{s.url}" for s in samples]
        our_paths = [f"/{s.ts14}/{s.url}" for s in samples]
        fetch_all(pywb_port, pywb_paths[:20], "warm-up")
        pywb_t, pywb_sizes = fetch_all(pywb_port, pywb_paths, "pywb id_ (HTTP)")
        ours_t, our_sizes = fetch_all(
            our_port, our_paths, "archiver serve, first pass (HTTP)", hosts
        )
        hot = our_paths[: args.hot]  # a working set that fits the caches, served just before
        fetch_all(our_port, hot, "warm", hosts[: args.hot])
        ours_cached, _ = fetch_all(
            our_port, hot, f"archiver serve, cached, {len(hot)} hot (HTTP)", hosts[: args.hot]
        )
    finally:
        for proc in (pywb, ours):
            proc.terminate()
            proc.wait(timeout=20)
        if ours.stdout is not None:
            ours.stdout.close()

    replayer = Replayer.for_library(lib)
    direct_sizes: list[int] = []
    cold = in_process(replayer, samples, "Replayer.serve, first pass (in process)", direct_sizes)
    hot_samples = samples[: args.hot]
    in_process(replayer, hot_samples, "warm")
    bodies_before = (replayer._bodies.hits, replayer._bodies.misses)
    warm = in_process(
        replayer, hot_samples, f"Replayer.serve, cached, {len(hot_samples)} hot (in process)"
    )
    body_hits = replayer._bodies.hits - bodies_before[0]
    body_misses = replayer._bodies.misses - bodies_before[1]
    lib.close()
    # Same payload as pywb (our HTTP bodies differ for HTML/CSS: links are rewritten).
    same = sum(1 for a, b in zip(pywb_sizes, direct_sizes, strict=True) if a == b)
    revisits = {i for i, (_k, _ts, d) in enumerate(picks) if d.get("mime") == "warc/revisit"}
    differ_revisit = sum(
        1
        for i, (a, b) in enumerate(zip(pywb_sizes, direct_sizes, strict=True))
        if a != b and i in revisits
    )
    del our_sizes

    rows = [
        (
            "corpus",
            f"{len(corpus.files)} files, {corpus.bytes / 2**20:.0f} MiB, "
            f"{len(cdxj)} indexed records",
        ),
        ("setup (index, cached after the first run)", f"{setup:.1f} s"),
        ("requests", f"{len(samples)} random records, seed {args.seed}"),
    ]
    for t in (pywb_t, ours_t, ours_cached, cold, warm):
        rows.append(
            (
                t.label,
                f"{t.rps:8.0f} req/s  p50 {t.pct(0.5):6.2f} ms  "
                f"p95 {t.pct(0.95):6.2f} ms  failures {t.failures}",
            )
        )
    ratio = ours_t.rps / pywb_t.rps
    rows += [
        ("ratio archiver/pywb (HTTP, first pass)", f"{ratio:.2f}x (target >= 2)"),
        ("ratio archiver/pywb (HTTP, cached)", f"{ours_cached.rps / pywb_t.rps:.2f}x"),
        (
            "payloads of equal length to pywb's",
            f"{same}/{len(samples)} ({differ_revisit} of {len(samples) - same} differences "
            f"are revisits; {len(revisits)} revisits sampled)",
        ),
        (
            "cached pass: body cache hits",
            f"{body_hits}/{body_hits + body_misses} (bodies cached up to 64 MiB)",
        ),
        ("load", f"{os.getloadavg()[0]:.1f} (1-min load average at the end)"),
    ]
    for t in (pywb_t, ours_t, cold):
        rows += [(f"failed: {t.label}", f) for f in t.failed[:5]]
    report("Replay: resolve + serve random records", rows)
    return ratio


if __name__ == "__main__":
    main()
