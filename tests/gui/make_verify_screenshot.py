"""The verify results dialog for docs/screenshots/verify-results.png (not a test).

Builds a throw-away library with four captures (one intact, one rotten that a drive copy
restores, one altered after capture, one missing), runs the verify job through
``lib.integrity``, shows the dialog and grabs the screen with ImageMagick's ``import``.

Run: Xvfb :92 -screen 0 1280x800x24 & DISPLAY=:92 QT_QPA_PLATFORM=xcb \
     .venv/bin/python tests/gui/make_verify_screenshot.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PAGES = [
    ("https://www.example-climate.org/reports/2026-heatwave", "Heatwave report 2026"),
    ("https://riverwatch.example.net/flood-levels", "River levels and flood warnings"),
    ("https://city.example.gov/council/minutes/2026-10", "City council minutes, October 2026"),
    ("https://museum.example.org/exhibitions/maps", "Old maps of the harbour"),
]


def _library(tmp: Path) -> object:
    from archiver_app.importers.warcs import import_warc_file
    from archiver_app.library import Library
    from archiver_app.mirror import add_destination, run_mirror
    from tests.helpers.warcs import Resp, html_page, write_warc

    lib = Library.open(tmp / "library", create=True)
    paths = []
    for i, (url, title) in enumerate(PAGES):
        if i == 2:  # the first two get a copy on the drive
            drive = tmp / "Field drive"
            drive.mkdir()
            add_destination(lib, drive, "Field drive")
            run_mirror(lib)
        warc = write_warc(
            tmp / f"in{i}.warc.gz",
            [Resp(url, html_page(title, "words"), date=f"2026-1{i % 2}-0{i + 2}T09:30:00Z")],
        )
        import_warc_file(lib, warc, collection="research")
        paths.append(next((lib.root / "collections").rglob(f"in{i}.warc.gz")))
    data = bytearray(paths[1].read_bytes())
    data[200] ^= 0xFF  # bit rot: the drive still holds the captured bytes
    paths[1].write_bytes(bytes(data))
    paths[2].write_bytes(paths[2].read_bytes() + b"edited")  # altered, no copy anywhere
    paths[3].unlink()  # missing
    return lib


def main() -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from archiver_app.gui.verify_dialog import VerifyResultsDialog

    app = QApplication(sys.argv)
    out = ROOT / "docs" / "screenshots" / "verify-results.png"
    with tempfile.TemporaryDirectory() as tmp:
        lib = _library(Path(tmp))
        findings = lib.integrity.verify()  # type: ignore[attr-defined]
        dialog = VerifyResultsDialog(findings, lib)
        dialog.resize(860, 520)
        dialog.move(20, 20)
        dialog.show()

        def shoot() -> None:
            geo = dialog.frameGeometry()
            crop = f"{geo.width()}x{geo.height()}+{geo.x()}+{geo.y()}"
            subprocess.run(["import", "-window", "root", "-crop", crop, str(out)], check=True)
            app.quit()

        QTimer.singleShot(1500, shoot)
        app.exec()
        lib.close()  # type: ignore[attr-defined]
    print(out)


if __name__ == "__main__":
    main()
