"""The migrator's passes set older objects aside from the cycle collector where Python
collects at allocations, and leave the app's process as they found it: collection off,
the app's own objects set aside (``gui/collector.py``), even when the app settles while a
pass runs on another thread."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from archiver_app.layout.migrator import _older_objects_frozen
from archiver_app.tasks.collector import collect_only_when_asked, set_aside_what_exists


@pytest.fixture
def unfrozen() -> Iterator[None]:
    was = gc.isenabled()
    gc.unfreeze()
    gc.enable()
    yield
    gc.unfreeze()
    if not was:
        gc.disable()
    else:
        gc.enable()


def test_a_pass_freezes_then_unfreezes_what_it_froze(unfrozen: None) -> None:
    with _older_objects_frozen():
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()


def test_a_pass_keeps_what_was_set_aside_before_it(unfrozen: None) -> None:
    gc.freeze()
    settled = gc.get_freeze_count()
    with _older_objects_frozen():
        kept = [object() for _ in range(100)]  # noqa: F841 - made during the pass
        assert gc.get_freeze_count() == settled
    assert gc.get_freeze_count() == settled


def test_a_pass_in_the_app_changes_nothing(unfrozen: None) -> None:
    """The app collects on its GUI thread only and has set its objects aside: a pass
    neither sets more aside (for good: they would never be collected) nor gives the
    app's back, and collection stays off."""
    collect_only_when_asked()
    set_aside_what_exists()
    settled = gc.get_freeze_count()
    with _older_objects_frozen():
        made = [[] for _ in range(1000)]
        assert gc.get_freeze_count() == settled
        assert not gc.isenabled()
    del made
    assert gc.get_freeze_count() == settled
    assert not gc.isenabled()


def test_a_pass_in_the_app_before_it_settles_sets_nothing_aside(unfrozen: None) -> None:
    collect_only_when_asked()  # the app has started; its window is not up yet
    with _older_objects_frozen():
        assert gc.get_freeze_count() == 0
    assert gc.get_freeze_count() == 0
    assert not gc.isenabled()


def test_the_app_settling_during_a_pass_keeps_what_it_set_aside(unfrozen: None) -> None:
    """A pass on a worker thread began while Python still collected at allocations; the
    app took collection over and set its objects aside meanwhile: they stay set aside."""
    inside, done = threading.Event(), threading.Event()

    def migrate() -> None:
        with _older_objects_frozen():
            inside.set()
            done.wait(10)

    worker = threading.Thread(target=migrate)
    worker.start()
    assert inside.wait(10)
    collect_only_when_asked()
    set_aside_what_exists()
    settled = gc.get_freeze_count()
    done.set()
    worker.join(10)
    # the worker's own frames, set aside with the rest, are freed as it ends
    assert gc.get_freeze_count() > settled // 2 > 0
    assert not gc.isenabled()
