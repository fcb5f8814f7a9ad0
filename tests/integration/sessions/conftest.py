"""Fixtures for the login tests: the login site, an X display, a browser reachable over CDP."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.webserver import LocalServer
from tests.integration.sessions.site import LoginSite


@pytest.fixture
def login_site() -> Iterator[LoginSite]:
    server = LocalServer().start()
    try:
        yield LoginSite(server)
    finally:
        server.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def x_display() -> Iterator[str]:
    """A private Xvfb display for headed browser windows (``:N``)."""
    if shutil.which("Xvfb") is None:
        pytest.fail("Xvfb is needed for the login window tests (apt-get install xvfb)")
    # -displayfd: Xvfb picks a free display itself and writes its number
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", "1", "-screen", "0", "1280x900x24", "-nolisten", "tcp"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        number = proc.stdout.readline().strip()
        if not number.isdigit():
            pytest.fail("Xvfb did not start")
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.fixture
def cdp_browser(tmp_path: Path) -> tuple[Path, int]:
    """A browser launcher (for ``ARCHIVER_BROWSER``) that starts the system Chromium with a
    DevTools port as well, so a test can reach the window ``archiver login`` opens and act
    in it as a person would; returns (launcher, port)."""
    from archiver_app.capture.browser import find_browser

    real = find_browser()
    if real is None:
        pytest.fail("no Chromium to test with")
    port = _free_port()
    launcher = tmp_path / "chromium-with-devtools"
    launcher.write_text(
        f'#!/bin/sh\nexec "{real.path}" --remote-debugging-port={port} "$@"\n', encoding="utf-8"
    )
    launcher.chmod(0o755)
    return launcher, port


def archiver_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env
