"""A page's load is given up the moment its own document passes the body limit.

:func:`load_unless_oversize` with a stand-in page whose ``goto`` waits as a page that never
fires its load event would: the limit passed ends the load at once (its call cancelled);
a load that ends first, or fails, is returned or raised as ``page.goto`` would.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from archiver_app.capture.oversize import load_unless_oversize


class Page:
    """``goto`` takes ``seconds``, then fails with ``error`` if given."""

    def __init__(self, seconds: float, error: Exception | None = None) -> None:
        self.seconds, self.error = seconds, error
        self.cancelled = False

    async def goto(self, url: str, *, wait_until: str, timeout: float) -> None:
        try:
            await asyncio.sleep(self.seconds)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        if self.error is not None:
            raise self.error


def test_the_limit_passed_ends_the_load_at_once() -> None:
    page = Page(10)

    async def run() -> float:
        over = asyncio.Event()
        asyncio.get_running_loop().call_later(0.05, over.set)
        began = time.monotonic()
        await load_unless_oversize(page, "http://e.test/", timeout_ms=10_000, oversize=over)
        return time.monotonic() - began

    assert asyncio.run(run()) < 5
    assert page.cancelled  # no load outlives the decision


def test_a_load_that_ends_or_fails_first_is_as_goto_left_it() -> None:
    async def load(page: Page) -> None:
        await load_unless_oversize(
            page, "http://e.test/", timeout_ms=1_000, oversize=asyncio.Event()
        )

    asyncio.run(load(Page(0)))
    with pytest.raises(TimeoutError, match="Timeout 1000ms"):
        asyncio.run(load(Page(0, TimeoutError("Timeout 1000ms exceeded"))))


def test_a_cancelled_capture_cancels_its_load() -> None:
    page = Page(10)

    async def run() -> None:
        task = asyncio.ensure_future(
            load_unless_oversize(
                page, "http://e.test/", timeout_ms=10_000, oversize=asyncio.Event()
            )
        )
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    assert page.cancelled
