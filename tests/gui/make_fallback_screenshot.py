"""Screenshots of the replay tab offering "Open in my browser", for docs/screenshots (run
under Xvfb, not a test).

A page captured by a newer Chromium whose script uses ``Temporal`` (which the built-in
engine, Chromium 140, lacks) is replayed in the main window: the bar above the page offers
the user's own browser. Before it, a plain page from the same capture run opens in a first
tab, which shows the once-per-run note about browser versions (``replay-version-note.png``);
the tide page's tab then shows only its failure. A last picture shows the same action in
the page's context menu.
The screen is taken with ImageMagick's ``import -window root``.

Run: Xvfb :96 -screen 0 1400x900x24 & XDG_CONFIG_HOME=$(mktemp -d) DISPLAY=:96 QT_QPA_PLATFORM=xcb \
     .venv/bin/python tests/gui/make_fallback_screenshot.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Harbour tide times</title><style>
body { font: 17px/1.5 sans-serif; margin: 40px 56px; color: #1d2733; }
h1 { font-size: 30px; margin-bottom: 4px; } .lede { color: #5a6573; }
table { border-collapse: collapse; margin-top: 18px; min-width: 420px; }
td, th { border-bottom: 1px solid #dde3ea; padding: 8px 12px; text-align: left; }
</style></head><body>
<h1>Harbour tide times</h1><p class="lede">High and low water for the next seven days.</p>
<table id="tides"><tr><th>Day</th><th>High water</th><th>Low water</th></tr>
<tr><td colspan="3">Loading the timetable…</td></tr></table>
<script>
const today = Temporal.Now.plainDateISO();
const rows = [...Array(7).keys()].map(i => today.add({ days: i }));
document.getElementById('tides').innerHTML += rows.map(d =>
  `<tr><td>${d.toLocaleString()}</td><td>06:10</td><td>12:25</td></tr>`).join('');
</script></body></html>"""


HOME = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Harbour office</title><style>body { font: 17px/1.5 sans-serif; margin: 40px 56px;
color: #1d2733; }</style></head><body><h1>Harbour office</h1>
<p>Open every day from 07:00 to 19:00. Berths, moorings and tide tables.</p></body></html>"""


def _settle(app: object, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        app.processEvents()  # type: ignore[attr-defined]
        time.sleep(0.05)


def _shoot(name: str) -> Path:
    out = ROOT / "docs" / "screenshots" / name
    subprocess.run(["import", "-window", "root", str(out)], check=True)
    print(f"wrote {out}")
    return out


def main() -> None:
    from sqlalchemy import select

    from archiver_app.gui.app import prepare_environment
    from archiver_app.library import Library
    from archiver_app.store.models import Snapshot
    from tests.helpers.archive import ArchiveWriter, at

    prepare_environment()
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from archiver_app.gui.main_window import MainWindow
    from archiver_app.gui.replay.widget import ReplayWidget

    root = Path(tempfile.mkdtemp(prefix="fallback-shot-")) / "library"
    library = Library.open(root, create=True)
    w = ArchiveWriter(library, "collections/default/2026/03/t/capture.warc.gz")
    w.response("https://harbour.example/tides", PAGE, at=at(2026), page=True)
    w.response("https://harbour.example/", HOME, at=at(2026), page=True)
    w.commit()
    with library.write() as s:
        for snap in s.scalars(select(Snapshot)):
            snap.title = "Harbour tide times" if "tides" in snap.url else "Harbour office"
            snap.provenance = {"backend": "playwright", "browser": "156.0.8078.108"}
    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(library)
    window.setGeometry(0, 0, 1400, 900)
    window.show()
    [home] = window.library.snapshots.timeline("https://harbour.example/").captures
    assert home.snapshot_id is not None
    first = window.open_replay_id(home.snapshot_id)
    assert isinstance(first, ReplayWidget)
    _settle(app, 6)
    assert first.fallback.trouble is not None, "no version note on the first tab"
    print("first tab:", first.fallback.trouble.code)
    _shoot("replay-version-note.png")
    [sid] = window.library.snapshots.timeline("https://harbour.example/tides").captures
    assert sid.snapshot_id is not None
    tab = window.open_replay_id(sid.snapshot_id)
    assert isinstance(tab, ReplayWidget)
    _settle(app, 8)
    assert tab.fallback.trouble is not None, "no offer shown"
    print("offer:", tab.fallback.trouble.code, tab.fallback.trouble.message)
    _shoot("replay-open-in-my-browser.png")
    QTest.mouseClick(tab.view.focusProxy(), Qt.MouseButton.RightButton, pos=QPoint(700, 300))
    _settle(app, 2)
    _shoot("replay-context-menu.png")
    window.close()
    library.close()
    os._exit(0)


if __name__ == "__main__":
    main()
