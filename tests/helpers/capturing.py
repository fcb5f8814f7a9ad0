"""One :class:`~archiver_app.capture.engine.Capturer` kept open across the tests of a module.

Starting the Playwright driver and Chromium costs seconds of CPU; tests that capture into
the same library with the same settings share one browser here instead of starting their
own. The capturer lives on an event loop of its own (a ``Capturer`` lives on one loop),
run only while a capture is under way, so tests may still ``asyncio.run`` their own work.
Each page is still captured in a fresh browser context (no cookies or cache shared).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from archiver_app.capture.engine import Capturer, CaptureResult, PageRules
from archiver_app.library import Library

T = TypeVar("T")


class OpenCapturer:
    """A started :class:`Capturer` of ``library`` (keyword arguments as ``Capturer``'s);
    :meth:`close` it when done."""

    def __init__(self, library: Library, **options: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.capturer = Capturer(library, **options)
        try:
            self.loop.run_until_complete(self.capturer.__aenter__())
        except BaseException:
            self.loop.close()
            raise

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` (a coroutine using :attr:`capturer`) to its end."""
        return self.loop.run_until_complete(work)

    def capture(self, url: str, *, rules: PageRules, **kw: Any) -> CaptureResult:
        return self.run(self.capturer.capture(url, rules=rules, **kw))

    def close(self) -> None:
        try:
            self.run(self.capturer.__aexit__(None, None, None))
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.run_until_complete(self.loop.shutdown_default_executor())
            self.loop.close()
