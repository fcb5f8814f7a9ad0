"""What changed in a page's look between two captures: a pixel diff of the screenshots.

Both full-page screenshots are laid on one canvas the size of the larger (a page that grew
counts its new part as changed). A pixel has changed when any colour channel differs by
more than :data:`THRESHOLD` (anti-aliasing and JPEG-like noise stay below it). The changed
pixels are then pooled into cells of :data:`CELL` pixels, and touching cells are grouped
into boxes, which is what a person looks at: "this paragraph, that image". Pillow does the
pixel work in C; only the small cell grid is walked in Python.
"""

from __future__ import annotations

import io
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw

from archiver_app.errors import InputError

#: A channel difference at or below this is noise, not change.
THRESHOLD = 24
#: Side of the square cells changed pixels are pooled into before boxing.
CELL = 16
#: Screenshots larger than this (pixels) are refused: a decompression bomb, not a page.
MAX_PIXELS = 16_384 * 65_536


@dataclass(frozen=True)
class Box:
    x: int
    y: int
    width: int
    height: int


@dataclass(frozen=True)
class VisualDiff:
    width: int
    height: int
    changed_pixels: int
    share_changed: float  # changed_pixels / (width * height)
    boxes: tuple[Box, ...]

    @property
    def changed(self) -> bool:
        return self.changed_pixels > 0


def _load(source: Path | bytes) -> Image.Image:
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        image = Image.open(io.BytesIO(source) if isinstance(source, bytes) else source)
        image.load()
    except (OSError, Image.DecompressionBombError) as exc:
        raise InputError(f"cannot read the screenshot: {exc}") from exc
    return image.convert("RGB")


def _on_canvas(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    if image.size == size:
        return image
    canvas = Image.new("RGB", size, (255, 255, 255))
    canvas.paste(image, (0, 0))
    return canvas


def diff_images(old: Path | bytes, new: Path | bytes) -> VisualDiff:
    """The pixel diff of two screenshots (PNG or any format Pillow reads)."""
    a, b = _load(old), _load(new)
    size = (max(a.width, b.width), max(a.height, b.height))
    a, b = _on_canvas(a, size), _on_canvas(b, size)
    # Per pixel, the largest channel difference: split the difference image into bands
    # and take their lighter (maximum), then threshold to a 0/255 mask.
    r, g, bl = ImageChops.difference(a, b).split()
    mask = ImageChops.lighter(ImageChops.lighter(r, g), bl).point(
        lambda v: 255 if v > THRESHOLD else 0
    )
    changed = mask.histogram()[255]
    width, height = size
    boxes = _boxes(mask) if changed else ()
    return VisualDiff(
        width=width,
        height=height,
        changed_pixels=changed,
        share_changed=changed / (width * height) if width and height else 0.0,
        boxes=boxes,
    )


def _boxes(mask: Image.Image) -> tuple[Box, ...]:
    """Group changed cells that touch (8 neighbours) into boxes, in reading order."""
    cols = -(-mask.width // CELL)
    rows = -(-mask.height // CELL)
    # Any changed pixel in a cell marks the cell: the maximum over the cell, by reduction.
    grid = mask.reduce(CELL) if mask.width >= CELL and mask.height >= CELL else mask
    if grid.size != (cols, rows):
        grid = grid.resize((cols, rows), Image.Resampling.BOX)
    cells = grid.point(lambda v: 255 if v > 0 else 0).tobytes()
    seen = bytearray(len(cells))
    boxes = []
    for start, value in enumerate(cells):
        if not value or seen[start]:
            continue
        seen[start] = 1
        queue = deque([start])
        x0 = x1 = start % cols
        y0 = y1 = start // cols
        while queue:
            at = queue.popleft()
            cx, cy = at % cols, at // cols
            x0, x1, y0, y1 = min(x0, cx), max(x1, cx), min(y0, cy), max(y1, cy)
            for ny in (cy - 1, cy, cy + 1):
                if not 0 <= ny < rows:
                    continue
                for nx in (cx - 1, cx, cx + 1):
                    n = ny * cols + nx
                    if 0 <= nx < cols and cells[n] and not seen[n]:
                        seen[n] = 1
                        queue.append(n)
        x, y = x0 * CELL, y0 * CELL
        boxes.append(
            Box(
                x,
                y,
                min((x1 + 1) * CELL, mask.width) - x,
                min((y1 + 1) * CELL, mask.height) - y,
            )
        )
    return tuple(sorted(boxes, key=lambda b: (b.y, b.x)))


#: Pixels between a changed region and the line drawn around it, so the line never covers
#: what changed (a line of text whose last row the line's width would strike out), nor, a
#: thin line just outside, much of what is beside it (the line of text above).
OUTLINE_GAP = 0
OUTLINE_WIDTH = 2


def overlay(new: Path | bytes, boxes: tuple[Box, ...], *, colour: str = "#d62728") -> bytes:
    """The newer screenshot with each changed region outlined, as PNG bytes."""
    image = _load(new)
    draw = ImageDraw.Draw(image)
    out_by = OUTLINE_GAP + OUTLINE_WIDTH  # the gap and the line, outside the region
    for box in boxes:
        draw.rectangle(
            (
                max(0, box.x - out_by),
                max(0, box.y - out_by),
                min(image.width - 1, box.x + box.width - 1 + out_by),
                min(image.height - 1, box.y + box.height - 1 + out_by),
            ),
            outline=colour,
            width=OUTLINE_WIDTH,
        )
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()
