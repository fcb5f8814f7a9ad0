"""Python's cycle collector in the app: never at an allocation, only on the GUI thread.

Left to run at any allocation, a collector pass may fall on a worker thread (a table
read, the detail pane's, an operation's) and finalise a Python wrapper of a Qt object
there, deleting its QObject on a thread Qt does not allow (see
:mod:`archiver_app.tasks.collector`). As Anki does (``aqt/main.py``: automatic collection
off at start, :func:`gc.collect` on a timer and after a dialog closes), the app switches
automatic collection off as it starts (:meth:`GuiCollector.take_over`) and
:class:`GuiCollector` collects on the GUI thread, every ``check_ms``:

- the young generations once ``young_limit`` container objects more than were freed have
  been made since the last pass, by any thread (the middle one every tenth time, as
  Python does): memory held by cycles stays bounded through long work, such as a crawl
  watched in the window, for a short pass now and then (10,000 objects: about 1 ms);
- a full pass after ten middle ones (as Python), every ``full_every_ms`` in any case,
  and at the first check after a window or dialog closed (its widgets and the web pages
  they hold, often in cycles, are freed then rather than minutes later).

Once the window is up, :meth:`GuiCollector.settle` sets every object that exists aside
from the passes (:func:`gc.freeze`): the started app holds a few million long-lived
objects (Qt wrappers, the ORM, modules), and full passes that walked them all stopped
every thread, the GUI thread included, for 55-85 ms under ``tests/bench/bench_gui_work.py``.
Those objects are still freed by reference counting.

Threading contract: a :class:`GuiCollector` is made and used on the GUI thread only.
"""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication
from shiboken6 import getCppPointer

from archiver_app.tasks.collector import (
    collect_automatically,
    collect_only_when_asked,
    set_aside_what_exists,
)

#: How often the GUI thread looks at the collector's counts (ms); a look costs microseconds.
CHECK_MS = 250
#: Container objects made, net of those freed, that make a pass over the young
#: generations due (Python's own threshold is 700): such a pass takes about a millisecond.
YOUNG_LIMIT = 10_000
#: Longest time between two full passes (ms). Anki's timer: 15 minutes, with nothing else.
FULL_EVERY_MS = 5 * 60_000
#: Kinds of top-level widget whose closing calls for a full pass (not menus, tool tips).
_WINDOW_KINDS = (Qt.WindowType.Window, Qt.WindowType.Dialog, Qt.WindowType.Sheet)


class GuiCollector(QObject):
    """Runs Python's cycle collector on the GUI thread, from a timer (module docstring)."""

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        check_ms: int = CHECK_MS,
        young_limit: int = YOUNG_LIMIT,
        full_every_ms: int = FULL_EVERY_MS,
    ) -> None:
        super().__init__(parent)
        self.young_limit = young_limit
        self.full_every = full_every_ms / 1000
        self.passes = [0, 0, 0]  # passes run, by generation (tests, diagnostics)
        self._was_automatic = gc.isenabled()
        self._last_full = time.monotonic()
        self._windows: frozenset[int] = frozenset()
        self.timer = QTimer(self)
        self.timer.setInterval(check_ms)
        self.timer.timeout.connect(self.check)

    def take_over(self) -> None:
        """Switch automatic collection off (as the app starts): nothing collects until
        :meth:`settle` starts the timer, a short while later."""
        self._was_automatic = gc.isenabled()
        collect_only_when_asked()

    def settle(self, *, collect_first: bool = False) -> None:
        """Set what exists aside from the passes and check on the timer from now on. The
        app calls it once its window is up; ``collect_first`` once a window it replaced
        is gone (what was set aside with the old window is collected first)."""
        set_aside_what_exists(collect_first=collect_first)
        self._windows = self._shown_windows()
        self._last_full = time.monotonic()
        self.timer.start()

    def stop(self) -> None:
        """Stop collecting here; Python collects at allocations again if it did before
        :meth:`take_over` (tests and benchmarks that leave the process as they found it)."""
        self.timer.stop()
        if self._was_automatic:
            collect_automatically()

    def check(self) -> None:
        """Run the pass that is due, if any (the timer calls it)."""
        young, _middle, old = gc.get_count()
        shown = self._shown_windows()
        closed = bool(self._windows - shown)
        self._windows = shown
        overdue = time.monotonic() - self._last_full >= self.full_every
        if closed or overdue or old >= gc.get_threshold()[2]:
            self.collect(2)
        elif young >= self.young_limit:
            self.collect(1 if gc.get_count()[1] >= gc.get_threshold()[1] else 0)

    def collect(self, generation: int = 2) -> int:
        """One pass over ``generation`` and the younger ones, here; objects it freed."""
        found = gc.collect(generation)
        self.passes[generation] += 1
        if generation == 2:
            self._last_full = time.monotonic()
        return found

    @staticmethod
    def _shown_windows() -> frozenset[int]:
        """The shown windows and dialogs, by the address of their Qt object."""
        return frozenset(
            getCppPointer(w)[0]
            for w in QApplication.topLevelWidgets()
            if w.isVisible() and w.windowType() in _WINDOW_KINDS
        )
