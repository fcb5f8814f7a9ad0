"""``archiver replay --screenshot`` (``render``) grabs what the replay widget shows: an
archived PDF is drawn by the PDF view in front of the web view, and that is what the PNG
holds, not the blank page behind it."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageStat
from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.render import render
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.corpus import REPORT_PDF

PDF_URL = "https://docs.example/report.pdf"
PAGE_URL = "https://docs.example/"


def _spread(png: Path) -> float:
    """The largest standard deviation of the image's channels (0: one flat colour)."""
    return max(ImageStat.Stat(Image.open(png).convert("RGB")).stddev)


def test_a_screenshot_of_an_archived_pdf_shows_the_pdf(
    qtbot: QtBot, library: Library, tmp_path: Path
) -> None:
    w = ArchiveWriter(library, "collections/default/2024/01/p/capture.warc.gz")
    w.response(PDF_URL, REPORT_PDF, at=at(2024), mime="application/pdf", page=True)
    w.response(PAGE_URL, "<title>Docs</title><h1>docs home</h1>", at=at(2024), page=True)
    w.commit()

    shot = render(library, PDF_URL, tmp_path / "pdf.png", width=800, height=600, timeout=30)
    assert shot.ok and shot.capture_ts
    assert shot.size == (800, 600)
    assert _spread(tmp_path / "pdf.png") > 5  # the page and its text, not blank white

    page = render(library, PAGE_URL, tmp_path / "page.png", width=800, height=600, timeout=30)
    assert page.ok and _spread(tmp_path / "page.png") > 5  # the web view again


def test_a_page_the_engine_fails_is_no_success(
    qtbot: QtBot, library: Library, tmp_path: Path
) -> None:
    """``--screenshot`` exits 1 (``ok`` is False) when the engine gave the page up: its load
    failed, or its renderer stopped, not only when the archive had no page."""
    from PySide6.QtCore import QTimer, QUrl
    from PySide6.QtWidgets import QApplication

    from archiver_app.gui.replay.widget import ReplayWidget

    w = ArchiveWriter(library)
    w.response(PAGE_URL, "<title>Docs</title><h1>docs home</h1>", at=at(2024), page=True)
    # sent on to a scheme replay never loads: the engine's load fails
    w.response(
        "https://docs.example/away", "<script>location.href = 'ftp://docs.example/'</script>",
        at=at(2024), page=True,
    )  # fmt: skip
    w.commit()

    failed = render(library, "https://docs.example/away", tmp_path / "a.png", timeout=30)
    assert (failed.ok, failed.page_kind) == (False, "load-failed")

    def crash() -> None:  # a renderer that really stops, while the page is being shown
        for top in QApplication.topLevelWidgets():
            if isinstance(top, ReplayWidget):
                top.view.load(QUrl("chrome://crash"))

    QTimer.singleShot(0, crash)
    stopped = render(library, PAGE_URL, tmp_path / "c.png", timeout=30)
    assert (stopped.ok, stopped.page_kind) == (False, "renderer-stopped")

    shown = render(library, PAGE_URL, tmp_path / "p.png", timeout=30)
    assert shown.ok


def test_the_capture_time_is_the_captures_as_the_timeline_gives_it(
    qtbot: QtBot, library: Library, tmp_path: Path
) -> None:
    """``archiver replay --screenshot`` named the capture by its response record's time, a
    second after the capture's own (taken as it began), which the app's timeline, search
    and citations give."""
    from datetime import timedelta

    from archiver_app.store.models import Snapshot

    w = ArchiveWriter(library)
    w.response(PAGE_URL, "<title>Docs</title><h1>docs home</h1>", at=at(2024), page=True)
    w.commit()
    with library.write() as s:  # began a second before its document's answer came
        snap = s.query(Snapshot).one()
        snap.captured_at = snap.captured_at - timedelta(seconds=1)
        began = f"{snap.captured_at:%Y%m%d%H%M%S}"
    shot = render(library, PAGE_URL, tmp_path / "page.png", width=640, height=480, timeout=30)
    assert shot.ok and shot.capture_ts[:14] == began == "20231231235959"


def test_a_page_that_goes_on_to_an_unarchived_address_was_replayed(
    qtbot: QtBot, library: Library, tmp_path: Path
) -> None:
    """A page shown, then sent on by its meta refresh to an address not archived, was
    reported as "could not be replayed (not-archived)", exit 1, though it was shown."""
    gone = "https://docs.example/elsewhere"
    html = f'<title>Docs</title><meta http-equiv=refresh content="0;url={gone}"><h1>docs</h1>'
    w = ArchiveWriter(library)
    w.response(PAGE_URL, html, at=at(2024), page=True)
    w.commit()
    shot = render(library, PAGE_URL, tmp_path / "page.png", width=640, height=480, timeout=30)
    assert shot.page_kind == "not-archived"
    assert shot.went_on_to == gone
    assert shot.ok  # the page itself is archived and was shown
