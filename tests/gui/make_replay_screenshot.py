"""Screenshot of a replay tab for docs/screenshots (run under Xvfb, not a test).

Captures the local test site with the real browser into a fresh library, opens the main
window, opens the capture's replay tab and saves what the window shows.

Run: xvfb-run -a -s "-screen 0 1400x900x24" .venv/bin/python tests/gui/make_replay_screenshot.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    from archiver_app.capture.engine import capture_urls
    from archiver_app.gui.app import prepare_environment
    from archiver_app.library import Library
    from tests.helpers.testsite import start_site

    prepare_environment()
    from PySide6.QtWidgets import QApplication

    from archiver_app.gui.main_window import MainWindow

    site = start_site()
    root = Path(tempfile.mkdtemp(prefix="replay-shot-")) / "library"
    library = Library.open(root)
    results = capture_urls(library, [site.index_url], collection="default")
    assert results[0].ok, results[0].error
    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(library)
    window.resize(1400, 860)
    window.show()
    tab = window.open_replay_id(results[0].snapshot_id)
    assert tab is not None
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.05)
    out = ROOT / "docs" / "screenshots" / "replay.png"
    window.grab().save(str(out))
    print(f"wrote {out}")
    window.close()
    library.close()
    site.close()
    os._exit(0)


if __name__ == "__main__":
    main()
