"""POST and PUT index keys agree with cdxj-indexer's --post-append, for request records in
either request-line form, and pair with their response written before or after them."""

from __future__ import annotations

import gzip
import io
import json

import pytest
import surt
from cdxj_indexer.postquery import append_method_query

from archiver_app.warc.cdxj import ExportIndex, IndexEntry
from archiver_app.warc.postkey import PostedRequest, body_query, posted_request

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
        ("application/json", b'{"a": 1, "b": {"a": [true, "x"]}, "c": null}'),
        ("text/plain", b"not json"),
        ("application/octet-stream", bytes(range(40))),
        ("application/json", b"{broken"),
    ],
)
def test_the_query_is_cdxj_indexers(mime: str, body: bytes) -> None:
    theirs, appended = append_method_query("POST", mime, len(body), io.BytesIO(body), URL)
    assert body_query(mime, body) == theirs
    assert PostedRequest("POST", theirs).key(URL) == surt.surt(URL + appended)


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
