"""Private data out of exported records: ``Cookie``, ``Authorization`` and their kin, and
the passwords that login forms sent.

A capture made while logged in carries the session in its records: the ``Cookie`` and
``Authorization`` headers the browser sent and the ``Set-Cookie`` headers the site answered
with. Whoever holds those values may act as the user on that site, so they stay in the
private library: an export (WACZ or WARC folder) leaves them out of every ``request``,
``response`` and ``revisit`` record unless asked to keep them (``--keep-private-headers``).

A ``request`` record whose body is a form or JSON (``application/x-www-form-urlencoded``,
``multipart/form-data``, ``application/json``) has the values of its secret fields blanked
(:mod:`archiver_app.warc.form_secrets`: ``password=hunter2`` becomes ``password=``), its
``Content-Length`` header and its ``WARC-Payload-Digest`` rewritten to match; requests are
not indexed, so nothing else refers to that digest. Such a body larger than
:data:`BODY_LIMIT` is left out (it could not be checked).

Otherwise only the HTTP header block changes. The record is rewritten with its new
``Content-Length`` and a recomputed ``WARC-Block-Digest`` (same algorithm and encoding as
the original); the payload and its ``WARC-Payload-Digest`` are untouched, so the CDXJ
digests, deduplication and revisits still agree. A record that holds none of these
headers, and no form body, is copied byte for byte, as every record is without stripping.
Records are streamed through a spooled temporary file, so a large body never sits in memory.
"""

from __future__ import annotations

import base64
import hashlib
import re
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import IO, Protocol

from archiver_app.warc.form_secrets import FORM, HINT, MULTIPART, blank_secrets

BUF = 1024 * 1024
PRIVATE_HEADERS = frozenset(
    {"cookie", "cookie2", "authorization", "proxy-authorization", "set-cookie", "set-cookie2"}
)
HTTP_RECORD_TYPES = frozenset({"request", "response", "revisit"})
#: How much of a record's start is read to decide whether it needs rewriting.
HEAD_BYTES = 256 * 1024
#: The largest form or JSON request body checked for passwords (in memory).
BODY_LIMIT = 16 * 1024 * 1024
_HEADER_NAME = re.compile(rb"^([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*:", re.ASCII)


class CopyIssue(StrEnum):
    SHORT = "short"  # the file ended inside the record: what there was is copied
    LEFT_OUT = "left-out"  # the record could not be read to strip it: not written at all


@dataclass(frozen=True)
class CopyProblem:
    issue: CopyIssue
    message: str


class Sink(Protocol):
    def write(self, data: bytes, /) -> object: ...


def copy_record(
    fh: IO[bytes], length: int, gz: bool, out: Sink, *, strip: bool
) -> CopyProblem | None:
    """Copy the record of ``length`` bytes at ``fh``'s position to ``out`` as one gzip
    member (as it is when ``gz``), without its private headers when ``strip``; a problem
    when it could not be copied whole (nothing private is ever written)."""
    if strip:
        start = fh.tell()
        head = _decompressed_head(fh, length, gz)
        fh.seek(start)
        if head is None or _has_private_header(head) or _may_send_secrets(head):
            return _rewrite(fh, length, gz, out)
    return _copy_as_is(fh, length, gz, out)


def _copy_as_is(fh: IO[bytes], length: int, gz: bool, out: Sink) -> CopyProblem | None:
    remaining = length
    comp = None if gz else zlib.compressobj(6, zlib.DEFLATED, 31)
    problem: CopyProblem | None = None
    while remaining > 0:
        chunk = fh.read(min(BUF, remaining))
        if not chunk:
            problem = CopyProblem(CopyIssue.SHORT, "the file ends before the record does")
            break
        remaining -= len(chunk)
        out.write(chunk if comp is None else comp.compress(chunk))
    if comp is not None:
        out.write(comp.compress(b"\r\n\r\n") + comp.flush())
    return problem


def _decompressed_head(fh: IO[bytes], length: int, gz: bool) -> bytes | None:
    """The first bytes of the record as text (up to :data:`HEAD_BYTES`), or None when they
    cannot be decompressed."""
    raw = fh.read(min(length, HEAD_BYTES))
    if not gz:
        return raw
    try:
        return zlib.decompressobj(31).decompress(raw, HEAD_BYTES)
    except zlib.error:
        return None


def _has_private_header(head: bytes) -> bool:
    """Whether the HTTP header block of the record starting with ``head`` names a private
    header; True when the block does not end within ``head`` (checked whole then)."""
    warc_end = head.find(b"\r\n\r\n")
    if warc_end < 0:
        return True
    kind = _warc_field(head[:warc_end], b"warc-type")
    if kind is None or kind.decode("latin-1").lower() not in HTTP_RECORD_TYPES:
        return False
    http_end = head.find(b"\r\n\r\n", warc_end + 4)
    block = head[warc_end + 4 : http_end if http_end >= 0 else len(head)]
    if http_end < 0 and len(head) >= HEAD_BYTES:
        return True
    return any(_is_private(line) for line in block.split(b"\r\n")[1:])


def _may_send_secrets(head: bytes) -> bool:
    """Whether the record starting with ``head`` is a request whose form or JSON body may
    hold a password (True when the body does not end within ``head``)."""
    warc_end = head.find(b"\r\n\r\n")
    if warc_end < 0 or (_warc_field(head[:warc_end], b"warc-type") or b"").lower() != b"request":
        return False
    http_end = head.find(b"\r\n\r\n", warc_end + 4)
    if http_end < 0:
        return True
    lines = head[warc_end + 4 : http_end].split(b"\r\n")
    if not _is_form(_http_field(lines, b"content-type")):
        return False
    return len(head) >= HEAD_BYTES or bool(HINT.search(head, http_end + 4))


def _is_form(content_type: bytes | None) -> bool:
    kind = (content_type or b"").partition(b";")[0].strip().lower().decode("latin-1")
    return kind in (FORM, MULTIPART, "application/json") or kind.endswith("+json")


def _http_field(lines: list[bytes], name: bytes) -> bytes | None:
    for line in lines[1:]:
        key, sep, value = line.partition(b":")
        if sep and key.strip().lower() == name:
            return value.strip()
    return None


def _is_private(line: bytes) -> bool:
    match = _HEADER_NAME.match(line)
    return bool(match and match.group(1).decode("ascii").lower() in PRIVATE_HEADERS)


def _warc_field(header: bytes, name: bytes) -> bytes | None:
    for line in header.split(b"\r\n")[1:]:
        key, sep, value = line.partition(b":")
        if sep and key.strip().lower() == name:
            return value.strip()
    return None


def _rewrite(fh: IO[bytes], length: int, gz: bool, out: Sink) -> CopyProblem | None:
    """Decompress the whole record into a spool, drop its private header lines, and write
    it again with a new ``Content-Length`` and ``WARC-Block-Digest``."""
    with tempfile.SpooledTemporaryFile(max_size=8 * BUF) as spool:
        problem = _inflate(fh, length, gz, spool)
        if problem is not None:
            return _left_out(f"{problem}, so its private headers could not be removed")
        spool.seek(0)
        head = spool.read(HEAD_BYTES)
        warc_end = head.find(b"\r\n\r\n")
        if warc_end < 0:
            return _left_out("its WARC header could not be read to remove private headers")
        warc_header = head[:warc_end]
        try:
            size = int(_warc_field(warc_header, b"content-length") or b"")
        except ValueError:
            return _left_out("its Content-Length could not be read to remove private headers")
        spool.seek(warc_end + 4)
        http_head = spool.read(min(size, HEAD_BYTES))
        http_end = http_head.find(b"\r\n\r\n")
        if http_end < 0:
            return _left_out("its HTTP headers could not be read to remove private headers")
        lines = http_head[:http_end].split(b"\r\n")
        kept = _without_private(lines)
        payload_start = warc_end + 4 + http_end + 4
        payload_size = size - (http_end + 4)
        body: bytes | None = None  # the body with its secrets blanked, when it had some
        if _is_form(_http_field(lines, b"content-type")) and (
            (_warc_field(warc_header, b"warc-type") or b"").lower() == b"request"
        ):
            if payload_size > BODY_LIMIT:
                return _left_out("its form body is too large to remove passwords from")
            spool.seek(payload_start)
            content_type = _http_field(lines, b"content-type") or b""
            body = blank_secrets(content_type.decode("latin-1"), spool.read(payload_size))
            if body is not None:
                kept = _with_length(kept, len(body))
                payload_size = len(body)
                warc_header = _with_payload_digest(warc_header, body)
        new_http = b"\r\n".join(kept) + b"\r\n\r\n"
        algo, encode = _digest_style(_warc_field(warc_header, b"warc-block-digest"))
        digest = hashlib.new(algo, new_http, usedforsecurity=False)
        if body is None:
            _each_chunk(spool, payload_start, payload_size, digest.update)
        else:
            digest.update(body)
        header = _new_warc_header(
            warc_header, len(new_http) + payload_size, f"{algo}:{encode(digest.digest())}"
        )
        comp = zlib.compressobj(6, zlib.DEFLATED, 31)
        out.write(comp.compress(header + b"\r\n\r\n" + new_http))
        if body is None:
            _each_chunk(spool, payload_start, payload_size, lambda c: out.write(comp.compress(c)))
        else:
            out.write(comp.compress(body))
        out.write(comp.compress(b"\r\n\r\n") + comp.flush())
    return None


def _left_out(why: str) -> CopyProblem:
    return CopyProblem(CopyIssue.LEFT_OUT, f"left out: {why}")


def _with_length(lines: list[bytes], length: int) -> list[bytes]:
    """The HTTP header lines with ``Content-Length`` saying ``length``."""
    out = [line for line in lines if line.partition(b":")[0].strip().lower() != b"content-length"]
    return [*out, b"Content-Length: " + str(length).encode("ascii")]


def _with_payload_digest(header: bytes, body: bytes) -> bytes:
    """The WARC header with its ``WARC-Payload-Digest`` (when it has one) that of ``body``,
    in the same algorithm and encoding."""
    old = _warc_field(header, b"warc-payload-digest")
    if old is None:
        return header
    algo, encode = _digest_style(old)
    value = f"{algo}:{encode(hashlib.new(algo, body, usedforsecurity=False).digest())}"
    lines = header.split(b"\r\n")
    kept = [ln for ln in lines if ln.partition(b":")[0].strip().lower() != b"warc-payload-digest"]
    return b"\r\n".join([*kept, b"WARC-Payload-Digest: " + value.encode("ascii")])


def _without_private(lines: list[bytes]) -> list[bytes]:
    """The status line and every header line but the private ones (and their folded
    continuation lines)."""
    kept = lines[:1]
    dropping = False
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):  # obs-fold: belongs to the line above
            if not dropping:
                kept.append(line)
            continue
        dropping = _is_private(line)
        if not dropping:
            kept.append(line)
    return kept


def _inflate(fh: IO[bytes], length: int, gz: bool, spool: IO[bytes]) -> str | None:
    remaining = length
    inflater = zlib.decompressobj(31) if gz else None
    while remaining > 0:
        chunk = fh.read(min(BUF, remaining))
        if not chunk:
            return "the file ends before the record does"
        remaining -= len(chunk)
        if inflater is None:
            spool.write(chunk)
            continue
        try:
            while chunk:
                spool.write(inflater.decompress(chunk))
                if not inflater.eof:
                    break
                chunk = inflater.unused_data  # the record spans gzip members
                inflater = zlib.decompressobj(31)
        except zlib.error as exc:
            return f"the record cannot be decompressed ({exc})"
    return None


def _each_chunk(spool: IO[bytes], start: int, size: int, use: Callable[[bytes], object]) -> None:
    spool.seek(start)
    while size > 0:
        chunk = spool.read(min(BUF, size))
        if not chunk:
            break
        size -= len(chunk)
        use(chunk)


def _digest_style(value: bytes | None) -> tuple[str, Callable[[bytes], str]]:
    """The algorithm and encoding of an existing ``WARC-Block-Digest`` (sha1, base32 when
    there is none or it is unknown)."""
    if value:
        algo, _, text = value.decode("latin-1").partition(":")
        algo = algo.strip().lower()
        if algo in {"sha1", "sha256", "sha512", "md5"}:
            size = hashlib.new(algo).digest_size
            if len(text) == 2 * size and all(c in "0123456789abcdefABCDEF" for c in text):
                return algo, lambda d: d.hex()
            return algo, lambda d: base64.b32encode(d).decode("ascii")
    return "sha1", lambda d: base64.b32encode(d).decode("ascii")


def _new_warc_header(header: bytes, length: int, block_digest: str) -> bytes:
    lines = header.split(b"\r\n")
    out = lines[:1]
    for line in lines[1:]:
        key = line.partition(b":")[0].strip().lower()
        if key not in (b"content-length", b"warc-block-digest"):
            out.append(line)
    out.append(b"WARC-Block-Digest: " + block_digest.encode("ascii"))
    out.append(b"Content-Length: " + str(length).encode("ascii"))
    return b"\r\n".join(out)
