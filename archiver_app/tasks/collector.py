"""Python's cycle collector: which thread runs it, and objects set aside from its passes.

Left alone, Python runs its cycle collector at any allocation, on whichever thread
allocated. In the desktop app that can be a worker thread, and a pass there finalises
whatever garbage it finds: a Python wrapper of a Qt object left in a reference cycle has
its QObject deleted on that thread, which Qt does not allow (a GUI test process died of a
segmentation fault in the collector while the detail pane's reader thread ran). So the
app's process collects only on its GUI thread (:func:`collect_only_when_asked`, then
``gui/collector.py``'s timer), as Anki's does. Everything else keeps Python's automatic
collection: the command line never changes it, and a child process started for
background work turns it back on (:func:`collect_automatically`) whatever it inherited.

:func:`gc.freeze` sets the objects that exist now aside from every pass (they are still
freed by reference counting): the app does it once its window is up
(:func:`set_aside_what_exists`), a migration pass for the objects older than it
(:func:`older_objects_set_aside`). A lock keeps the two from undoing each other when they
run on different threads of one process.

Threading contract: every function may be called from any thread.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()


def collect_only_when_asked() -> None:
    """Turn automatic collection off: from now on the caller runs :func:`gc.collect`
    (the app, on its GUI thread)."""
    with _lock:
        gc.disable()


def collect_automatically() -> None:
    """Python's own collection, at allocations, as in any new interpreter. A child
    process calls it first: one forked from the app would inherit the app's switch-off."""
    with _lock:
        gc.enable()


def set_aside_what_exists(*, collect_first: bool = False) -> None:
    """Move every object that exists now out of the collector's reach (:func:`gc.freeze`).

    ``collect_first``: the objects set aside before go back and a full pass frees the
    garbage among them first (the app, once a window it replaced is gone: cycles of the
    old window, set aside with it, would otherwise never be freed).
    """
    with _lock:
        if collect_first:
            gc.unfreeze()
            gc.collect()
        gc.freeze()


@contextlib.contextmanager
def older_objects_set_aside() -> Iterator[None]:
    """Keep automatic full passes to the objects made inside the block.

    Only where Python collects automatically and nothing is set aside yet (the command
    line, a child process): there the block freezes what exists and gives it back at its
    end. Where the collector is switched off, the process's owner decides when passes run
    (the app: on its GUI thread), and where objects are set aside already, they are the
    owner's: the block changes neither, so the process is left as it was found. Should
    the owner switch collection off while the block runs (the app settling on another
    thread), the block leaves the owner's frozen set in place.
    """
    with _lock:
        mine = gc.isenabled() and gc.get_freeze_count() == 0
        if mine:
            gc.freeze()
    try:
        yield
    finally:
        if mine:
            with _lock:
                if gc.isenabled():
                    gc.unfreeze()
