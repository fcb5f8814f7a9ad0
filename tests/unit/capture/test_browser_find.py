"""Finding Playwright's Chromium asks Playwright's driver once, not per call or per process."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from archiver_app.capture import browser


def test_playwright_is_asked_once_and_a_download_meanwhile_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "browsers"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(browser, "_playwright_paths", {})
    asked: list[Path | None] = []
    real = browser._ask_playwright

    def counting() -> Path | None:
        asked.append(real())  # the real driver answers
        return asked[-1]

    monkeypatch.setattr(browser, "_ask_playwright", counting)

    async def in_a_loop() -> Path | None:
        return browser.playwright_chromium()

    # Playwright's sync driver refuses to start inside an event loop: no answer, not kept
    assert asyncio.run(in_a_loop()) is None
    assert asked == [None]
    asked.clear()
    assert browser.playwright_chromium() is None  # nothing downloaded there
    assert browser.playwright_chromium() is None
    assert len(asked) == 1 and asked[0] is not None
    assert asked[0].is_relative_to(tmp_path / "browsers")

    asked[0].parent.mkdir(parents=True)  # "playwright install" puts it there meanwhile
    asked[0].write_bytes(b"")
    assert browser.playwright_chromium() == asked[0]
    assert len(asked) == 1

    browser._playwright_paths.clear()  # as in a new process: the answer is remembered
    assert browser.playwright_chromium() == asked[0]
    assert len(asked) == 1
    remembered = tmp_path / "config" / "Archiver" / browser.REMEMBERED_FILE
    remembered.write_text("{not json")  # a damaged file is asked again, and rewritten
    browser._playwright_paths.clear()
    assert browser.playwright_chromium() == asked[0]
    assert len(asked) == 2
    asked.pop()

    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "elsewhere"))
    assert browser.playwright_chromium() is None  # another place: asked again
    assert len(asked) == 2


def test_the_driver_keeps_its_compiled_code_in_the_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("NODE_COMPILE_CACHE", "kept")  # restored afterwards
    monkeypatch.setenv("NODE_DISABLE_COMPILE_CACHE", "1")
    browser.use_driver_compile_cache()
    assert os.environ["NODE_COMPILE_CACHE"] == "kept"  # the user's choice stays
    monkeypatch.delenv("NODE_COMPILE_CACHE")
    browser.use_driver_compile_cache()
    assert "NODE_COMPILE_CACHE" not in os.environ  # node's own switch is respected
    monkeypatch.delenv("NODE_DISABLE_COMPILE_CACHE")

    with browser.sync_driver():  # how the app starts a driver: a real one starts, and stops
        pass
    folder = Path(os.environ["NODE_COMPILE_CACHE"])
    assert folder == tmp_path / "cache" / "Archiver" / "node-compile-cache"
    assert [p for p in folder.rglob("*") if p.is_file()]  # and kept what it compiled
