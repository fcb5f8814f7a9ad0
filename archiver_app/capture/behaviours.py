"""Page behaviours: wait for the network to go quiet, scroll to load lazy content, settle.

Every wait is bounded by a deadline, so a page that never stops fetching (a long-poll, a
live ticker) still finishes within the per-page time limit.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from archiver_app.capture.recorder import NetworkRecorder

#: A request open longer than this without activity counts as long-lived (long-poll,
#: stream) and no longer keeps the network from being "quiet".
LONG_LIVED_SECONDS = 2.0

AUTOSCROLL_JS = """
async ([delay, maxSteps]) => {
  const root = document.scrollingElement || document.documentElement;
  let steps = 0;
  let last = -1;
  while (steps < maxSteps) {
    window.scrollBy(0, Math.max(200, Math.floor(window.innerHeight * 0.9)));
    await new Promise(r => setTimeout(r, delay));
    steps++;
    const bottom = window.scrollY + window.innerHeight >= root.scrollHeight - 2;
    if (bottom && window.scrollY === last) break;
    last = window.scrollY;
  }
  window.scrollTo(0, 0);
  return steps;
}
"""


async def wait_network_quiet(
    recorder: NetworkRecorder, *, deadline: float, quiet: float = 0.5
) -> bool:
    """Wait until no request started or ended for ``quiet`` seconds, ignoring long-lived
    ones. Returns False when ``deadline`` (a ``time.monotonic()`` value) came first."""
    while time.monotonic() < deadline:
        now = time.monotonic()
        busy = [
            x
            for x in recorder.in_flight
            if now - x.started < LONG_LIVED_SECONDS or now - x.last_activity < quiet
        ]
        if not busy and recorder.quiet_for() >= quiet:
            return True
        await asyncio.sleep(0.05)
    return False


async def autoscroll(page: Any, *, deadline: float, delay_ms: int = 80, max_steps: int = 80) -> int:
    """Scroll to the bottom in viewport-sized steps (lazy images load), then back to top."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return 0
    steps = await asyncio.wait_for(page.evaluate(AUTOSCROLL_JS, [delay_ms, max_steps]), remaining)
    return int(steps or 0)


async def settle(seconds: float, *, deadline: float) -> None:
    await asyncio.sleep(max(0.0, min(seconds, deadline - time.monotonic())))
