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


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_the_headless_shell_is_known_by_its_names_and_never_found_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("chromium-headless-shell", "headless_shell", "chrome-headless-shell.exe"):
        assert browser.is_headless_shell(Path("/x") / name)
    for name in ("chromium", "chrome", "google-chrome", "headless", "shell"):
        assert not browser.is_headless_shell(Path("/x") / name)

    # Playwright's downloads: the shell sits beside its Chromium, in a folder of its own
    store = tmp_path / "ms-playwright"
    chrome = _executable(store / "chromium-1200" / "chrome-linux" / "chrome")
    shell = _executable(store / "chromium_headless_shell-1200" / "chrome-linux" / "headless_shell")
    _executable(shell.with_name("libEGL.so"))
    monkeypatch.setattr(browser, "playwright_chromium", lambda: chrome)
    monkeypatch.setattr(browser.shutil, "which", lambda _name: None)
    monkeypatch.setattr(browser, "DEBIAN_SHELL", str(tmp_path / "not-installed"))
    monkeypatch.delenv(browser.BROWSER_ENV, raising=False)
    assert browser.find_headless_shell() == shell
    found = browser.find_browser()
    assert found is not None and found.path == chrome and not found.headless_shell

    # laid out deeper (macOS), named as newer Playwright names it
    mac = tmp_path / "mac" / "chromium-1300" / "chrome-mac" / "Chromium.app" / "Contents"
    mac_chrome = _executable(mac / "MacOS" / "Chromium")
    mac_shell = _executable(
        tmp_path / "mac" / "chromium_headless_shell-1300" / "chrome-headless-shell-mac-arm64"
        / "chrome-headless-shell"
    )  # fmt: skip
    monkeypatch.setattr(browser, "playwright_chromium", lambda: mac_chrome)
    assert browser.find_headless_shell() == mac_shell
    monkeypatch.setattr(browser, "playwright_chromium", lambda: chrome)

    debian = _executable(tmp_path / "usr-lib-chromium" / "chromium-headless-shell")
    monkeypatch.setattr(browser, "DEBIAN_SHELL", str(debian))
    assert browser.find_headless_shell() == debian
    monkeypatch.setattr(browser, "playwright_chromium", lambda: None)
    monkeypatch.setattr(browser, "DEBIAN_SHELL", str(tmp_path / "not-installed"))
    assert browser.find_headless_shell() is None


def test_a_chosen_headless_shell_captures_and_windows_open_another_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shell = _executable(tmp_path / "chromium-headless-shell")
    full = _executable(tmp_path / "system" / "chromium")
    monkeypatch.setenv(browser.BROWSER_ENV, str(shell))
    monkeypatch.setattr(browser, "playwright_chromium", lambda: None)
    monkeypatch.setattr(browser, "system_candidates", lambda: [("Chromium", full)])

    chosen = browser.require_browser()
    assert chosen.path == shell and chosen.headless_shell
    assert "headless shell" in chosen.describe()
    window = browser.require_browser(windows=True)
    assert window.path == full and not window.headless_shell

    monkeypatch.setattr(browser, "system_candidates", lambda: [])
    with pytest.raises(browser.BrowserNotFoundError) as raised:
        browser.require_browser(windows=True)
    assert "headless shell" in raised.value.message and "opens no windows" in raised.value.message
    assert "archiver browser install" in raised.value.message
    assert browser.require_browser().path == shell  # captures still have theirs

    shell.unlink()  # a chosen shell that is gone is said to be gone, for windows too
    with pytest.raises(browser.BrowserNotFoundError) as raised:
        browser.require_browser(windows=True)
    assert f"is set to {shell}, which is not a file" in raised.value.message


def test_archiver_browser_mentions_an_installed_headless_shell_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app.cli import main

    shell = _executable(tmp_path / "chromium-headless-shell")
    full = _executable(tmp_path / "system" / "chromium")
    monkeypatch.delenv(browser.BROWSER_ENV, raising=False)
    monkeypatch.setattr(browser, "playwright_chromium", lambda: None)
    monkeypatch.setattr(browser, "system_candidates", lambda: [("Chromium", full)])
    monkeypatch.setattr(browser, "DEBIAN_SHELL", str(shell))
    assert main(["browser"]) == 0
    first, hint = capsys.readouterr().out.splitlines()
    assert first.startswith("Chromium") and first.endswith(f"(system) at {full}")
    assert hint.startswith(f"also installed: Chromium's headless shell at {shell}: ")
    assert f"{browser.BROWSER_ENV}={shell}" in hint

    monkeypatch.setenv(browser.BROWSER_ENV, str(shell))  # chosen: no hint, and said so
    assert main(["browser"]) == 0
    [only] = capsys.readouterr().out.splitlines()
    assert only.endswith(f"(env, headless shell) at {shell}")
