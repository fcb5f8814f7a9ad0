"""Fixtures every test folder may use: temporary libraries and a local web server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app.library import Library
from tests.helpers.webserver import LocalServer


@pytest.fixture
def library_root(tmp_path: Path) -> Path:
    return tmp_path / "library"


@pytest.fixture
def library(library_root: Path) -> Iterator[Library]:
    lib = Library.open(library_root, create=True)
    try:
        yield lib
    finally:
        lib.close()


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    server = LocalServer().start()
    try:
        yield server
    finally:
        server.stop()
