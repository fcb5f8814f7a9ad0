"""Comparing captures: text diff of two 1 MB page texts, pixel diff of two full-page screenshots.

Targets (issue "Watch and compare"): text diff <= 200 ms, visual diff <= 1 s. Anchors run
side by side on the same inputs: GNU ``diff`` on the two texts (as files), ImageMagick's
``compare -metric AE`` on the two PNGs (it decodes both, differences every pixel and counts,
but draws no boxes). Ratios are ours / anchor, medians of ``--repeat`` runs.

    .venv/bin/python tests/bench/bench_compare.py [--lines 18000] [--height 12000]
"""

from __future__ import annotations

import argparse
import io
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from archiver_app.compare.text import diff_texts
from archiver_app.compare.visual import diff_images
from tests.bench.common import best_and_median, report


def make_texts(lines: int, seed: int = 7) -> tuple[str, str]:
    """Two page texts of about ``lines`` lines: every 400th line edited, a block removed."""
    rng = random.Random(seed)
    words = ["harbour", "tide", "ferry", "quay", "storm", "pier", "gull", "salt", "notice"]
    old = [" ".join(rng.choice(words) for _ in range(10)) for _ in range(lines)]
    new = list(old)
    for i in range(0, lines, 400):
        new[i] = "edited " + new[i]
    del new[lines // 2 : lines // 2 + 20]
    return "\n".join(old), "\n".join(new)


def make_screens(height: int) -> tuple[bytes, bytes]:
    """Two 1280 px wide full-page screenshots of text; the newer with two changed blocks."""
    old = Image.new("RGB", (1280, height), "white")
    draw = ImageDraw.Draw(old)
    for y in range(10, height, 24):
        draw.text(
            (24, y), f"Line {y} of the harbour notices page, with its ferry times", fill="black"
        )
    new = old.copy()
    changed = ImageDraw.Draw(new)
    changed.rectangle((100, height // 4, 500, height // 4 + 300), fill=(30, 90, 200))
    changed.rectangle((700, height * 3 // 4, 1100, height * 3 // 4 + 120), fill=(200, 40, 40))
    out = []
    for image in (old, new):
        buf = io.BytesIO()
        image.save(buf, "PNG")
        out.append(buf.getvalue())
    return out[0], out[1]


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=18_000, help="lines per text (~1 MB)")
    parser.add_argument("--height", type=int, default=12_000, help="screenshot height (px)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    old_text, new_text = make_texts(args.lines)
    old_png, new_png = make_screens(args.height)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp, "a.txt"), Path(tmp, "b.txt")
        a.write_text(old_text), b.write_text(new_text)
        pa, pb = Path(tmp, "a.png"), Path(tmp, "b.png")
        pa.write_bytes(old_png), pb.write_bytes(new_png)

        _, ours_text = best_and_median(lambda: diff_texts(old_text, new_text), args.repeat)
        figures["text_ms"] = ours_text * 1000
        _, ours_visual = best_and_median(lambda: diff_images(pa, pb), args.repeat)
        figures["visual_ms"] = ours_visual * 1000
        rows = [
            ("text", f"{len(old_text) / 1e6:.2f} MB / {len(new_text) / 1e6:.2f} MB"),
            ("text diff (ours)", f"{figures['text_ms']:.0f} ms (target <= 200 ms)"),
        ]
        if shutil.which("diff"):
            _, gnu = best_and_median(
                lambda: subprocess.run(["diff", str(a), str(b)], capture_output=True, check=False),
                args.repeat,
            )
            figures["text_vs_diff"] = ours_text / gnu
            rows.append(("GNU diff", f"{gnu * 1000:.0f} ms: ratio {figures['text_vs_diff']:.2f}x"))
        rows += [
            ("screenshots", f"1280 x {args.height} px, PNG"),
            ("visual diff (ours)", f"{figures['visual_ms']:.0f} ms (target <= 1000 ms)"),
        ]
        if shutil.which("compare"):
            cmd = ["compare", "-metric", "AE", "-fuzz", "9%", str(pa), str(pb), "null:"]
            _, magick = best_and_median(
                lambda: subprocess.run(cmd, capture_output=True, check=False), args.repeat
            )
            figures["visual_vs_magick"] = ours_visual / magick
            rows.append(
                (
                    "ImageMagick compare",
                    f"{magick * 1000:.0f} ms: ratio {figures['visual_vs_magick']:.2f}x",
                )
            )
    report("Comparing captures (medians)", rows)
    return figures


if __name__ == "__main__":
    main()
