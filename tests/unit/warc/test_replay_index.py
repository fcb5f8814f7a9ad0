"""An export's index lists a page's address once per key: the record the page replays as,
not the answers it replaced (pywb and ReplayWeb.page would choose between them in opposite
ways)."""

from __future__ import annotations

import json

from archiver_app.warc.cdxj import ExportIndex, IndexEntry, replay_index
from archiver_app.warc.postkey import PostedRequest

URL = "https://consent.example/article"
KEY = "example,consent)/article"


def _entry(ts: str, n: int, page: int | None = None, chosen: bool = False) -> IndexEntry:
    fields = {"url": URL, "mime": "text/html", "status": "200", "offset": str(n)}
    return IndexEntry(URL, "response", 200, f"{KEY} {ts} {json.dumps(fields)}", page, chosen)


def _offsets(lines: list[str]) -> list[str]:
    return [json.loads(line.split(" ", 2)[2])["offset"] for line in lines]


def test_a_pages_superseded_answer_is_left_out() -> None:
    entries = [_entry("20250101000000", 1, page=7), _entry("20250101000001", 2, 7, chosen=True)]
    assert _offsets(replay_index(entries)) == ["2"]


def test_other_captures_of_the_address_stay() -> None:
    entries = [
        _entry("20250101000000", 1, page=7),
        _entry("20250101000001", 2, 7, chosen=True),
        _entry("20250101000002", 3),  # a record of no page (a WARC without pages)
        _entry("20250102000000", 4, 8, chosen=True),  # another page's capture
        _entry("20250102000000", 5, page=9),  # a page whose own record is not exported
    ]
    assert sorted(_offsets(replay_index(entries))) == ["2", "3", "4", "5"]


def test_an_answer_under_another_key_stays() -> None:
    """The page is the answer to a POST: its address's GET answer is not replaced by it."""
    index = ExportIndex()
    index.add("response", URL, _entry("20250101000000", 1, page=7), lambda: None)
    index.add("response", URL, _entry("20250101000001", 2, 7, chosen=True), lambda: None)
    index.add("request", URL, None, lambda: PostedRequest("POST", "agree=yes"))
    lines = index.lines()
    assert sorted(_offsets(lines)) == ["1", "2"]
    assert sorted(line.split(" ", 1)[0] for line in lines) == [
        KEY,
        KEY + "?__wb_method=post&agree=yes",
    ]
