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


@pytest.fixture(params=["sqlite", "postgresql"])
def any_library(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Library]:
    """A library on SQLite, then one on PostgreSQL (a shared library's database)."""
    url = request.getfixturevalue("postgres_url") if request.param == "postgresql" else None
    lib = Library.open(tmp_path / "lib", database_url=url)
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
