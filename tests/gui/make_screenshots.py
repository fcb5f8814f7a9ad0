"""Screenshots of the real window for docs/screenshots (run under Xvfb, not a test).

Run: xvfb-run -a -s "-screen 0 1400x900x24" .venv/bin/python tests/gui/make_screenshots.py
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PAGES = [
    (
        "https://www.example-climate.org/reports/2026-heatwave",
        "Heatwave report 2026: what the data says",
        "climate",
    ),
    ("https://riverwatch.example.net/flood-levels", "River levels and flood warnings", "water"),
    (
        "https://city.example.gov/council/minutes/2026-10",
        "City council minutes, October 2026",
        "policy",
    ),
    (
        "https://museum.example.org/exhibitions/maps",
        "Old maps of the harbour — exhibition",
        "history",
    ),
    (
        "https://health.example.org/guidance/air-quality",
        "Air quality guidance for schools",
        "health",
    ),
    (
        "https://blog.example.com/2026/11/archiving-the-web",
        "Why I archive the pages I cite",
        "research",
    ),
    ("https://data.example.org/datasets/rainfall", "Rainfall dataset (1950–2026)", "data"),
    (
        "https://news.example.com/science/energy-grid",
        "The grid is changing faster than expected",
        "energy",
    ),
    ("https://library.example.edu/guides/citation", "Citing web sources: a guide", "research"),
    (
        "https://transport.example.gov/plans/cycling",
        "Cycling network plan — public draft",
        "policy",
    ),
    ("https://www.example-climate.org/reports/2025-drought", "Drought report 2025", "climate"),
    ("https://school.example.org/newsletter/42", "Newsletter no. 42", "school"),
]
COLORS = ["#1565c0", "#2e7d32", "#6a1b9a", "#c62828", "#00838f", "#ef6c00", "#4e342e"]


def page_png(path: Path, title: str, color: str, rng: random.Random) -> None:
    from PIL import Image, ImageDraw

    path.parent.mkdir(parents=True, exist_ok=True)
    w, h = 1280, 2000
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, w, 90), fill=color)
    d.text((40, 30), title, fill="white", font_size=34)
    d.rectangle((40, 130, 800, 175), fill="#222222")
    y = 220
    while y < h - 60:
        if rng.random() < 0.15:
            d.rectangle((40, y, 40 + rng.randrange(300, 700), y + 260), fill=rng.choice(COLORS))
            y += 290
            continue
        d.rectangle((40, y, 40 + rng.randrange(600, 1150), y + 14), fill="#9e9e9e")
        y += 30
    img.save(path)


def build(root: Path) -> object:
    from archiver_app.library import Library
    from archiver_app.store.files import register_file
    from archiver_app.store.models import Copy, Destination, File, Job, JobLog, Setting
    from tests.helpers.snapshots import add_snapshot

    lib = Library.open(root)
    rng = random.Random(3)
    now = datetime.now(UTC)
    lib.ensure_collection("thesis", "Thesis sources")
    lib.ensure_collection("city", "City matters")
    ids = []
    for i in range(36):
        url, title, tag = PAGES[i % len(PAGES)]
        when = now - timedelta(days=i * 3 + rng.random(), hours=rng.randrange(24))
        coll = "thesis" if tag in ("climate", "research", "data", "energy") else "city"
        state = "failed" if i in (7, 20) else "complete"
        sid = add_snapshot(
            lib,
            url,
            title=title if state == "complete" else "",
            captured_at=when,
            body=f"{title}. "
            + " ".join(
                rng.choice(["river", "flood", "heat", "council", "map", "data", "school", "grid"])
                for _ in range(200)
            ),
            tags=(tag,) if i % 4 else (),
            collection=coll,
            state=state,
            screenshot=False,
            size_bytes=rng.randrange(200_000, 9_000_000),
            fidelity="fallback" if i in (4, 15) else "high",
            provenance={
                "fidelity_reason": "page kept loading after 30 s; captured what had arrived"
            }
            if i in (4, 15)
            else None,
        )
        if state == "complete":
            with lib.session() as s:
                folder = s.get(
                    __import__("archiver_app.store.models", fromlist=["Snapshot"]).Snapshot, sid
                ).folder
            page_png(root / folder / "screenshot.png", title, COLORS[i % len(COLORS)], rng)
            with lib.write() as s:
                register_file(s, root, f"{folder}/screenshot.png", "screenshot", sid)
        ids.append(sid)
    drive = root.parent / "drive-blue"
    drive.mkdir()
    (drive / ".archiver-destination.json").write_text(json.dumps({"uuid": "blue"}))
    with lib.write() as s:
        blue = Destination(uuid="blue", label="Blue passport drive", last_mount_path=str(drive))
        red = Destination(
            uuid="red",
            label="Office backup",
            last_mount_path="/media/office-backup",
            capacity_bytes=2_000_000_000_000,
            free_bytes=1_210_000_000_000,
            last_scrub_at=now - timedelta(days=12),
        )
        s.add_all([blue, red])
        s.flush()
        # this computer's copies were last verified five days ago (the idle scrub)
        s.merge(Setting(key="scrub.library.last_at", value=(now - timedelta(days=5)).isoformat()))
        files = s.query(File).all()
        for n, f in enumerate(files):
            s.add(
                Copy(
                    file_id=f.id,
                    destination_id=blue.id,
                    state="present" if n % 9 else "corrupted",
                    verified_at=now - timedelta(days=2),
                )
            )
            if n % 3 == 0:
                s.add(
                    Copy(
                        file_id=f.id,
                        destination_id=red.id,
                        state="present",
                        verified_at=now - timedelta(days=12),
                    )
                )
        crawl = Job(
            collection_id=1,
            name="riverwatch.example.net crawl",
            status="running",
            items_queued=240,
            items_downloaded=97,
            error_count=3,
            bytes_downloaded=184_000_000,
            r2xx=91,
            r3xx=6,
            r4xx=3,
            started_at=now - timedelta(minutes=7),
            config={
                "seeds": ["https://riverwatch.example.net/"],
                "scope": "host",
                "ignore_patterns": ["/calendar/", r"\?replytocom="],
                "concurrency": 4,
            },
        )
        done = Job(
            collection_id=1,
            name="Bookmarks import (58 pages)",
            status="completed",
            items_queued=58,
            items_downloaded=56,
            error_count=2,
            bytes_downloaded=96_000_000,
            r2xx=56,
            r4xx=2,
            started_at=now - timedelta(hours=3),
            finished_at=now - timedelta(hours=2, minutes=40),
            coverage_md="jobs/2/coverage.md",
        )
        s.add_all([crawl, done])
        s.flush()
        for k in range(40):
            s.add(
                JobLog(
                    job_id=crawl.id,
                    at=now - timedelta(seconds=400 - k * 10),
                    level="warning" if k % 13 == 5 else "info",
                    message=(
                        f"404 https://riverwatch.example.net/station/{k}"
                        if k % 13 == 5
                        else f"200 https://riverwatch.example.net/station/{k} (4 pages in flight)"
                    ),
                )
            )
    return lib


def import_notice_shot(window: Any, lib: Any, tmp: Path, settle: Any) -> Any:
    """Import a damaged WARC, a WARC gzipped whole and a stray file as a user might drop
    them; the notice naming what happened to each."""
    from PySide6.QtWidgets import QMessageBox

    from archiver_app.importers.run import import_paths
    from tests.helpers.warcs import damaged_warc, one_stream_warc

    drop = tmp / "drop"
    drop.mkdir()
    damaged = damaged_warc(drop / "fieldwork-2019.warc.gz")
    whole = one_stream_warc(drop / "interviews.warc.gz")
    (drop / "README.warc").write_text("notes about the crawl\n")
    report = import_paths(lib, [damaged, whole, drop / "README.warc"])
    window.imports.imported(report)
    settle(40)
    [box] = [b for b in window.findChildren(QMessageBox) if b.objectName() == "importNotice"]
    return box


def menus_shot(window: Any, out: Path, settle: Any) -> None:
    """Each menu of the menu bar open, side by side (docs/screenshots/menus.png)."""
    from PIL import Image
    from PySide6.QtGui import QGuiApplication

    screen = QGuiApplication.primaryScreen()
    shots = []
    for action in window.menuBar().actions():
        menu = action.menu()
        if menu is None:
            continue
        window.menuBar().setActiveAction(action)
        settle(30)
        right = menu.geometry().right() + 8
        bottom = max(menu.geometry().bottom() + 8, 200)
        top_left = window.mapToGlobal(window.menuBar().actionGeometry(action).topLeft())
        left = top_left.x()
        path = out / f".menu-{len(shots)}.png"
        screen.grabWindow(0, left, top_left.y(), right - left, bottom - top_left.y()).save(
            str(path)
        )
        shots.append(Image.open(path))
        menu.hide()
        settle(10)
    height = max(shot.height for shot in shots)
    sheet = Image.new("RGB", (sum(shot.width + 4 for shot in shots), height), "white")
    x = 0
    for shot in shots:
        sheet.paste(shot, (x, 0))
        x += shot.width + 4
    sheet.save(out / "menus.png")
    for path in out.glob(".menu-*.png"):
        path.unlink()


def main() -> None:
    from PySide6.QtCore import QEventLoop, QSettings
    from PySide6.QtWidgets import QApplication

    from archiver_app.gui.app import app_icon
    from archiver_app.gui.main_window import MainWindow
    from archiver_app.gui.ops import OpRunner

    out = ROOT / "docs" / "screenshots"
    tmp = tempfile.TemporaryDirectory()
    lib = build(Path(tmp.name) / "Library")
    app = QApplication([])
    app.setApplicationName("Archiver")
    app.setWindowIcon(app_icon())
    loop = QEventLoop()
    runner = OpRunner(app)

    def settle(n: int = 60) -> None:
        import time

        for _ in range(n):
            loop.processEvents()
            time.sleep(0.02)

    window = MainWindow(
        lib, runner=runner, settings=QSettings(f"{tmp.name}/s.ini", QSettings.Format.IniFormat)
    )
    window.resize(1400, 860)
    window.show()
    settle(40)
    window.table.selectRow(1)
    settle(80)
    window.thumbnails.wait_idle()
    settle(40)
    window.grab().save(str(out / "main-window.png"))
    menus_shot(window, out, settle)

    dialog = window.capture.open_dialog(
        "https://www.example-climate.org/reports/\nhttps://riverwatch.example.net/flood-levels"
    )
    dialog.tags.setText("climate, thesis")
    settle(20)
    dialog.grab().save(str(out / "capture-dialog.png"))
    dialog.reject()

    window.jobs_dock.show()
    window.jobs_dock.raise_()
    window.jobs.table.selectRow(1)  # the running crawl
    settle(80)
    window.grab().save(str(out / "jobs-panel.png"))

    window.drives_dock.show()
    window.drives_dock.raise_()
    settle(80)
    window.grab().save(str(out / "drives-panel.png"))

    window.drives.table.selectRow(0)
    export = window.drives.open_export()
    settle(20)
    export.grab().save(str(out / "export-dialog.png"))
    export.reject()
    settings = window.open_settings()
    settle(20)
    settings.grab().save(str(out / "settings.png"))
    settings.reject()

    window.search.setText("flood")
    window.search.returnPressed.emit()
    window.jobs_dock.hide()
    window.drives_dock.hide()
    settle(40)
    window.table.selectRow(0)
    settle(60)
    window.grab().save(str(out / "search.png"))

    notice = import_notice_shot(window, lib, Path(tmp.name), settle)
    notice.grab().save(str(out / "import-notice.png"))
    notice.close()
    window.request_quit()
    runner.shutdown()
    lib.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
