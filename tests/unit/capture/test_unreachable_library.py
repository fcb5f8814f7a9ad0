"""A capture whose library cannot be asked whether it holds a payload already (a shared
library's database went away mid-page) still records the page: the payload is written
whole. And a page whose answer could not be written is not said to have given none."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from archiver_app.capture.page import _why_no_record
from archiver_app.capture.recorder import NetworkRecorder
from archiver_app.warc.httpmsg import HttpResponse
from archiver_app.warc.writer import CaptureWarcWriter, RevisitOf
from tests.helpers.warcs import read_warc

PAGE = "http://e.test/slow/x1.html"
BODY = "<html><title>x1</title><p>slow page 1</p></html>"


class _Cdp:
    """The DevTools session of a tab: gives the page's body back."""

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert method == "Network.getResponseBody", method
        return {"body": BODY, "base64Encoded": False}


def _unreachable(_digest: str) -> RevisitOf | None:
    raise OSError("connection to server on socket failed: Connection refused")


def _load_page(recorder: NetworkRecorder) -> None:
    """The events of the tab's main document: asked for, answered, loaded."""
    recorder.main_frame_id = "F"
    request = {"url": PAGE, "method": "GET", "headers": {}}
    recorder._on_request({"requestId": "1", "type": "Document", "frameId": "F", "request": request})
    response = {"url": PAGE, "status": 200, "headers": {"Content-Type": "text/html"},
                "mimeType": "text/html"}  # fmt: skip
    recorder._on_response({"requestId": "1", "type": "Document", "response": response})
    recorder._on_finished({"requestId": "1"})


def test_a_page_whose_payload_lookup_fails_is_recorded_whole(tmp_path: Path) -> None:
    path = tmp_path / "capture.warc.gz"
    writer = CaptureWarcWriter(path, info={"software": "test"})
    recorder = NetworkRecorder(_Cdp(), writer, dedup=_unreachable)

    async def capture() -> None:
        _load_page(recorder)
        await recorder.drain(5.0)
        await recorder.finish(timeout=5.0)

    asyncio.run(capture())
    writer.close()
    assert recorder.main.record is not None  # the page has its record
    [stored] = [r for r in read_warc(path) if r.type in ("response", "revisit")]
    assert (stored.type, stored.uri, stored.payload) == ("response", PAGE, BODY.encode())
    assert recorder.write_errors == []
    assert [n for n in recorder.notes if "written whole" in n] == [
        f"{PAGE}: written whole: is it in the library already? "
        "(connection to server on socket failed: Connection refused)"
    ]
    assert _why_no_record(recorder) != "the page produced no response"


def test_a_stand_in_whose_payload_lookup_fails_is_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "capture.warc.gz"
    writer = CaptureWarcWriter(path, info={"software": "test"})
    recorder = NetworkRecorder(object(), writer, dedup=_unreachable)
    video = "http://e.test/clip.webm"
    answer = HttpResponse(200, "OK", [("Content-Type", "video/webm")])

    assert asyncio.run(recorder.write_stand_in(video, answer, b"\x1a\x45\xdf\xa3 clip"))
    writer.close()
    [stored] = [r for r in read_warc(path) if r.type in ("response", "revisit")]
    assert (stored.type, stored.uri) == ("response", video)


class _BrokenWriter(CaptureWarcWriter):
    def write_exchange(self, *args: Any, **kwargs: Any) -> Any:
        raise OSError("No space left on device")


def test_a_page_whose_answer_could_not_be_written_is_not_said_to_have_given_none(
    tmp_path: Path,
) -> None:
    writer = _BrokenWriter(tmp_path / "capture.warc.gz", info={"software": "test"})
    recorder = NetworkRecorder(_Cdp(), writer)

    async def capture() -> None:
        _load_page(recorder)
        await recorder.drain(5.0)
        await recorder.finish(timeout=5.0)

    asyncio.run(capture())
    writer.abandon()
    assert recorder.main.record is None
    assert _why_no_record(recorder) == (
        "the page answered, but its record could not be written (No space left on device)"
    )
    assert _why_no_record(NetworkRecorder(_Cdp(), writer)) == "the page produced no response"
