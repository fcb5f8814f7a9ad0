"""The twin, the archived hostile pages and the Chromium that ``serve`` runs load them in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from archiver_app.capture.browser import launch_options, require_browser
from tests.integration.hostile.twin import Twin


@pytest.fixture
def twin() -> Iterator[Twin]:
    live = Twin()
    try:
        yield live
    finally:
        live.close()


@pytest.fixture
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(**launch_options(require_browser()))  # type: ignore[arg-type]
        try:
            yield chromium
        finally:
            chromium.close()
