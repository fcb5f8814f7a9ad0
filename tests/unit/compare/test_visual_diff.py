"""The screenshot diff: changed pixels, boxed regions, pages that grew, bad images."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageDraw

from archiver_app.compare.visual import CELL, OUTLINE_GAP, diff_images, overlay
from archiver_app.errors import InputError


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _page(height: int = 1200) -> Image.Image:
    image = Image.new("RGB", (800, height), "white")
    draw = ImageDraw.Draw(image)
    for y in range(20, height, 30):
        draw.text((20, y), f"line {y}", fill="black")
    return image


def test_identical_screenshots_have_no_change() -> None:
    page = _png(_page())
    diff = diff_images(page, page)
    assert not diff.changed and diff.boxes == () and diff.share_changed == 0.0


def test_two_changed_regions_are_two_boxes_around_them() -> None:
    old = _page()
    new = old.copy()
    draw = ImageDraw.Draw(new)
    draw.rectangle((100, 200, 299, 299), fill="red")  # 200 x 100
    draw.rectangle((500, 900, 549, 949), fill="blue")  # 50 x 50
    diff = diff_images(_png(old), _png(new))
    assert len(diff.boxes) == 2
    first, second = diff.boxes
    assert first.x <= 100 < 300 <= first.x + first.width and first.width <= 200 + 2 * CELL
    assert first.y <= 200 < 300 <= first.y + first.height
    assert second.x <= 500 and second.y <= 900 and second.width <= 50 + 2 * CELL
    # About the rectangles' area (text under them also changed).
    assert 0.02 < diff.share_changed < 0.03


def test_noise_below_the_threshold_is_not_change() -> None:
    old = Image.new("RGB", (400, 400), (200, 200, 200))
    new = Image.new("RGB", (400, 400), (210, 195, 205))
    assert not diff_images(_png(old), _png(new)).changed


def test_a_longer_page_counts_its_new_part() -> None:
    short, longer = _page(1000), _page(1500)
    diff = diff_images(_png(short), _png(longer))
    assert (diff.width, diff.height) == (800, 1500)
    assert diff.changed and all(box.y >= 1000 - CELL for box in diff.boxes)


def test_overlay_outlines_the_regions() -> None:
    old = _page()
    new = old.copy()
    ImageDraw.Draw(new).rectangle((100, 200, 299, 299), fill="red")
    diff = diff_images(_png(old), _png(new))
    marked = Image.open(io.BytesIO(overlay(_png(new), diff.boxes))).convert("RGB")
    box = diff.boxes[0]
    # the line runs outside the region, a gap away: what changed is not drawn over
    assert marked.getpixel((box.x + box.width // 2, box.y - OUTLINE_GAP - 1)) == (214, 39, 40)
    assert marked.getpixel((box.x - OUTLINE_GAP - 1, box.y + box.height // 2)) == (214, 39, 40)
    g = OUTLINE_GAP
    area = (box.x - g, box.y - g, box.x + box.width + g, box.y + box.height + g)
    assert marked.crop(area).tobytes() == new.convert("RGB").crop(area).tobytes()


def test_a_broken_screenshot_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="cannot read the screenshot"):
        diff_images(b"\x89PNG not really", _png(_page()))
