"""Writing one capture's WARC/1.1 file with warcio, record by record.

The file is written under a temporary name (``<name>.part``) and renamed when closed, so a
killed process never leaves a half file that looks complete. Every record is a complete
gzip member flushed as soon as it is written, so the ``.part`` file is itself a valid
WARC up to its last record (``warcio check`` passes on it). That is why it does not take a
:mod:`archiver_app.durable` temporary name: a killed capture's ``.part`` file is salvaged
(:mod:`archiver_app.capture.salvage`), never swept; closing it uses the same fsync and
rename as every other durable file.

Each written record is reported as a :class:`WrittenRecord` (offset, length, digest ...):
exactly what the ``records`` index table needs. Dates and record ids come from injectable
callables so tests can compare output byte for byte.

Threading contract: one writer belongs to one capture; calls must not overlap.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archiver_app.durable import install, sync_fd
from archiver_app.store.types import utcnow
from archiver_app.warc.digests import payload_digest
from archiver_app.warc.httpmsg import HttpRequest, HttpResponse, stored_response_headers
from archiver_app.warc.timestamps import parse_warc_date, to_ts17, warc_date

WARC_VERSION = "WARC/1.1"
PART_SUFFIX = ".part"


def new_record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


@dataclass(frozen=True)
class WrittenRecord:
    """Where one record went and what the index needs to know about it."""

    record_type: str
    url: str
    record_id: str
    date: str  # WARC-Date as written
    ts: str  # ts17
    offset: int
    length: int
    status: int | None = None
    mime: str | None = None
    digest: str | None = None  # WARC-Payload-Digest
    revisit_of_id: int | None = None  # records.id of the original (revisits)
    revisit_of_url: str | None = None  # that original's URL, as the capture chose it


@dataclass(frozen=True)
class RevisitOf:
    """The stored response a revisit record points at."""

    record_id: int  # records.id
    url: str
    date: str  # WARC-Date of the original


class CaptureWarcWriter:
    """A WARC file being written for one capture; see the module docstring."""

    def __init__(
        self,
        path: Path,
        *,
        info: Mapping[str, str],
        clock: Callable[[], datetime] = utcnow,
        record_id: Callable[[], str] = new_record_id,
    ) -> None:
        self.path = path
        self.part_path = path.with_name(path.name + PART_SUFFIX)
        self._clock = clock
        self._record_id = record_id
        self._fh: BinaryIO | None = open(self.part_path, "wb")  # noqa: SIM115 (closed in close)
        self._writer = WARCWriter(self._fh, gzip=True, warc_version=WARC_VERSION)
        self.records: list[WrittenRecord] = []
        info_record = self._writer.create_warcinfo_record(path.name, dict(info))
        info_record.rec_headers.replace_header("WARC-Record-ID", self._record_id())
        info_record.rec_headers.replace_header("WARC-Date", warc_date(self._clock()))
        self._write(info_record, record_type="warcinfo", url="", status=None, mime=None)

    # ------------------------------------------------------------------ internals

    @property
    def bytes_written(self) -> int:
        return self._fh.tell() if self._fh is not None else self.path.stat().st_size

    def _write(
        self,
        record: object,
        *,
        record_type: str,
        url: str,
        status: int | None,
        mime: str | None,
        revisit_of: RevisitOf | None = None,
    ) -> WrittenRecord:
        if self._fh is None:
            raise ValueError(f"{self.path} is already closed")
        offset = self._fh.tell()
        self._writer.write_record(record)
        self._fh.flush()
        headers = record.rec_headers  # type: ignore[attr-defined]
        date = headers.get_header("WARC-Date")
        written = WrittenRecord(
            record_type=record_type,
            url=url,
            record_id=headers.get_header("WARC-Record-ID"),
            date=date,
            ts=to_ts17(parse_warc_date(date)),
            offset=offset,
            length=self._fh.tell() - offset,
            status=status,
            mime=mime,
            digest=headers.get_header("WARC-Payload-Digest"),
            revisit_of_id=revisit_of.record_id if revisit_of else None,
            revisit_of_url=revisit_of.url if revisit_of else None,
        )
        self.records.append(written)
        return written

    def _headers(self, **extra: str | None) -> dict[str, str]:
        out = {"WARC-Record-ID": self._record_id(), "WARC-Date": warc_date(self._clock())}
        out.update({k.replace("_", "-"): v for k, v in extra.items() if v})
        return out

    # ------------------------------------------------------------------ records

    def write_exchange(
        self,
        url: str,
        request: HttpRequest | None,
        response: HttpResponse,
        body: bytes,
        *,
        ip_address: str | None = None,
        truncated: str | None = None,
        revisit_of: RevisitOf | None = None,
    ) -> tuple[WrittenRecord, WrittenRecord | None]:
        """Write a response (or revisit) record and the request record concurrent to it.

        ``body`` is the payload as the browser saw it (decoded); headers are fixed to match.
        ``truncated`` is a WARC-Truncated reason (``length``, ``time`` ...) when the body is
        incomplete. Returns (response record, request record or None).
        """
        length = len(body)
        http_headers = StatusAndHeaders(
            response.statusline,
            stored_response_headers(response.headers, length),
            protocol=response.protocol if response.protocol.startswith("HTTP/") else "HTTP/1.1",
        )
        warc_headers = self._headers(WARC_IP_Address=ip_address, WARC_Truncated=truncated)
        if revisit_of is not None:
            record = self._writer.create_revisit_record(
                url,
                digest=payload_digest(body),
                refers_to_uri=revisit_of.url,
                refers_to_date=revisit_of.date,
                http_headers=http_headers,
                warc_headers_dict=warc_headers,
            )
            kind = "revisit"
        else:
            record = self._writer.create_warc_record(
                url,
                "response",
                payload=io.BytesIO(body),
                length=length,
                http_headers=http_headers,
                warc_headers_dict=warc_headers,
            )
            kind = "response"
        resp = self._write(
            record,
            record_type=kind,
            url=url,
            status=response.status,
            mime=response.mime,
            revisit_of=revisit_of,
        )
        req = None
        if request is not None:
            req = self.write_request(url, request, concurrent_to=resp.record_id)
        return resp, req

    def write_request(
        self, url: str, request: HttpRequest, *, concurrent_to: str | None = None
    ) -> WrittenRecord:
        headers = [(k, v) for k, v in request.headers if k.lower() != "content-length"]
        if request.body:
            headers.append(("Content-Length", str(len(request.body))))
        protocol = request.protocol if request.protocol.startswith("HTTP/") else "HTTP/1.1"
        # "POST /path HTTP/1.1": warcio writes a request's method as its "protocol"
        request_line = f"{request.method} {request.target} {protocol}"
        http_headers = StatusAndHeaders(request_line, headers, is_http_request=True)
        record = self._writer.create_warc_record(
            url,
            "request",
            payload=io.BytesIO(request.body),
            length=len(request.body),
            http_headers=http_headers,
            warc_headers_dict=self._headers(WARC_Concurrent_To=concurrent_to),
        )
        return self._write(record, record_type="request", url=url, status=None, mime=None)

    def write_resource(
        self, uri: str, content_type: str, data: bytes, *, concurrent_to: str | None = None
    ) -> WrittenRecord:
        return self._write_block("resource", uri, content_type, data, concurrent_to)

    def write_metadata(
        self, uri: str, content_type: str, data: bytes, *, concurrent_to: str | None = None
    ) -> WrittenRecord:
        return self._write_block("metadata", uri, content_type, data, concurrent_to)

    def _write_block(
        self,
        record_type: str,
        uri: str,
        content_type: str,
        data: bytes,
        concurrent_to: str | None,
    ) -> WrittenRecord:
        """A ``resource`` or ``metadata`` record: a typed block with no HTTP message."""
        record = self._writer.create_warc_record(
            uri,
            record_type,
            payload=io.BytesIO(data),
            length=len(data),
            warc_content_type=content_type,
            warc_headers_dict=self._headers(WARC_Concurrent_To=concurrent_to),
        )
        return self._write(
            record,
            record_type=record_type,
            url=uri,
            status=None,
            mime=content_type.split(";", maxsplit=1)[0],
        )

    # ------------------------------------------------------------------ closing

    def close(self) -> Path:
        """Flush, fsync and rename the ``.part`` file to its final name, durably
        (:func:`archiver_app.durable.install`)."""
        if self._fh is None:
            return self.path
        self._fh.flush()
        sync_fd(self._fh.fileno())
        self._fh.close()
        self._fh = None
        install(self.part_path, self.path)
        return self.path

    def abandon(self) -> None:
        """Close without renaming: the ``.part`` file stays (valid up to its last record)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
