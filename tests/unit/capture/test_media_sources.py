"""The sources of a page's videos and sounds nothing answered are fetched whole, as extras.

:func:`record_whole_media` with a stand-in that answers as a server would: together within
one byte limit, redirects written hop by hop, and a source the player already loaded through
a redirect is not fetched again.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from archiver_app.capture.recorder import NetworkRecorder
from archiver_app.capture.refetch import record_whole_media
from archiver_app.warc.httpmsg import HttpResponse
from archiver_app.warc.writer import CaptureWarcWriter
from tests.helpers.warcs import read_warc

BODY = b"x" * 40
SITE = "http://e.test"


class Server:
    """Answers a stand-in's fetch: ``/moved*`` redirect to ``/sound.ogg``, the rest 200."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, url: str, limit: int) -> tuple[HttpResponse, bytes] | str:
        self.asked.append(url)
        if "/moved" in url:
            return HttpResponse(302, "Found", [("Location", "/sound.ogg")]), b""
        if len(BODY) > limit:
            return f"{len(BODY)} bytes, over the {limit} byte limit"
        return HttpResponse(200, "OK", [("Content-Type", "audio/ogg")]), BODY


def _recorder(path: Path, max_body: int) -> NetworkRecorder:
    writer = CaptureWarcWriter(path, info={"software": "test"})
    return NetworkRecorder(object(), writer, max_body=max_body)


def test_sources_share_one_byte_limit_and_redirects_are_written(tmp_path: Path) -> None:
    path = tmp_path / "capture.warc.gz"
    recorder, server = _recorder(path, max_body=100), Server()
    sources = [f"{SITE}/a.mp4", f"{SITE}/a.mp4#t=5", f"{SITE}/moved.ogg", f"{SITE}/c.webm"]
    asyncio.run(record_whole_media(recorder, server, sources))
    assert recorder.writer is not None
    recorder.writer.close()
    written = [(r.uri, r.http_status) for r in read_warc(path) if r.type == "response"]
    assert written == [
        (f"{SITE}/a.mp4", 200),  # once: a media fragment is no other address
        (f"{SITE}/moved.ogg", 302),
        (f"{SITE}/sound.ogg", 200),
    ]
    over = "not fetched (40 bytes, over the 20 byte limit)"  # 20 of the 100 bytes left
    assert f"{SITE}/c.webm: a source of a video or sound; {over}" in recorder.notes
    assert [r.url for r in recorder.resources] == [u for u, _ in written]
    assert all(not r.outcome.counts_against_fidelity for r in recorder.resources)


def test_a_source_the_player_loaded_through_a_redirect_is_not_fetched_again(
    tmp_path: Path,
) -> None:
    recorder, server = _recorder(tmp_path / "capture.warc.gz", max_body=100), Server()
    moved, sound = f"{SITE}/moved.ogg", f"{SITE}/sound.ogg"
    recorder._on_request({"requestId": "1", "type": "Media", "request": {"url": moved}})
    redirect = {"url": moved, "status": 302, "headers": {"Location": "/sound.ogg"}}
    recorder._on_request(
        {"requestId": "1", "type": "Media", "request": {"url": sound}, "redirectResponse": redirect}
    )
    recorder._on_response({"requestId": "1", "response": {"url": sound, "status": 200}})
    asyncio.run(record_whole_media(recorder, server, [moved, sound]))
    assert recorder.writer is not None
    recorder.writer.abandon()
    assert server.asked == []
