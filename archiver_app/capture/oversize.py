"""A page whose own document is over the body size limit: failed the moment it passed it.

The recorder reports the passing (``on_oversize``) as the first bytes over the limit
arrive, and the page is told to stop loading; yet a tab busy with a document that large
neither ended its load nor drew a screenshot before the page's time limit (a 2 GB page
took 14 s to fail with a 6 s limit: the load until the limit, then two screenshots timed
out). So the load is given up as soon as the page's own document passes the limit
(:func:`load_unless_oversize`), and the capture makes only what a failed snapshot keeps:
its WARC records, the error (:func:`oversize_error`), and the title and snippet of the
text the tab shows (read within :data:`OVERSIZE_TEXT_SECONDS`). The DOM and screenshot,
which a failed capture never stores, are not made; nor does the page get its login check
(whose evidence is those views) or its other screens' images.

Threading contract: used from the page's event loop only.
"""

from __future__ import annotations

import asyncio
from typing import Any

#: How long the text of a page already failed for its size is waited for (its snippet).
OVERSIZE_TEXT_SECONDS = 5.0


def oversize_error(max_body: int) -> str:
    """The error of a page whose own document is over ``max_body`` bytes."""
    return f"the response is larger than the {max_body} byte limit"


async def load_unless_oversize(
    page: Any, url: str, *, timeout_ms: float, oversize: asyncio.Event
) -> None:
    """Load ``url`` in ``page`` until its load event, as ``page.goto`` does (and raising
    what it raises), or until ``oversize`` is set: then the load is given up (cancelling
    Playwright's call aborts it) and this returns."""
    load = asyncio.ensure_future(page.goto(url, wait_until="load", timeout=timeout_ms))
    over = asyncio.ensure_future(oversize.wait())
    try:
        await asyncio.wait([load, over], return_when=asyncio.FIRST_COMPLETED)
    finally:  # (cancelled too: no load outlives the page's capture)
        over.cancel()
        if not load.done():
            load.cancel()
            await asyncio.wait([load])
    if not load.cancelled():
        load.result()
