"""A sound or video captured by its own address is kept whole as the page and replays.

Real Chromium against a local server that answers ``Range`` as media servers do. The tab
opens such a file in its player, which reads it again in parts (``206``): the navigation's
own ``200`` never gets its body. The capture keeps that ``200`` with the whole file (not
empty and cut off), the page is whole (fidelity ``high``), and replay answers the file
and any range of it. The browser gives such a page no title: it is named after the file,
its kind and (when the player knew it) its duration.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from archiver_app.capture.engine import Capturer, CaptureResult, PageRules
from archiver_app.library import Library
from archiver_app.replay import Replayer
from archiver_app.store.models import Snapshot
from tests.helpers.testsite import wav_tone
from tests.helpers.warcs import read_warc
from tests.helpers.webserver import LocalServer, Request, Response

pytestmark = pytest.mark.slow

RULES = PageRules(page_timeout=30, settle_seconds=0.3)


WAV = wav_tone()
MP4 = b"\x00\x00\x00\x18ftypmp42" + b"not really a video" * 4000  # the player gives up on it


def _ranged(data: bytes, ctype: str) -> Callable[[Request], Response]:
    def handle(req: Request) -> Response:
        header = req.headers.get("Range") or req.headers.get("range") or ""
        base = [("Accept-Ranges", "bytes")]
        if not header.startswith("bytes="):
            return Response(200, data, base, ctype)
        start_s, _, end_s = header[6:].partition("-")
        start, end = int(start_s or 0), min(int(end_s or len(data) - 1), len(data) - 1)
        content_range = ("Content-Range", f"bytes {start}-{end}/{len(data)}")
        return Response(206, data[start : end + 1], [*base, content_range], ctype)

    return handle


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalServer, Library]]:
    server = LocalServer().start()
    server.routes["/tone.wav"] = _ranged(WAV, "audio/x-wav")
    server.routes["/clip.mp4"] = _ranged(MP4, "video/mp4")
    lib = Library.open(tmp_path_factory.mktemp("media-page") / "library", create=True)
    try:
        yield server, lib
    finally:
        lib.close()
        server.stop()


def _capture(lib: Library, url: str) -> CaptureResult:
    async def run() -> CaptureResult:
        async with Capturer(lib, concurrency=1) as cap:
            return await cap.capture(url, rules=RULES)

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("path", "body", "title"),
    [("/tone.wav", WAV, "tone.wav (audio, 0:02)"), ("/clip.mp4", MP4, "clip.mp4 (video)")],
)
def test_a_sound_or_video_captured_by_its_address_is_kept_whole(
    served: tuple[LocalServer, Library], path: str, body: bytes, title: str
) -> None:
    server, lib = served
    url = server.url(path)
    result = _capture(lib, url)
    assert result.ok and result.http_status == 200, result.error
    assert result.fidelity == "high", result.fidelity
    with lib.session() as s:
        snap = s.get(Snapshot, result.snapshot_id)
        assert snap is not None and snap.warc_file
        warc, notes = lib.abspath(snap.warc_file), snap.provenance["notes"]
        assert snap.title == title  # named as the browser names an image: photo.png (400×300)
    assert any(r.route == path and "Range" in r.headers for r in server.requests)  # the player's
    whole = [r for r in read_warc(warc) if r.type == "response" and r.http_status == 200]
    assert [(r.uri, r.payload, r.warc.get("WARC-Truncated")) for r in whole] == [(url, body, None)]
    assert f"{url}: body refetched (the browser's player read the file itself, in parts)" in notes
    replayer = Replayer.for_library(lib)
    got = replayer.serve(url)
    assert (got.status, got.body) == (200, body)
    part = replayer.serve(url, range_header="bytes=100-199")
    assert (part.status, part.body) == (206, body[100:200])
