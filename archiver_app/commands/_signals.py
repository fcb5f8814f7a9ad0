"""Ctrl+C in a command that drives a browser: the first asks the work to end, the second
interrupts at once.

A ``KeyboardInterrupt`` raised inside a Playwright call can leave its connection waiting
forever for a reply, so a command whose work can stop cleanly (a login window, a browsing
session) turns the first Ctrl+C into a request its own loop looks at.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def first_ctrl_c(ask: Callable[[], None]) -> Iterator[None]:
    """While the block runs, the first SIGINT calls ``ask`` (from the main thread, between
    two statements); the next raises ``KeyboardInterrupt`` as usual. The handler in place
    before is restored after."""

    def on_sigint(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl+C: now
        ask()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
