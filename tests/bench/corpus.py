"""A deterministic WARC corpus for benchmarks (~1 GiB by default), cached on disk.

Same seed and size give the same bytes on every machine: a seeded RNG chooses record
types and sizes (HTML 20-200 KB of word text, CSS/JS, JSON, images up to 2 MB of random
bytes), URLs on 50 hosts, and capture times; about 3% of responses repeat an earlier
payload and are written as ``revisit`` records, as a deduplicating crawler would. Every
response has its request record. WARCs roll over at ~100 MB.

``entries.jsonl`` beside the WARCs lists each response/revisit (url, WARC-Date, mime, file,
offset, length) so a benchmark can pick random records without our own indexer.

Run directly to build it: ``python tests/bench/corpus.py [FOLDER] [--mib 1024]``; without a
folder it goes to :func:`default_corpus_folder` (shared by every benchmark).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import random
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

VERSION = 2  # 2: revisits carry the original's HTTP headers
ROLL_BYTES = 100 * 1024 * 1024
WORDS = [
    "archive",
    "research",
    "climate",
    "health",
    "policy",
    "history",
    "report",
    "river",
    "museum",
    "science",
    "energy",
    "public",
    "water",
    "school",
    "digital",
    "map",
    "council",
    "budget",
    "election",
    "harbour",
    "railway",
    "festival",
    "library",
    "survey",
    "census",
    "grant",
    "treaty",
    "parliament",
    "vaccine",
    "forest",
    "glacier",
    "ocean",
    "satellite",
    "algorithm",
    "protocol",
    "network",
    "standard",
    "heritage",
    "manuscript",
    "letter",
    "diary",
    "photograph",
    "interview",
    "testimony",
    "evidence",
    "citation",
    "footnote",
    "abstract",
    "method",
    "result",
    "discussion",
]


@dataclass(frozen=True)
class CorpusInfo:
    folder: Path
    files: list[Path]
    records: int  # every record, requests and warcinfo included
    responses: int  # response + revisit records
    bytes: int  # total size of the WARC files
    entries_path: Path


def _text_pool(rng: random.Random, size: int) -> str:
    words = [rng.choice(WORDS) for _ in range(size // 7)]
    return " ".join(words)


def _html(rng: random.Random, pool: str, size: int, title: str, links: list[str]) -> bytes:
    parts = [
        f"<!doctype html><html lang=en><head><title>{title}</title>",
        '<link rel="stylesheet" href="/static/site.css"></head><body>',
        f"<h1>{title}</h1>",
    ]
    for link in links:
        parts.append(f'<a href="{link}">{link}</a> ')
    body_len = 0
    while body_len < size:
        start = rng.randrange(0, len(pool) - 2000)
        chunk = pool[start : start + rng.randrange(400, 2000)]
        parts.append(f"<p>{chunk} token{rng.randrange(10**6)}</p>")
        body_len += len(chunk) + 30
    parts.append("</body></html>")
    return "".join(parts).encode()


def _pin(record: Any, rng: random.Random, date: str) -> Any:
    """Give ``record`` an id and date from the seed, so output is the same on every run."""
    record_id = f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128), version=4)}>"
    record.rec_headers.replace_header("WARC-Record-ID", record_id)
    record.rec_headers.replace_header("WARC-Date", date)
    return record


def _manifest(folder: Path) -> Path:
    return folder / "corpus.json"


def default_corpus_folder(total_bytes: int = 1 << 30, seed: int = 1) -> Path:
    """Where benchmarks keep the corpus between runs: ``$ARCHIVER_BENCH_CORPUS`` or a cache."""
    base = os.environ.get("ARCHIVER_BENCH_CORPUS")
    root = Path(base) if base else Path.home() / ".cache" / "archiver-bench"
    return root / f"corpus-{total_bytes >> 20}MiB-seed{seed}"


def build_corpus(
    folder: Path | None = None, *, total_bytes: int = 1 << 30, seed: int = 1
) -> CorpusInfo:
    """Build (or reuse) the corpus in ``folder`` (default: :func:`default_corpus_folder`)."""
    folder = folder or default_corpus_folder(total_bytes, seed)
    folder.mkdir(parents=True, exist_ok=True)
    params = {"version": VERSION, "total_bytes": total_bytes, "seed": seed}
    manifest = _manifest(folder)
    if manifest.exists():
        data = json.loads(manifest.read_text())
        files = [folder / f for f in data["files"]]
        if data["params"] == params and all(
            p.exists() and p.stat().st_size == s for p, s in zip(files, data["sizes"], strict=True)
        ):
            return CorpusInfo(
                folder,
                files,
                data["records"],
                data["responses"],
                sum(data["sizes"]),
                folder / "entries.jsonl",
            )
    for old in folder.glob("corpus-*.warc.gz"):
        old.unlink()

    rng = random.Random(seed)
    pool = _text_pool(rng, 4 * 1024 * 1024)
    hosts = [f"site{i}.example" for i in range(50)]
    start = datetime(2024, 1, 1, tzinfo=UTC)
    files: list[Path] = []
    written = records = responses = 0
    seen_payloads: list[tuple[str, str, str, StatusAndHeaders]] = []  # digest, url, date, http
    entries = (folder / "entries.jsonl").open("w")
    fh = None
    writer = None
    index = 0
    try:
        while fh is None or written + fh.tell() < total_bytes:
            if fh is None or fh.tell() >= ROLL_BYTES:
                if fh is not None:
                    written += fh.tell()
                    fh.close()
                path = folder / f"corpus-{len(files):03d}.warc.gz"
                files.append(path)
                fh = path.open("wb")
                writer = WARCWriter(fh, gzip=True)
                info = writer.create_warcinfo_record(path.name, {"software": "archiver-bench"})
                writer.write_record(_pin(info, rng, "2024-01-01T00:00:00Z"))
                records += 1
            assert writer is not None
            index += 1
            host = rng.choice(hosts)
            at = start + timedelta(seconds=index * 37 + rng.randrange(30))
            date = at.strftime("%Y-%m-%dT%H:%M:%SZ")
            kind = rng.random()
            if kind < 0.30:
                path_part = f"/{rng.choice(WORDS)}/{index}.html"
                title = " ".join(rng.choice(WORDS) for _ in range(4)).title()
                links = [
                    f"https://{host}/{rng.choice(WORDS)}/{rng.randrange(index + 1)}.html"
                    for _ in range(5)
                ]
                body = _html(rng, pool, rng.randrange(20_000, 200_000), title, links)
                mime = "text/html; charset=utf-8"
            elif kind < 0.60:
                ext, mime = rng.choice([("css", "text/css"), ("js", "application/javascript")])
                path_part = f"/static/{index}.{ext}"
                body = pool[rng.randrange(0, len(pool) - 40_000) :][
                    : rng.randrange(2_000, 30_000)
                ].encode()
            elif kind < 0.65:
                path_part = f"/api/{index}.json"
                body = json.dumps(
                    {"id": index, "words": pool[: rng.randrange(500, 10_000)]}
                ).encode()
                mime = "application/json"
            else:
                path_part = f"/img/{index}.jpg"
                size = min(2_000_000, int(rng.lognormvariate(11.0, 1.4)))
                body = rng.randbytes(max(size, 500))
                mime = "image/jpeg"
            url = f"https://{host}{path_part}"
            offset = fh.tell()
            http = StatusAndHeaders(
                "200 OK",
                [("Content-Type", mime), ("Content-Length", str(len(body)))],
                protocol="HTTP/1.1",
            )
            digest = "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()
            if seen_payloads and rng.random() < 0.03:
                # A revisit repeats the original's payload, so it carries its headers too.
                orig_digest, orig_url, orig_date, orig_http = rng.choice(seen_payloads)
                mime = orig_http.get_header("Content-Type") or mime
                rec = writer.create_revisit_record(
                    url,
                    orig_digest,
                    orig_url,
                    orig_date,
                    http_headers=orig_http,
                    warc_headers_dict={"WARC-Date": date},
                )
                rtype = "revisit"
            else:
                rec = writer.create_warc_record(
                    url,
                    "response",
                    payload=io.BytesIO(body),
                    http_headers=http,
                    warc_headers_dict={"WARC-Date": date},
                )
                rtype = "response"
                if len(seen_payloads) < 5000:
                    seen_payloads.append((digest, url, date, http))
            writer.write_record(_pin(rec, rng, date))
            length = fh.tell() - offset
            req = writer.create_warc_record(
                url,
                "request",
                payload=io.BytesIO(b""),
                http_headers=StatusAndHeaders(
                    f"GET {path_part} HTTP/1.1", [("Host", host)], is_http_request=True
                ),
                warc_headers_dict={"WARC-Date": date},
            )
            writer.write_record(_pin(req, rng, date))
            records += 2
            responses += 1
            entries.write(
                json.dumps(
                    {
                        "url": url,
                        "date": date,
                        "mime": mime,
                        "type": rtype,
                        "file": files[-1].name,
                        "offset": offset,
                        "length": length,
                    }
                )
                + "\n"
            )
        if fh is not None:
            written += fh.tell()
            fh.close()
            fh = None
    finally:
        entries.close()
        if fh is not None:
            fh.close()
    sizes = [p.stat().st_size for p in files]
    manifest.write_text(
        json.dumps(
            {
                "params": params,
                "files": [p.name for p in files],
                "sizes": sizes,
                "records": records,
                "responses": responses,
            }
        )
    )
    return CorpusInfo(folder, files, records, responses, sum(sizes), folder / "entries.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", type=Path, nargs="?")
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    info = build_corpus(args.folder, total_bytes=args.mib << 20, seed=args.seed)
    print(
        f"{len(info.files)} files, {info.records} records ({info.responses} responses), "
        f"{info.bytes / 2**20:.0f} MiB in {info.folder}"
    )


if __name__ == "__main__":
    main()
