"""Reading WARC files in tests: every record with its headers and payload, and `warcio check`."""

from __future__ import annotations

import contextlib
import io
import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from warcio.archiveiterator import ArchiveIterator


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
                    http_line=http.statusline if http is not None else "",
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
