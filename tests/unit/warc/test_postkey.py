"""POST and PUT index keys agree with cdxj-indexer's --post-append (and, for multipart forms,
with pywb's at replay), for request records in either request-line form, and pair with
their response written before or after them."""

from __future__ import annotations

import base64
import gzip
import io
import json

import pytest
import surt
from cdxj_indexer.postquery import append_method_query

from archiver_app.warc.cdxj import ExportIndex, IndexEntry
from archiver_app.warc.postkey import PostedRequest, body_query, multipart_fields, posted_request

URL = "https://forms.example/submit"


def _request(first_line: str, mime: str, body: bytes, *, gz: bool = True) -> bytes:
    http = f"{first_line}\r\nHost: forms.example\r\nContent-Type: {mime}\r\n"
    block = (http + f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    warc = (
        "WARC/1.1\r\nWARC-Type: request\r\nWARC-Target-URI: " + URL + "\r\n"
        f"Content-Type: application/http; msgtype=request\r\nContent-Length: {len(block)}\r\n\r\n"
    ).encode()
    record = warc + block + b"\r\n\r\n"
    return gzip.compress(record) if gz else record


@pytest.mark.parametrize(
    ("mime", "body"),
    [
        ("application/x-www-form-urlencoded", b"q=hello+walk&token2=&n=%C3%A9t%C3%A9"),
        ("application/json", b'{"a": 1, "b": {"a": [7, "x"]}, "c": "y"}'),
        ("text/plain", b"not json"),
        ("application/octet-stream", bytes(range(40))),
        ("application/json", b"{broken"),
    ],
)
def test_the_query_is_cdxj_indexers(mime: str, body: bytes) -> None:
    theirs, appended = append_method_query("POST", mime, len(body), io.BytesIO(body), URL)
    assert body_query(mime, body) == theirs
    assert PostedRequest("POST", theirs).key(URL) == surt.surt(URL + appended)


BOUNDARY = "----WebKitFormBoundaryQ8vR2kT0pZ"
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"


def _multipart(*parts: tuple[str, bytes]) -> bytes:
    """A body as Chromium sends a form with enctype=multipart/form-data."""
    out = b""
    for disposition, content in parts:
        out += f"--{BOUNDARY}\r\nContent-Disposition: form-data; {disposition}\r\n".encode()
        if "filename=" in disposition:
            out += b"Content-Type: application/octet-stream\r\n"
        out += b"\r\n" + content + b"\r\n"
    return out + f"--{BOUNDARY}--\r\n".encode()


FORM_BODY = _multipart(
    ('name="title"', "Été & otters".encode()),
    ('name="notes"', b"line one\r\nline two=2"),
    ('name="tag"', b"a"),
    ('name="tag"', b"b"),
    ('name="empty"', b""),
    ('name="scan"; filename="scan.bin"', bytes([0, 255, 13, 10, 32])),
    ('name="none"; filename=""', b""),  # a file input left empty
)
MULTIPART_BODIES = [
    FORM_BODY,
    _multipart(),
    _multipart(('name="q"', b"hello walk")),
    b"preamble\r\n" + _multipart(('name="q"', b"hi")),
]


@pytest.mark.parametrize("body", MULTIPART_BODIES)
def test_a_multipart_forms_fields_are_the_query_as_cdxj_indexer_and_pywb_make_it(
    body: bytes,
) -> None:
    from pywb.warcserver.inputrequest import MethodQueryCanonicalizer

    theirs, appended = append_method_query("POST", MULTIPART, len(body), io.BytesIO(body), URL)
    assert body_query(MULTIPART, body) == theirs
    assert PostedRequest("POST", theirs).key(URL) == surt.surt(URL + appended)
    pywb = MethodQueryCanonicalizer("POST", MULTIPART, len(body), io.BytesIO(body))
    assert body_query(MULTIPART, body) == (pywb.query or "")


def test_a_multipart_forms_query() -> None:
    """The same, as fixed text (what the tools above computed when it was written)."""
    assert body_query(MULTIPART, FORM_BODY) == (
        "title=%C3%89t%C3%A9+%26+otters&notes=line+one%0D%0Aline+two%3D2&tag=a&tag=b"
        "&empty=&scan=%00%FF%0D%0A+&none="
    )


@pytest.mark.parametrize(
    ("mime", "body"),
    [
        (MULTIPART.replace(BOUNDARY, f'"{BOUNDARY}"'), _multipart(('name="q"', b"hi"))),
        (MULTIPART, _multipart(('name="q"', b"\xff not utf-8"))),
        (MULTIPART, _multipart(('name="say %22hi%22"', b"x"))),  # a browser's quoted name
        (MULTIPART, _multipart(('name="\\"old\\""', b"x"))),  # an older client's
    ],
)
def test_where_cdxj_indexer_differs_the_query_is_pywbs(mime: str, body: bytes) -> None:
    from pywb.warcserver.inputrequest import MethodQueryCanonicalizer

    pywb = MethodQueryCanonicalizer("POST", mime, len(body), io.BytesIO(body))
    assert body_query(mime, body) == pywb.query


def test_json_values_are_written_as_pywb_and_replaywebpage_write_them() -> None:
    """cdxj-indexer writes ``True``/``None``; pywb and ReplayWeb.page compute ``true``/
    ``null`` at replay (and ``2`` for ``2.0``), so a key of Python's words finds nothing."""
    from pywb.warcserver.inputrequest import MethodQueryCanonicalizer

    body = b'{"a": true, "b": false, "c": null, "d": 2.0, "e": 2.5, "f": [1, true]}'
    pywb = MethodQueryCanonicalizer("POST", "application/json", len(body), io.BytesIO(body))
    assert body_query("application/json", body) == pywb.query
    assert pywb.query == "a=true&b=false&c=null&d=2&e=2.5&f=1&f.2_=true"


@pytest.mark.parametrize(
    ("mime", "body"),
    [
        ("multipart/form-data", _multipart(('name="q"', b"hi"))),  # no boundary
        (MULTIPART, _multipart(('name="q"', b"hi"))[:-12]),  # cut short
        (MULTIPART, f"--{BOUNDARY}\r\n\r\nno headers\r\n--{BOUNDARY}--".encode()),
    ],
)
def test_a_body_that_is_not_multipart_is_binary(mime: str, body: bytes) -> None:
    assert multipart_fields(mime, body) is None
    assert body_query(mime, body) == "__wb_post_data=" + base64.b64encode(body).decode()


@pytest.mark.parametrize("first_line", ["POST /submit HTTP/1.1", "HTTP/1.1 POST /submit"])
@pytest.mark.parametrize("gz", [True, False])
def test_a_request_record_gives_its_method_and_body(first_line: str, gz: bool) -> None:
    record = _request(first_line, "application/x-www-form-urlencoded", b"q=a+b&z=1", gz=gz)
    got = posted_request(record, gz)
    assert got == PostedRequest("POST", "q=a b&z=1")
    assert got.key(URL) == "example,forms)/submit?__wb_method=post&q=a%20b&z=1"
    assert posted_request(_request("GET /submit HTTP/1.1", "text/plain", b"", gz=gz), gz) is None
    assert posted_request(b"not a record", gz) is None


def _entry(record_type: str = "response") -> IndexEntry:
    fields = {"url": URL, "mime": "text/html", "status": "200"}
    line = f"example,forms)/submit 20250101000000 {json.dumps(fields)}"
    return IndexEntry(URL, record_type, 200, line)


@pytest.mark.parametrize("request_first", [False, True])
def test_a_post_marks_the_response_beside_it(request_first: bool) -> None:
    posted = PostedRequest("POST", "q=otters")
    index = ExportIndex()
    steps = [("response", _entry()), ("request", None)]
    for record_type, entry in reversed(steps) if request_first else steps:
        index.add(record_type, URL, entry, lambda: posted)
    (line,) = index.lines()
    key, _ts, fields = line.split(" ", 2)
    assert key == "example,forms)/submit?__wb_method=post&q=otters"
    assert json.loads(fields)["method"] == "POST"
    assert json.loads(fields)["requestBody"] == "q=otters"
    # a request of another address, or with a record between, marks nothing
    index = ExportIndex()
    index.add("response", URL, _entry(), lambda: posted)
    index.add("metadata", URL, None, lambda: posted)
    index.add("request", URL, None, lambda: posted)
    index.add("request", URL + "2", None, lambda: posted)
    index.add("response", URL, _entry(), lambda: posted)
    assert all("__wb_method" not in line for line in index.lines())
