"""The recorder's handling of events that name no fetch: nothing is recorded for them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from archiver_app.capture.recorder import NetworkRecorder
from archiver_app.capture.refetch import record_missed
from archiver_app.capture.results import ResourceOutcome
from archiver_app.warc.httpmsg import HttpResponse
from archiver_app.warc.writer import CaptureWarcWriter


def test_a_worker_script_from_a_blob_is_no_exchange() -> None:
    """A worker's own script is reported only by its response (``session|id``); one made
    from a blob or data address was never fetched, and a record of it would be a response
    for ``blob:http://…`` with an empty Host (warcio then finds its payload digest wrong)."""
    recorder = NetworkRecorder(object(), None, route=lambda *_: None)  # type: ignore[arg-type]
    response: dict[str, Any] = {"url": "", "status": 200, "headers": {}}
    for url in ("blob:http://e.test/0b7c", "data:text/javascript,1"):
        recorder._on_response({"requestId": f"S1|{url[:4]}", "response": {**response, "url": url}})
    recorder._on_response(
        {"requestId": "S1|7", "response": {**response, "url": "http://e.test/sw.js"}}
    )
    assert [ex.hops[0].url for ex in recorder.exchanges.values()] == ["http://e.test/sw.js"]


def test_a_request_answered_only_by_a_stand_in_is_not_counted_missing(tmp_path: Path) -> None:
    """A service worker's script, asked for by the page and answered in the worker's own
    session before it was recorded, ends as 'no response' in the page's session; fetched
    again, its stand-in answers it, and the capture is not marked as missing it."""
    url = "http://e.test/sw.js"
    writer = CaptureWarcWriter(tmp_path / "capture.warc.gz", info={"software": "test"})
    recorder = NetworkRecorder(object(), writer)  # type: ignore[arg-type]

    async def stand_in(asked: str) -> tuple[HttpResponse, bytes] | str:
        headers = [("Content-Type", "text/javascript")]
        return (HttpResponse(200, "OK", headers), b"self.ok = 1;") if asked == url else "no"

    async def run() -> None:
        recorder._on_request({"requestId": "1", "request": {"url": url}, "type": "Other"})
        recorder._on_failed({"requestId": "1", "errorText": "net::ERR_ABORTED"})
        await recorder.drain(5)
        assert [r.outcome for r in recorder.resources] == [ResourceOutcome.NO_RESPONSE]
        await record_missed(recorder, [url], [url], stand_in)

    asyncio.run(run())
    writer.close()
    assert [(r.url, r.status, r.outcome) for r in recorder.resources] == [
        (url, 200, ResourceOutcome.COMPLETE)
    ]
