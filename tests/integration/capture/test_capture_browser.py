"""The capture browser runs the captured page and nothing else: no browser UI of its own.

Chromium 15x renders parts of its own window (the omnibox popup) as WebUI pages, each in a
renderer process of its own, made again for every new window: for every captured page.
``CAPTURE_FLAGS`` turns them off; with them, a crawl captured half as many pages a minute.
"""

from __future__ import annotations

import asyncio

import pytest

from archiver_app.capture.browser import find_browser, launch_options

pytestmark = pytest.mark.slow


def test_a_capture_window_brings_no_browser_ui_of_its_own() -> None:
    info = find_browser()
    if info is None:
        pytest.skip("no browser on this machine")

    async def targets() -> list[tuple[str, str]]:
        from playwright.async_api import async_playwright

        async with async_playwright() as pw:
            browser = await pw.chromium.launch(**launch_options(info))
            try:
                cdp = await browser.new_browser_cdp_session()
                for _ in range(2):  # each capture: a new context, a new window
                    context = await browser.new_context()
                    await context.new_page()
                await asyncio.sleep(0.5)  # the window's own pages come right after it
                found = await cdp.send("Target.getTargets")
            finally:
                await browser.close()
        return [(t["type"], t["url"]) for t in found["targetInfos"]]

    found = asyncio.run(targets())
    assert [t for t in found if t[0] != "page"] == []
    assert found == [("page", "about:blank")] * 2
