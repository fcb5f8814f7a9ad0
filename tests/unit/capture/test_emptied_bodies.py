"""An answer the browser emptied for the page (Opaque Response Blocking) is not taken for
a cut-off body: it is fetched again, or written marked as not available, with the reason."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from archiver_app.capture.recorder import NetworkRecorder
from archiver_app.capture.results import ResourceOutcome
from archiver_app.warc.writer import CaptureWarcWriter
from tests.helpers.warcs import read_warc

FEED = "http://other.test/feed.json"


def _record(tmp_path: Path, headers: dict[str, str], got: bytes | str) -> tuple[Any, list[Any]]:
    """What the recorder writes for a fetch answered 200 with ``headers``, then aborted
    before a byte of its body arrived; fetching it again gives ``got``."""
    path = tmp_path / "capture.warc.gz"
    writer = CaptureWarcWriter(path, info={"software": "test"})
    asked: list[str] = []

    async def refetch(url: str, _h: dict[str, str], _status: int, _limit: int) -> bytes | str:
        asked.append(url)
        return got

    recorder = NetworkRecorder(object(), writer, refetch=refetch)

    async def capture() -> None:
        request = {"url": FEED, "method": "GET", "headers": {}}
        recorder._on_request({"requestId": "9", "type": "Fetch", "request": request})
        response = {"url": FEED, "status": 200, "headers": headers, "mimeType": "application/json"}
        recorder._on_response({"requestId": "9", "type": "Fetch", "response": response})
        recorder._on_failed({"requestId": "9", "errorText": "net::ERR_ABORTED"})
        assert not recorder.in_flight  # the page does not wait for it
        await recorder.finish(timeout=5.0)

    try:
        asyncio.run(capture())
    finally:
        writer.close()
    return recorder, [r for r in read_warc(path) if r.type == "response"] + [asked]


def test_an_emptied_answer_is_fetched_again_and_kept(tmp_path: Path) -> None:
    recorder, (stored, asked) = _record(tmp_path, {}, b'{"feed": 1}')
    assert asked == [FEED]
    assert (stored.payload, stored.warc.get("WARC-Truncated")) == (b'{"feed": 1}', None)
    assert [(r.url, r.outcome) for r in recorder.resources] == [(FEED, ResourceOutcome.COMPLETE)]
    assert recorder.notes == [f"{FEED}: body refetched (the browser kept it from the page)"]


def test_an_emptied_answer_not_fetched_again_says_why_it_is_empty(tmp_path: Path) -> None:
    recorder, (stored, _) = _record(tmp_path, {}, "the server answered 404, not 200")
    assert (stored.payload, stored.warc.get("WARC-Truncated")) == (b"", "unspecified")
    [resource] = recorder.resources
    assert resource.outcome.counts_against_fidelity  # no body: not a real empty one
    assert recorder.notes == [
        f"{FEED}: body not available (the browser kept it from the page; fetching it again: "
        "the server answered 404, not 200)"
    ]


def test_a_fetch_the_page_stopped_is_still_cut_off(tmp_path: Path) -> None:
    """An answer with its headers, aborted by the page, was cut off: not fetched again."""
    recorder, (stored, asked) = _record(tmp_path, {"Content-Type": "application/json"}, b"{}")
    assert asked == []
    assert (stored.payload, stored.warc.get("WARC-Truncated")) == (b"", "disconnect")
    assert [(r.url, r.outcome) for r in recorder.resources] == [(FEED, ResourceOutcome.FAILED)]


class _Forgetful:
    """A DevTools session that no longer holds any body, as the driver reports it."""

    async def send(self, method: str, _params: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError(
            f"CDPSession.send: Protocol error ({method}): No resource with given identifier found"
        )


def test_a_body_the_browser_no_longer_held_is_noted_in_plain_words(tmp_path: Path) -> None:
    path = tmp_path / "capture.warc.gz"
    writer = CaptureWarcWriter(path, info={"software": "test"})

    async def refetch(_url: str, _h: dict[str, str], _status: int, _limit: int) -> bytes | str:
        return b'{"feed": 1}'

    recorder = NetworkRecorder(_Forgetful(), writer, refetch=refetch)

    async def capture() -> None:
        request = {"url": FEED, "method": "GET", "headers": {}}
        recorder._on_request({"requestId": "9", "type": "Fetch", "request": request})
        response = {"url": FEED, "status": 200, "headers": {}, "mimeType": "application/json"}
        recorder._on_response({"requestId": "9", "type": "Fetch", "response": response})
        recorder._on_finished({"requestId": "9", "encodedDataLength": 11})
        await recorder.finish(timeout=5.0)

    try:
        asyncio.run(capture())
    finally:
        writer.close()
    [stored] = [r for r in read_warc(path) if r.type == "response"]
    assert stored.payload == b'{"feed": 1}'
    assert recorder.notes == [f"{FEED}: body refetched (the browser no longer held it)"]
