"""HTTP messages as they are stored in WARC records: status lines and header lists.

A browser hands us bodies already decoded (no gzip, no chunking), so the stored headers must
describe the stored bytes: ``Content-Encoding`` is kept as ``X-Archive-Orig-Content-Encoding``,
``Transfer-Encoding`` is dropped and ``Content-Length`` is set to the stored length (the
original value kept as ``X-Archive-Orig-Content-Length`` when it differs). This is what pywb
and other replay tools expect of browser-made WARCs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from email.message import Message
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

ORIG_PREFIX = "X-Archive-Orig-"


@dataclass(frozen=True)
class HttpRequest:
    method: str
    target: str  # path and query, as on the request line
    headers: list[tuple[str, str]]
    body: bytes = b""
    protocol: str = "HTTP/1.1"

    @property
    def statusline(self) -> str:
        return f"{self.method} {self.target}"


@dataclass(frozen=True)
class HttpResponse:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    protocol: str = "HTTP/1.1"
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def statusline(self) -> str:
        return f"{self.status} {self.reason}".rstrip()

    def header(self, name: str) -> str | None:
        lower = name.lower()
        return next((v for k, v in self.headers if k.lower() == lower), None)

    @property
    def mime(self) -> str | None:
        value = self.header("content-type")
        if not value:
            return None
        return value.split(";", 1)[0].strip().lower() or None


def parse_header_text(text: str) -> tuple[str, int, str, list[tuple[str, str]]] | None:
    """Split raw response header text (``HTTP/1.1 200 OK\\r\\nA: b...``) into parts.

    Returns (protocol, status, reason, headers) or None when the text is not a status line.
    Duplicate headers (two ``Set-Cookie``) stay separate, in their order.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or not lines[0].upper().startswith("HTTP/"):
        return None
    parts = lines[0].split(" ", 2)
    try:
        status = int(parts[1])
    except (IndexError, ValueError):
        return None
    reason = parts[2].strip() if len(parts) > 2 else ""
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        if not line.strip():
            continue
        if line[0] in " \t" and headers:  # obsolete line folding
            name, value = headers[-1]
            headers[-1] = (name, value + " " + line.strip())
            continue
        name, sep, value = line.partition(":")
        if sep:
            headers.append((name.strip(), value.strip()))
    return parts[0], status, reason, headers


def headers_from_map(mapping: dict[str, str]) -> list[tuple[str, str]]:
    """CDP header objects join repeated headers with newlines; split them again."""
    out: list[tuple[str, str]] = []
    for name, value in mapping.items():
        for part in str(value).split("\n"):
            out.append((name, part))
    return out


def stored_response_headers(
    headers: list[tuple[str, str]], body_length: int
) -> list[tuple[str, str]]:
    """Headers that describe ``body_length`` stored bytes (see the module docstring)."""
    out: list[tuple[str, str]] = []
    original_length: str | None = None
    for name, value in headers:
        lower = name.lower()
        if lower == "transfer-encoding":
            continue
        if lower == "content-length":
            original_length = value
            continue
        if lower == "content-encoding" and value.strip().lower() != "identity":
            out.append((ORIG_PREFIX + name, value))
            continue
        out.append((name, value))
    if original_length is not None and original_length.strip() != str(body_length):
        out.append((ORIG_PREFIX + "Content-Length", original_length))
    out.append(("Content-Length", str(body_length)))
    return out


def is_http2(protocol: str | None) -> bool:
    return bool(protocol) and str(protocol).lower() in {"h2", "h3", "http/2", "http/3", "quic"}


def file_name(url: str, disposition: str | None = None) -> str:
    """A file's name as its ``Content-Disposition`` gives it (``/dl?id=5`` -> ``quarterly
    report.csv``; ``filename*=`` of RFC 5987 too), else the last part of its address, else
    the address itself. Never a path: ``../x`` is ``x``."""
    named = None
    if disposition:
        header = Message()
        header["content-disposition"] = disposition
        named = header.get_filename()
    name = PurePosixPath((named or "").replace("\\", "/")).name.strip()
    return name or PurePosixPath(unquote(urlsplit(url).path)).name or url
