"""A captured page's screenshot: the whole page, else the part the window shows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from archiver_app.capture.extract import first_line


async def page_screenshot(
    page: Any, timeout_ms: float, reasons: list[str], broken: Callable[[], bool]
) -> bytes | None:
    """The whole page; when that fails (a page too tall to render in time), the part the
    window shows, which is better than none. Why it is partial or missing goes to
    ``reasons``; ``broken`` says whether the tab or browser is gone (then no second try)."""
    try:
        shot: bytes = await page.screenshot(
            full_page=True, type="png", timeout=max(2000.0, timeout_ms)
        )
        return shot
    except Exception as exc:
        if broken():
            reasons.append(f"screenshot failed: {first_line(exc)}")
            return None
        why = first_line(exc)
    try:
        shot = await page.screenshot(full_page=False, type="png", timeout=5000.0)
    except Exception as exc:
        reasons.append(f"screenshot failed: {why}; {first_line(exc)}")
        return None
    reasons.append(f"screenshot of the visible part only (the whole page: {why})")
    return shot
