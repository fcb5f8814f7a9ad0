"""The screenshot of an edition's coverage view for docs/screenshots (not a test).

Run under an X server, e.g. ``Xvfb :94 -screen 0 1400x900x24 &`` then
``DISPLAY=:94 QT_QPA_PLATFORM=xcb .venv/bin/python tests/gui/editions/make_edition_screenshot.py``.
The collection is crawled from an in-memory site (real queue, rules and attempts); the
window is grabbed with ImageMagick's ``import -window root``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

RIVER = "https://riverwatch.example.net"
AGENCY = "https://www.environment.example.gov"
COUNCIL = "https://council.example.gov"


def make_library(root: Path) -> object:
    from archiver_app.crawl.jobs import create_job
    from archiver_app.crawl.rules import Rules
    from archiver_app.crawl.spec import Limits
    from archiver_app.crawl.worker import CrawlWorker, WorkerOptions
    from archiver_app.library import Library
    from tests.helpers.crawl_site import MemoryPage, MemorySiteFetcher, memory_factory
    from tests.unit.editions.memory_site import index_everything

    site = {
        f"{RIVER}/": MemoryPage(links=[f"{RIVER}/flood-levels", f"{RIVER}/gauges",
                                       f"{RIVER}/news", f"{RIVER}/login?next=/",
                                       f"{RIVER}/archive/2019"]),
        f"{RIVER}/flood-levels": MemoryPage(),
        f"{RIVER}/gauges": MemoryPage(links=[f"{RIVER}/gauges/thames", f"{RIVER}/gauges/severn"]),
        f"{RIVER}/news": MemoryPage(status=404),  # taken down: its error page is the member
        f"{RIVER}/archive/2019": MemoryPage(fail_times=99),
        f"{RIVER}/gauges/thames": MemoryPage(),
        f"{RIVER}/gauges/severn": MemoryPage(),
        f"{AGENCY}/floods/": MemoryPage(links=[f"{AGENCY}/floods/warnings", f"{AGENCY}/floods/maps",
                                               f"{AGENCY}/floods/maps/print",
                                               f"{AGENCY}/floods/events?month=2026-01"]),
        f"{AGENCY}/floods/warnings": MemoryPage(),
        f"{AGENCY}/floods/maps": MemoryPage(),
    }  # fmt: skip
    lib = Library.open(root)
    lib.ensure_collection("rivers", "Rivers and floods")
    create_job(lib, [f"{RIVER}/"], scope="host", collection="rivers", limits=Limits(max_depth=2),
               rules=Rules(ignore=("/login",), attempts=3))  # fmt: skip
    create_job(lib, [f"{AGENCY}/floods/"], scope="prefix", collection="rivers",
               limits=Limits(max_depth=1), rules=Rules(ignore=("/print$",)))  # fmt: skip
    opts = WorkerOptions(once=True, poll_seconds=0.01, heartbeat_seconds=0.05)
    CrawlWorker(lib, memory_factory(MemorySiteFetcher(lib, site)), opts).run()
    index_everything(lib)
    targets = f"{RIVER}/flood-levels\n{COUNCIL}/minutes/flood-plan-2026\n{COUNCIL}/consultations\n"
    lib.editions.create("rivers", "rivers-2026", year=2026, targets_text=targets)
    lib.editions.explain_gap(
        "rivers-2026",
        f"{RIVER}/archive/2019",
        "Answers 503 since March 2026; the 2025 edition holds it",
    )
    lib.editions.explain_gap("rivers-2026", f"{COUNCIL}/consultations",
                             "Behind a login: out of scope for a public edition")  # fmt: skip
    return lib


def main() -> None:
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from archiver_app.gui.edition_view import EditionView
    from archiver_app.gui.main_window import MainWindow

    out = ROOT / "docs" / "screenshots" / "edition-coverage.png"
    app = QApplication(sys.argv)
    tmp = Path(tempfile.mkdtemp(prefix="edition-shot-"))
    lib: object = make_library(tmp / "lib")
    settings = QSettings(str(tmp / "gui.ini"), QSettings.Format.IniFormat)
    window = MainWindow(lib, settings=settings)  # type: ignore[arg-type]
    window.resize(1400, 900)
    window.move(0, 0)
    window.show()
    window.sidebar.select_key("edition:rivers-2026")
    view = window.tabs.currentWidget()
    assert isinstance(view, EditionView)
    QMessageBox.question = lambda *a: QMessageBox.StandardButton.Yes  # type: ignore[method-assign]
    steps = iter(["accept", "shoot"])

    def next_step() -> None:
        step = next(steps, None)
        if step == "accept":  # refused: one gap has no reason; the view says which
            view.accept_button.click()
        elif step == "shoot":
            QTimer.singleShot(1000, shoot)  # let the window paint

    def shoot() -> None:
        subprocess.run(["import", "-window", "root", str(out)], check=True)
        print(f"wrote {out}")
        app.quit()

    view.loaded.connect(next_step)  # the view reads in the background
    app.exec()


if __name__ == "__main__":
    main()
