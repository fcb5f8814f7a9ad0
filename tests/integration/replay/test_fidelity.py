"""Capture the local test site with real Chromium, replay it in the app's QtWebEngine view
offscreen, and measure: screenshot pixels against the capture's screenshot, and the URLs
the replay requested against those captured. The live site must see no request at all."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageChops
from pytestqt.qtbot import QtBot
from sqlalchemy import text

from archiver_app.capture.engine import capture_urls
from archiver_app.gui.replay.network import NOT_ARCHIVED, REDIRECT, SERVED
from archiver_app.gui.replay.render import render
from archiver_app.library import Library
from tests.helpers.testsite import OTHER_CANDIDATES, start_site

pytestmark = pytest.mark.slow


def _pixel_agreement(a: Path, b: Path, tolerance: int = 24) -> tuple[float, float, tuple]:
    one, two = Image.open(a).convert("RGB"), Image.open(b).convert("RGB")
    width, height = min(one.width, two.width), min(one.height, two.height)
    box = (0, 0, width, height)
    diff = ImageChops.difference(one.crop(box), two.crop(box))
    red, green, blue = diff.split()
    worst = ImageChops.lighter(red, ImageChops.lighter(green, blue))  # max channel diff
    histogram = worst.histogram()
    total = width * height
    exact = histogram[0] / total
    close = sum(histogram[: tolerance + 1]) / total
    return exact, close, (one.size, two.size)


def test_capture_then_replay_offline_matches(
    qtbot: QtBot, library: Library, tmp_path: Path, record_property
) -> None:
    site = start_site()
    try:
        [result] = capture_urls(library, [site.index_url], concurrency=1)
        assert result.ok, result.error
        live_before = len(site.main.requests) + len(site.other.requests)

        shot = render(library, site.index_url, tmp_path / "replay.png", width=1280, height=800)
        live_after = len(site.main.requests) + len(site.other.requests)
    finally:
        site.close()

    # (0) Nothing reached the live site while replaying.
    assert live_after == live_before, site.main.requests[live_before:]
    assert shot.ok and shot.capture_ts

    # (a) Pixels against the screenshot taken at capture time.
    with library.engine.connect() as conn:
        rel = conn.execute(
            text("SELECT path FROM files WHERE snapshot_id = :s AND kind = 'screenshot'"),
            {"s": result.snapshot_id},
        ).scalar_one()
        captured = {
            row[0]
            for row in conn.execute(
                text(
                    "SELECT url FROM records WHERE snapshot_id = :s"
                    " AND record_type IN ('response', 'revisit')"
                ),
                {"s": result.snapshot_id},
            )
        }
    exact, close, sizes = _pixel_agreement(library.abspath(rel), tmp_path / "replay.png")
    print(
        f"\nreplay vs capture screenshot: {exact:.4f} equal pixels, {close:.4f} within "
        f"24/255, sizes {sizes}"
    )
    record_property("equal_pixel_fraction", exact)
    assert close >= 0.97, (exact, close, sizes)

    # (b) Every captured URL the replay asked for was served from the archive.
    asked = {e.url: e.outcome for e in shot.requests}
    unresolved = {u for u, o in asked.items() if o == NOT_ARCHIVED and u in captured}
    assert not unresolved
    served = {u for u, o in asked.items() if o in (SERVED, REDIRECT)}
    assert site.index_url in served
    missing = sorted(u for u in captured if u not in asked)
    extra = sorted(u for u, o in asked.items() if o == NOT_ARCHIVED)
    print(
        f"captured {len(captured)} URLs, replay requested {len(asked)}; "
        f"captured but not requested: {missing}; requested but not captured: {extra}"
    )
    record_property("captured_not_requested", missing)
    # the srcset candidates for other screens are captured for them, not asked for here
    shown = captured - {site.url(p) for p in OTHER_CANDIDATES}
    assert len(served & shown) >= 0.9 * len(shown), (missing, extra)
