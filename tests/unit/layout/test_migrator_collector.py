"""The migrator's passes set older objects aside from the cycle collector, and leave the
app's own set-aside objects where the app put them (``gui.app.settle_collector``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from archiver_app.layout.migrator import _older_objects_frozen


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_a_pass_freezes_then_unfreezes_what_it_froze(unfrozen: None) -> None:
    with _older_objects_frozen():
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_a_pass_keeps_what_the_app_froze(unfrozen: None) -> None:
    gc.freeze()  # as the app does once its window is up
    settled = gc.get_freeze_count()
    with _older_objects_frozen():
        pass
    assert gc.get_freeze_count() >= settled
