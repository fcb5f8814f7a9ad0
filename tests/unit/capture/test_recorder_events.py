"""The recorder's handling of events that name no fetch: nothing is recorded for them."""

from __future__ import annotations

from typing import Any

from archiver_app.capture.recorder import NetworkRecorder


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
