"""The twin and the archived hostile pages, shared by the app and ``serve`` runs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.hostile.twin import Twin


@pytest.fixture
def twin() -> Iterator[Twin]:
    live = Twin()
    try:
        yield live
    finally:
        live.close()
