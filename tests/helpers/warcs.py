"""WARC files in tests: read every record (and `warcio check`), or write deterministic ones."""

from __future__ import annotations

import contextlib
import gzip
import io
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter


@dataclass
class Rec:
    type: str
    uri: str
    warc: dict[str, str]
    http_status: int | None
    http_headers: list[tuple[str, str]]
    http_line: str
    payload: bytes
    offset: int
    length: int

    def header(self, name: str) -> str | None:
        lower = name.lower()
        return next((v for k, v in self.http_headers if k.lower() == lower), None)

    def headers_named(self, name: str) -> list[str]:
        lower = name.lower()
        return [v for k, v in self.http_headers if k.lower() == lower]


def read_warc(path: Path) -> list[Rec]:
    """Every record of ``path``, payloads read raw (no content decoding)."""
    out: list[Rec] = []
    with path.open("rb") as fh:
        it = ArchiveIterator(fh, no_record_parse=False)
        for record in it:
            http = record.http_headers
            payload = record.raw_stream.read()
            status = None
            if http is not None and record.rec_type in {"response", "revisit"}:
                status = int(http.get_statuscode())
            out.append(
                Rec(
                    type=record.rec_type,
                    uri=record.rec_headers.get_header("WARC-Target-URI") or "",
                    warc=dict(record.rec_headers.headers),
                    http_status=status,
                    http_headers=list(http.headers) if http is not None else [],
                    http_line=f"{http.protocol} {http.statusline}" if http is not None else "",
                    payload=payload,
                    offset=it.get_record_offset(),
                    length=0,
                )
            )
            it.read_to_end()
            out[-1].length = it.get_record_length()
    return out


def warcio_check(path: Path) -> subprocess.CompletedProcess[str]:
    """What ``warcio check -v`` does (structure and every digest), run in this process.

    Returns the exit code and printed report as a ``CompletedProcess``.
    """
    from warcio.checker import Checker

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = Checker(SimpleNamespace(inputs=[str(path)], verbose=True)).process_all()
    return subprocess.CompletedProcess(
        ["warcio", "check", "-v", str(path)], code, out.getvalue(), ""
    )


@dataclass(frozen=True)
class Resp:
    url: str
    body: bytes
    mime: str = "text/html; charset=utf-8"
    status: str = "200 OK"
    date: str = "2024-03-01T10:00:00Z"


def html_page(title: str, words: str, lang: str = "en") -> bytes:
    return (
        f"<!doctype html><html lang='{lang}'><head><title>{title}</title>"
        "<style>body{color:red}</style></head><body><h1>"
        f"{title}</h1><p>{words}</p><script>var hidden='scriptword';</script></body></html>"
    ).encode()


def write_warc(
    path: Path,
    responses: Sequence[Resp],
    *,
    gz: bool = True,
    revisit_of: dict[str, Resp] | None = None,
    with_requests: bool = False,
) -> Path:
    """Write ``responses`` (and revisits: new URL -> original Resp) with fixed ids."""
    counter = iter(range(1, 1_000_000))

    def rid() -> str:
        return f"<urn:uuid:00000000-0000-4000-8000-{next(counter):012d}>"

    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=gz, warc_version="WARC/1.1")
        for resp in responses:
            headers = StatusAndHeaders(
                resp.status, [("Content-Type", resp.mime)], protocol="HTTP/1.1"
            )
            rec = writer.create_warc_record(
                resp.url,
                "response",
                payload=io.BytesIO(resp.body),
                http_headers=headers,
                warc_headers_dict={"WARC-Date": resp.date, "WARC-Record-ID": rid()},
            )
            writer.write_record(rec)
            if with_requests:
                req = StatusAndHeaders(
                    f"GET {resp.url} HTTP/1.1", [("Host", "x")], is_http_request=True
                )
                writer.write_record(
                    writer.create_warc_record(
                        resp.url,
                        "request",
                        http_headers=req,
                        warc_headers_dict={"WARC-Date": resp.date, "WARC-Record-ID": rid()},
                    )
                )
        for url, orig in (revisit_of or {}).items():
            headers = StatusAndHeaders(
                orig.status, [("Content-Type", orig.mime)], protocol="HTTP/1.1"
            )
            rec = writer.create_revisit_record(
                url,
                digest=_digest(orig.body),
                refers_to_uri=orig.url,
                refers_to_date=orig.date,
                http_headers=headers,
                warc_headers_dict={"WARC-Date": "2024-06-01T10:00:00Z", "WARC-Record-ID": rid()},
            )
            writer.write_record(rec)
    return path


def _digest(body: bytes) -> str:
    import base64
    import hashlib

    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()


def site(n: int = 3, host: str = "example.org") -> list[Resp]:
    """``n`` HTML pages, each with a PNG, on ``host``."""
    out: list[Resp] = []
    for i in range(n):
        out.append(
            Resp(
                f"https://{host}/page{i}",
                html_page(f"Page {i} of {host}", f"river climate word{i} museum"),
                date=f"2024-03-0{1 + i % 9}T10:00:00Z",
            )
        )
        out.append(
            Resp(f"https://{host}/img{i}.png", b"\x89PNG\r\n" + bytes([i]) * 300, mime="image/png")
        )
    return out


def page_and_data(host: str) -> list[Resp]:
    """Two records' worth of a small site: a page and a data file."""
    return [
        Resp(f"https://{host}/", html_page(f"{host} field notes", "words")),
        Resp(f"https://{host}/data.csv", b"year,level\n", mime="text/csv"),
    ]


def damaged_warc(path: Path) -> Path:
    """A gzip WARC with bytes that are no gzip member between two good ones (two records
    each side): the importer keeps both sides and reports one damaged part."""
    good = [write_warc(path.with_name(f".{h}.warc.gz"), page_and_data(h)) for h in ("a", "b")]
    path.write_bytes(good[0].read_bytes() + b"\x00" * 300 + good[1].read_bytes())
    for part in good:
        part.unlink()
    return path


def one_stream_warc(path: Path) -> Path:
    """A two-record WARC gzipped as a whole (``gzip x.warc``), not one member per record."""
    plain = write_warc(path.with_name(f".{path.name}.plain"), page_and_data("c.example"), gz=False)
    path.write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    return path


def export_with_a_big_record(path: Path) -> Path:
    """A 201-record export: 100 pages with their images, and a 300 kB record (bytes that do
    not compress) fourth."""
    import random

    body = random.Random(7).randbytes(300_000)
    responses = site(100)
    responses.insert(3, Resp("https://example.org/big.bin", body, mime="application/zip"))
    return write_warc(path, responses)


def flip_a_bit_in_the_big_record(full: Path, dest: Path) -> tuple[list[tuple[int, int]], int]:
    """Write ``full`` to ``dest`` with one bit flipped in the middle of its big record's gzip
    member; return the spans of ``full`` and the damaged record's offset."""
    from archiver_app.warc.scan import scan_records

    spans = [(r.offset, r.length) for r in scan_records(full)]
    offset, length = spans[3]
    data = bytearray(full.read_bytes())
    data[offset + length // 2] ^= 0x10
    dest.write_bytes(bytes(data))
    return spans, offset
