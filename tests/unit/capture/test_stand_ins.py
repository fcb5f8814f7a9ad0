"""A response fetched again stands in for the browser's request that got none."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from archiver_app.capture.recorder import NetworkRecorder
from archiver_app.capture.refetch import record_missed
from archiver_app.capture.results import ResourceOutcome
from archiver_app.warc.httpmsg import HttpResponse
from archiver_app.warc.writer import CaptureWarcWriter
from tests.helpers.warcs import read_warc

SW = "http://e.test/sw.js"
SCRIPT = b"self.addEventListener('install', () => {});"


async def _stand_in(url: str, limit: int) -> tuple[HttpResponse, bytes]:
    return HttpResponse(200, "OK", [("Content-Type", "text/javascript")]), SCRIPT


def _request(rid: str) -> dict[str, Any]:
    return {"requestId": rid, "type": "Other", "request": {"url": SW, "method": "GET"}}


@pytest.mark.parametrize("failed_first", [True, False])
def test_a_service_worker_script_fetched_again_is_not_a_missing_resource(
    tmp_path: Path, failed_first: bool
) -> None:
    """The page's session sees the request for its service worker's script but never its
    response (that goes to the worker's own target): the script is fetched again and
    written, and the request's "no response" no longer counts against the capture's
    fidelity, whether it was written before the stand-in or after."""
    path = tmp_path / "capture.warc.gz"
    writer = CaptureWarcWriter(path, info={"software": "test"})
    recorder = NetworkRecorder(object(), writer)

    async def capture() -> None:
        recorder._on_request(_request("7"))
        if failed_first:
            recorder._on_failed({"requestId": "7", "errorText": "net::ERR_ABORTED"})
            await recorder.drain(5.0)
        await record_missed(recorder, [SW], [SW], _stand_in)
        if not failed_first:
            recorder._on_failed({"requestId": "7", "errorText": "net::ERR_ABORTED"})
        await recorder.finish(timeout=5.0)

    asyncio.run(capture())
    writer.close()
    assert [(r.url, r.outcome) for r in recorder.resources] == [(SW, ResourceOutcome.COMPLETE)]
    assert not [r for r in recorder.resources if r.outcome.counts_against_fidelity]
    responses = [r for r in read_warc(path) if r.type == "response"]
    assert [(r.uri, r.payload) for r in responses] == [(SW, SCRIPT)]
