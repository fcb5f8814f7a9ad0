"""Index keys of POST and PUT responses, as pywb and ``cdxj-indexer --post-append`` make them.

A replay tool told of a form's POST looks its answer up under the URL with the request's
method and body appended as a query: ``/submit?__wb_method=post&q=hello`` (a form's fields
as they are, a multipart form's fields URL-encoded, JSON flattened to ``key=value`` pairs,
anything else base64 in ``__wb_post_data``), with ``"method"`` and ``"requestBody"`` in the
line's fields. Without them ReplayWeb.page and pywb find no answer for the POST and the
result page does not replay. The rules follow cdxj-indexer's ``postquery`` (the Webrecorder
request-body canonicalization), so the keys agree with what those tools compute at replay;
for a multipart body, where cdxj-indexer and pywb differ, pywb's (:func:`multipart_fields`).
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus, urlencode

from archiver_app.warc.surt import url_key

MAX_QUERY = 4096  #: cdxj-indexer's cap on the appended query
MAX_READ = 1 << 20  #: a request record larger than this (an upload) is not read for its body
_METHODS = ("POST", "PUT")


@dataclass(frozen=True)
class PostedRequest:
    """The method and body of a POST or PUT, as an index line carries them."""

    method: str
    query: str  # the body as a query string (possibly empty)

    def key(self, url: str) -> str:
        """The SURT key of ``url`` with the method and body appended."""
        appended = ("&" if "?" in url else "?") + "__wb_method=" + self.method
        return url_key(url + appended + ("&" + self.query if self.query else ""))


def posted_request(record: bytes, gz: bool) -> PostedRequest | None:
    """The POST or PUT a request record (its bytes as stored, one gzip member when ``gz``)
    sent; None for another method or a record that cannot be read. Both request lines are
    understood: ``POST /p HTTP/1.1``, and ``HTTP/1.1 POST /p`` as earlier captures wrote it."""
    if len(record) > MAX_READ:
        return None
    try:
        data = zlib.decompressobj(31).decompress(record, MAX_READ * 4) if gz else record
    except zlib.error:
        return None
    warc_end = data.find(b"\r\n\r\n")
    http_end = data.find(b"\r\n\r\n", warc_end + 4)
    if warc_end < 0 or http_end < 0:
        return None
    lines = data[warc_end + 4 : http_end].decode("latin-1").split("\r\n")
    words = lines[0].split()
    method = next((w.upper() for w in words[:2] if w.upper() in _METHODS), None)
    if method is None:
        return None
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    body = data[http_end + 4 :]
    block_length = _int(_warc_field(data[:warc_end], "content-length"))
    if block_length is not None:  # the block ends there; the record's CRLFs follow
        body = body[: max(0, block_length - (http_end + 4 - (warc_end + 4)))]
    if (length := _int(headers.get("content-length"))) is not None:
        body = body[:length]
    return PostedRequest(method, body_query(headers.get("content-type", ""), body))


def body_query(content_type: str, body: bytes) -> str:
    """A request body as cdxj-indexer appends it to the URL (at most :data:`MAX_QUERY`)."""
    mime = content_type.lower()
    if mime.startswith("multipart/"):
        fields = multipart_fields(content_type, body)
        query = _binary(body) if fields is None else urlencode(fields)
    elif mime.startswith("application/x-www-form-urlencoded"):
        try:
            query = unquote_plus(body.decode("utf-8"))
        except UnicodeDecodeError:
            query = _binary(body)
    elif mime.startswith("application/json"):
        try:
            query = _json_query(body)
        except ValueError:
            query = ""
    elif mime.startswith("text/plain"):
        try:
            query = _json_query(body)
        except ValueError:
            query = _binary(body)
    else:
        query = _binary(body)
    return query[:MAX_QUERY]


def multipart_fields(content_type: str, body: bytes) -> list[tuple[str, str | bytes]] | None:
    """The (name, value) fields of a multipart body, as pywb (``cgi.FieldStorage``, at
    replay and in its indexer) and cdxj-indexer (the ``multipart`` package) read them: a
    text field's value decoded as UTF-8, a file's its bytes. None when the body is not a
    multipart body of ``content_type``'s boundary: then, as for them, it is binary.

    Where the two differ, on what browsers seldom send, this is pywb's reading, since pywb
    computes the key again at replay: a field's name is taken as it is quoted (a browser
    writes ``"`` as ``%22``; cdxj-indexer decodes it), a part's charset is not looked at,
    text that is not UTF-8 gets U+FFFD and a quoted boundary is unquoted (cdxj-indexer
    stops on those two)."""
    boundary = content_type.partition("boundary=")[2].split(";")[0].strip().strip('"')
    if not boundary:
        return None
    delimiter = b"\r\n--" + boundary.encode("latin-1", "replace")
    at = body.find(delimiter[2:])  # a preamble before the first delimiter is skipped
    if at < 0 or (at > 0 and body[at - 2 : at] != b"\r\n"):
        return None
    at += len(delimiter) - 2
    fields = []
    while not body.startswith(b"--", at):  # else the closing delimiter
        end = body.find(delimiter, at)
        if not body.startswith(b"\r\n", at) or end < 0:
            return None
        head, blank, content = body[at + 2 : end].partition(b"\r\n\r\n")
        field = _part_field(head.decode("utf-8", "replace").split("\r\n"), content)
        if not blank or field is None:
            return None
        fields.append(field)
        at = end + len(delimiter)
    return fields


def _part_field(headers: list[str], content: bytes) -> tuple[str, str | bytes] | None:
    """A part's field from its header lines and content; None without Content-Disposition."""
    for line in headers:
        key, _, value = line.partition(":")
        if key.strip().lower() == "content-disposition":
            options = {k.lower(): _unquote(v) for k, v in _OPTION.findall(value)}
            name = str(options.get("name"))  # as Python's urlencode writes a missing one
            if "filename" in options:
                return name, content
            return name, content.decode("utf-8", "replace")
    return None


#: A ``; key=value`` option of a header, the value a token or a quoted string.
_OPTION = re.compile(r'; *([a-zA-Z0-9-_]+) *= *("(?:\\.|[^\\"])*"|[^;\s"]+)')


def _unquote(value: str) -> str:
    """A quoted option's text (``\\`` escapes undone), as ``cgi.parse_header`` gives it."""
    if len(value) > 1 and value[0] == value[-1] == '"':
        return value[1:-1].replace("\\\\", "\\").replace('\\"', '"')
    return value


def _binary(body: bytes) -> str:
    return "__wb_post_data=" + base64.b64encode(body).decode("ascii")


def _json_query(body: bytes) -> str:
    """JSON flattened to ``name=value`` pairs (a repeated name gets ``.2_``, ``.3_``...;
    values as :func:`_json_text` writes them)."""
    data: dict[str, str] = {}
    dupes: dict[str, int] = {}

    def add(value: Any, name: str = "") -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                add(inner, key)
        elif isinstance(value, list):
            for inner in value:
                add(inner, name)
        elif name:
            if name in data:
                dupes[name] = dupes.get(name, 1) + 1
                name = f"{name}.{dupes[name]}_"
            data[name] = _json_text(value)

    try:
        add(json.loads(body))
    except json.JSONDecodeError:
        if b"\n" not in body:
            raise
        for line in body.split(b"\n"):  # JSON lines
            add(json.loads(line))
    return urlencode(data)


def _json_text(value: Any) -> str:
    """A JSON value as pywb and ReplayWeb.page write it at replay (as JavaScript's
    ``String()``: ``true``, ``null``, ``2`` for 2.0), not as cdxj-indexer does (Python's
    ``True``, ``None``): a key that differs from theirs finds no answer."""
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _warc_field(header: bytes, name: str) -> str | None:
    for line in header.decode("latin-1").split("\r\n")[1:]:
        key, _, value = line.partition(":")
        if key.strip().lower() == name:
            return value.strip()
    return None


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and value.strip().isdigit() else None
