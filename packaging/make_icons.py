"""Rasterise resources/icons/archiver.svg into every size the platforms need.

Writes into ``resources/icons/generated/`` (not committed: ``make dist`` runs this first):

- ``archiver-<n>.png`` for n in 16, 24, 32, 48, 64, 128, 256, 512, 1024 (Linux hicolor theme,
  AppImage, window icons);
- ``archiver.ico`` (Windows: 16..256 in one file);
- ``archiver.icns`` (macOS: 16..1024).

QtSvg's ``QSvgRenderer`` (PySide6-Essentials, a runtime dependency) does the rasterising;
Pillow (dev group) writes ICO and ICNS. Run: ``.venv/bin/python packaging/make_icons.py``.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "resources" / "icons" / "archiver.svg"
OUTPUT = ROOT / "resources" / "icons" / "generated"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512, 1024)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICNS_SIZES = (16, 32, 64, 128, 256, 512, 1024)


def render_png(svg: Path, size: int) -> bytes:
    """The SVG drawn on a transparent ``size`` x ``size`` canvas, as PNG bytes."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    if QGuiApplication.instance() is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        render_png.app = QGuiApplication(sys.argv[:1])  # type: ignore[attr-defined]
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


def make_icons(svg: Path = SOURCE, out: Path = OUTPUT) -> list[Path]:
    """Write every PNG size, the ICO and the ICNS; return the files written."""
    from PIL import Image

    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    images: dict[int, Image.Image] = {}
    for size in PNG_SIZES:
        png = render_png(svg, size)
        path = out / f"archiver-{size}.png"
        path.write_bytes(png)
        written.append(path)
        images[size] = Image.open(io.BytesIO(png)).convert("RGBA")

    ico = out / "archiver.ico"
    # Pillow builds each ICO entry by resizing the first image; start from the largest.
    images[max(ICO_SIZES)].save(
        ico,
        format="ICO",
        sizes=[(s, s) for s in ICO_SIZES],
        append_images=[images[s] for s in ICO_SIZES],
    )
    written.append(ico)

    icns = out / "archiver.icns"
    images[max(ICNS_SIZES)].save(
        icns, format="ICNS", append_images=[images[s] for s in ICNS_SIZES if s != 1024]
    )
    written.append(icns)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svg", type=Path, default=SOURCE)
    parser.add_argument("--out", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    for path in make_icons(args.svg, args.out):
        print(
            f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}"
            f"  {path.stat().st_size} bytes"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
