"""``archiver browser install`` as a user runs it: Playwright's download, then the fallback.

The download is made to fail for real (Playwright is pointed at a closed port on this
machine), so the Debian fallback runs for real too: ``apt-get install -y chromium``, which
on a machine that already has the package installs nothing and finds it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from archiver_app.capture.browser import BROWSER_ENV, find_browser

ARCHIVER = Path(sys.executable).with_name("archiver")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ARCHIVER), *args], capture_output=True, text=True, timeout=300, env=env, check=False
    )


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != BROWSER_ENV}
    # An empty browsers folder: Playwright's own Chromium is not there, and its download
    # goes to a port where nothing listens, so it fails at once.
    env["PLAYWRIGHT_BROWSERS_PATH"] = str(tmp_path / "browsers")
    env["PLAYWRIGHT_DOWNLOAD_HOST"] = f"http://127.0.0.1:{_closed_port()}"
    return env


def test_if_missing_does_nothing_when_a_browser_is_found(tmp_path: Path) -> None:
    if find_browser() is None:
        pytest.skip("no browser on this machine")
    result = run("browser", "install", "--if-missing", env=_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("browser: ")
    assert "$ " not in result.stdout  # no install command was run


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() != 0 or shutil.which("apt-get") is None,
    reason="the system-package fallback runs only as root on Debian or Ubuntu",
)
def test_a_failed_download_falls_back_to_the_system_package(tmp_path: Path) -> None:
    result = run("browser", "install", env=_env(tmp_path))
    out = result.stdout
    assert "playwright install chromium" in out
    assert "Playwright's download failed; installing the system package instead" in out
    assert "$ apt-get install -y chromium" in out
    assert result.returncode == 0, out + result.stderr
    assert out.rstrip().splitlines()[-1].startswith("browser: ")
    assert "Chromium" in out.rstrip().splitlines()[-1]


def test_no_browser_at_all_says_how_to_get_one(tmp_path: Path) -> None:
    env = _env(tmp_path)
    env[BROWSER_ENV] = str(tmp_path / "no-such-browser")
    result = run("browser", env=env)
    assert result.returncode == 1
    assert f"{BROWSER_ENV} is set to" in result.stdout
