"""A video stored only as the byte ranges its player asked for plays through
``archiver serve`` in real Chromium.

A server that refuses a GET without ``Range`` leaves a capture with the parts and never the
whole file. Every range was answered with the same first part, and Chromium's player,
given the first bytes again where it asked for later ones, stopped (PIPELINE_ERROR_READ).
"""

from __future__ import annotations

from playwright.sync_api import sync_playwright

from archiver_app.capture.browser import launch_options, require_browser
from archiver_app.library import Library
from archiver_app.replay.server import ReplayServer
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.media import record_webm, video_state

PAGE = "https://video.example/"
VIDEO = "https://video.example/clip.webm"
PART = 64 * 1024
HTML = '<!doctype html><title>v</title><video preload="auto" muted src="/clip.webm"></video>'


def test_a_video_stored_in_parts_plays_from_them(library: Library) -> None:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**launch_options(require_browser()))  # type: ignore[arg-type]
        try:
            video = record_webm(browser)
            assert len(video) > 4 * PART, len(video)
            w = ArchiveWriter(library)
            w.response(PAGE, HTML, at=at(2025), page=True)
            for first in range(0, len(video) - PART, PART):  # all but the last part
                last = min(first + PART, len(video)) - 1
                w.response(
                    VIDEO,
                    video[first : last + 1],
                    at=at(2025),
                    status=206,
                    mime="video/webm",
                    headers=[("Content-Range", f"bytes {first}-{last}/{len(video)}")],
                )
            w.commit()
            server = ReplayServer(library).start()
            try:
                page = browser.new_page()
                page.goto(server.url_for(PAGE), wait_until="load")
                state = video_state(page.main_frame.child_frames[0])
            finally:
                server.close()
        finally:
            browser.close()
    assert state["error"] is None and int(str(state["ready"])) >= 2, state
    assert state["width"] == 320, state
