"""Screenshot of capture while browsing for docs/screenshots (run under Xvfb, not a test).

The app's main window, the visible browser of a session started with "Capture while
browsing…" and its status window, after the first page was left (the demo article moves
on by itself to the second page, as a person following a link would).

Run: Xvfb :95 -screen 0 1400x900x24 & DISPLAY=:95 .venv/bin/python \
     tests/gui/browse/make_browse_screenshot.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

ARTICLE = """<!doctype html><html lang="en"><head><title>Harbour tides, 1850-2026</title>
<link rel="icon" href="data:,"><meta http-equiv="refresh" content="3;url=/sources">
<style>body{font:18px/1.5 Georgia,serif;max-width:760px;margin:40px auto;color:#222}
h1{font-size:34px;margin-bottom:4px}.by{color:#777}</style></head><body>
<h1>Harbour tides, 1850–2026</h1><p class="by">Coastal Records Society · research note</p>
<p>Tide gauges at the old harbour have been read by hand since 1850. This note brings the
hand-written ledgers together with the automatic readings of the last forty years.</p>
<p>The ledgers are held by the society's library and may be consulted by appointment.</p>
</body></html>"""

SOURCES = """<!doctype html><html lang="en"><head><title>Sources — Coastal Records Society</title>
<link rel="icon" href="data:,"><style>body{font:18px/1.5 Georgia,serif;max-width:760px;
margin:40px auto;color:#222}li{margin:6px 0}</style></head><body>
<h1>Sources</h1><ol><li>Harbour master's tide ledgers, 1850–1979</li>
<li>Automatic gauge readings, 1980–2026</li><li>Parish registers of flood damage</li>
<li>Admiralty charts of the estuary, 1862 and 1911</li></ol>
<button onclick="this.textContent='Loading more…'">Show more sources</button>
</body></html>"""


def main() -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from archiver_app.gui.browse_window import BrowseRequest
    from archiver_app.gui.main_window import MainWindow
    from archiver_app.library import Library
    from tests.helpers.webserver import LocalServer, Response

    site = LocalServer(
        {
            "/": lambda r: Response(body=ARTICLE.encode()),
            "/sources": lambda r: Response(body=SOURCES.encode()),
        }
    ).start()
    app = QApplication.instance() or QApplication(sys.argv)
    tmp = Path(tempfile.mkdtemp())
    lib = Library.open(tmp / "library", create=True)
    settings = QSettings(str(tmp / "gui.ini"), QSettings.Format.IniFormat)
    window = MainWindow(lib, settings=settings)
    window.setGeometry(0, 0, 1400, 900)
    window.show()
    launcher = window.browse
    settle = time.monotonic() + 5  # the window's own start-up work (resuming jobs) first
    while time.monotonic() < settle:
        app.processEvents()
        time.sleep(0.05)
    launcher.start(BrowseRequest(start_url=site.url("/"), collection="research"))
    status = launcher.status
    assert status is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and "1 page" not in status.count.text():
        app.processEvents()
        time.sleep(0.05)
    status.adjustSize()
    status.move(1400 - status.width() - 30, 900 - status.height() - 60)
    status.raise_()
    end = time.monotonic() + 3  # the second page draws, the status window settles
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.05)
    out = ROOT / "docs" / "screenshots" / "browse-window.png"
    subprocess.run(["import", "-window", "root", str(out)], check=True)
    status.stop_button.click()
    while launcher.op is not None and time.monotonic() < deadline + 60:
        app.processEvents()
        time.sleep(0.05)
    print(out, launcher.last_report)
    window.close()
    site.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
