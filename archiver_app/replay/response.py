"""Build the HTTP response replay sends back from a stored record.

The stored status and headers are kept, minus hop-by-hop headers and framing we recompute
(encodings already undone, lengths recomputed). Headers through which an archived site
would set policy for the replaying browser (CSP, referrer policy, CORS, cookies, preconnect
``Link`` hints, speculation rules, reporting, framing rules, and the
``Memento-Datetime`` of a page captured from another archive) are never passed through as
they are: they are kept for reading as ``X-Archive-Orig-<Name>``, the convention pywb uses.
Bodies are always served decoded. Range requests are answered from the stored body so
media can seek.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from http import HTTPStatus

# Never forwarded: hop-by-hop (RFC 9110 section 7.6.1) and framing we recompute.
DROPPED_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "content-encoding",
        "content-length",
        "content-range",
        "accept-ranges",
    }
)
# Set policy for the browser, name live origins or pin them: renamed, never obeyed.
RENAMED_HEADERS = frozenset(
    {
        "content-security-policy",
        "content-security-policy-report-only",
        "referrer-policy",
        "strict-transport-security",
        "public-key-pins",
        "public-key-pins-report-only",
        "report-to",
        "nel",
        "reporting-endpoints",
        "alt-svc",
        "clear-site-data",
        "set-cookie",
        "set-cookie2",
        "link",
        "speculation-rules",
        "refresh",
        "service-worker-allowed",
        "x-frame-options",
        "cross-origin-opener-policy",
        "cross-origin-embedder-policy",
        "cross-origin-resource-policy",
        "origin-agent-cluster",
        "permissions-policy",
        "feature-policy",
        "supports-loading-mode",
        "timing-allow-origin",
        "x-dns-prefetch-control",
        "memento-datetime",
    }
)
ORIG_PREFIX = "X-Archive-Orig-"
_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class ReplayResponse:
    """A response ready to hand to a browser.

    ``url`` is the URL of the record served (it may differ from the one asked for when
    matched fuzzily); ``ts`` its capture time (ts17); ``truncated`` the value of the
    record's ``WARC-Truncated`` header when the capture itself was cut short.
    """

    status: int
    headers: list[tuple[str, str]]
    body: bytes
    url: str
    ts: str
    record_id: int
    snapshot_id: int | None = None
    match: str = "exact"
    truncated: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str:
        try:
            return HTTPStatus(self.status).phrase
        except ValueError:
            return "Unknown"

    def header(self, name: str) -> str | None:
        lname = name.lower()
        return next((v for k, v in self.headers if k.lower() == lname), None)

    @property
    def content_type(self) -> str:
        return self.header("Content-Type") or "application/octet-stream"

    @property
    def location(self) -> str | None:
        return self.header("Location") if 300 <= self.status < 400 else None


def is_renamed(name: str) -> bool:
    """True for a header the archived site must not get to set for the replaying browser."""
    lname = name.lower()
    return lname in RENAMED_HEADERS or lname.startswith("access-control-")


def clean_headers(headers: list[tuple[str, str]], body_length: int) -> list[tuple[str, str]]:
    """Stored headers minus :data:`DROPPED_HEADERS`, with :func:`is_renamed` ones kept as
    ``X-Archive-Orig-<Name>`` and a true ``Content-Length``.

    ``Refresh`` is renamed too: front ends that honour it read the original and point it
    at the archive themselves.
    """
    kept: list[tuple[str, str]] = []
    for name, value in headers:
        if name.lower() in DROPPED_HEADERS:
            continue
        kept.append((ORIG_PREFIX + name, value) if is_renamed(name) else (name, value))
    kept.append(("Content-Length", str(body_length)))
    return kept


def original_header(headers: list[tuple[str, str]], name: str) -> str | None:
    """The archived value of a header :func:`clean_headers` renamed, if any."""
    wanted = (ORIG_PREFIX + name).lower()
    return next((v for k, v in headers if k.lower() == wanted), None)


def parse_range(value: str, size: int) -> tuple[int, int] | None:
    """``(first, last)`` inclusive for a single ``bytes=`` range, or None if unsatisfiable.

    Raises:
        ValueError: the header is not a single byte range (then the whole body is served).
    """
    match = _RANGE.match(value)
    if not match or (not match.group(1) and not match.group(2)):
        raise ValueError(f"unsupported range: {value!r}")
    first_s, last_s = match.groups()
    if not first_s:  # suffix: the last N bytes
        count = int(last_s)
        if count == 0 or size == 0:
            return None
        return max(0, size - count), size - 1
    first = int(first_s)
    last = min(int(last_s), size - 1) if last_s else size - 1
    if first >= size or last < first:
        return None
    return first, last


def apply_range(response: ReplayResponse, range_header: str | None) -> ReplayResponse:
    """Answer ``Range`` from the stored body: 206 with ``Content-Range``, or 416."""
    if not range_header or response.status != 200:
        return response
    size = len(response.body)
    try:
        span = parse_range(range_header, size)
    except ValueError:
        return response
    base = [(k, v) for k, v in response.headers if k.lower() != "content-length"]
    if span is None:
        return replace(
            response,
            status=416,
            body=b"",
            headers=[*base, ("Content-Range", f"bytes */{size}"), ("Content-Length", "0")],
        )
    first, last = span
    body = response.body[first : last + 1]
    return replace(
        response,
        status=206,
        body=body,
        headers=[
            *base,
            ("Accept-Ranges", "bytes"),
            ("Content-Range", f"bytes {first}-{last}/{size}"),
            ("Content-Length", str(len(body))),
        ],
    )
