"""The Compare view: two captures side by side, the text diff and the changed regions."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, ImageDraw
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from archiver_app.compare.text import diff_texts
from archiver_app.gui.compare_view import CompareView, diff_html, tab_title, whens
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
from archiver_app.store.files import register_file
from archiver_app.store.models import FileKind, Snapshot
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.gui_fixtures import dispose

#: The title the test archive gives each capture, as the replay timeline lists it.
TITLE = " · Capture of https://harbour.example/"
OLD_TEXT = "Harbour notices\nThe ferry leaves at 9:00.\nStorm warning\nOpening hours at the quay."
NEW_TEXT = "Harbour notices\nThe ferry leaves at 10:30.\nOpening hours at the quay."


def _shot(path: Path, *, red: bool) -> None:
    image = Image.new("RGB", (640, 480), "white")
    draw = ImageDraw.Draw(image)
    draw.text((20, 20), "Harbour notices", fill="black")
    if red:
        draw.rectangle((40, 120, 239, 319), fill=(200, 30, 30))
    out = io.BytesIO()
    image.save(out, "PNG")
    path.write_bytes(out.getvalue())


def two_captures(library: Library) -> tuple[int, int]:
    url = "https://harbour.example/"
    for year, body in ((2024, OLD_TEXT), (2025, NEW_TEXT)):
        w = ArchiveWriter(library, f"collections/default/{year}/01/c{year}/capture.warc.gz")
        page = "<title>Harbour</title>" + "".join(f"<p>{line}</p>" for line in body.split("\n"))
        w.response(url, page, at=at(year), page=True)
        w.commit()
    with library.write() as s:
        ids = list(s.execute(select(Snapshot.id).order_by(Snapshot.captured_at)).scalars())
        for sid, year, body in ((ids[0], 2024, OLD_TEXT), (ids[1], 2025, NEW_TEXT)):
            folder = f"collections/default/{year}/01/c{year}"
            (library.root / folder / "text.txt").write_text(body, encoding="utf-8")
            _shot(library.root / folder / "screenshot.png", red=year == 2025)
            register_file(s, library.root, f"{folder}/text.txt", FileKind.TEXT, sid)
            register_file(s, library.root, f"{folder}/screenshot.png", FileKind.SCREENSHOT, sid)
    return ids[0], ids[1]


def test_compare_view_shows_what_changed(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    old_id, new_id = two_captures(library)
    view = CompareView(library, new_id, old_id, op_runner)  # newest first: shown oldest left
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.show()
    qtbot.waitUntil(lambda: view.result is not None, timeout=30_000)
    assert view.result is not None
    c = view.result.comparison
    assert (c.old.id, c.new.id) == (old_id, new_id)
    summary = view.summary.text()
    assert "Left: the capture of 1 January 2024" in summary
    assert "Right: the capture of 1 January 2025" in summary
    assert "Text: 2 of 4 lines differ (50.0%)" in summary  # 1 rewritten, 1 added
    assert "in 1 region" in summary
    assert "Resources: 1 changed" in summary
    html = view.text.toHtml()
    assert "9:00" in html and "10:30" in html and "Storm warning" in html
    assert "line-through" in html  # what only the older capture has is struck through
    assert not view.look.pixmap().isNull()
    assert view.look.pixmap().width() == 640
    # Both sides replay their own capture, and scrolling one scrolls the other.
    qtbot.waitUntil(lambda: view.old_view.current is not None, timeout=30_000)
    qtbot.waitUntil(lambda: view.new_view.current is not None, timeout=30_000)
    assert view.old_view.at == c.old.captured_at and view.new_view.at == c.new.captured_at
    for index in range(view.tabs.count()):
        view.tabs.setCurrentIndex(index)
        view.grab().save(str(tmp_path / f"compare-{index}.png"))


LONG_TITLE = "Harbour notices and ferry timetables for the summer season of 2025"


def test_compare_panes_name_their_captures_readably_at_1024(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    """In a 1024x768 window each pane's list of captures names the capture by time and
    title: cut in the middle (the time and the mark kept) when it must be, never clipped,
    whole in its tooltip, and its open list wide enough for the longest entry. Its panes
    used to need 1112 pixels, the list showed only times and squeezed the address."""
    from archiver_app.compare.changes import record_change

    old_id, new_id = two_captures(library)
    record_change(library, new_id)
    with library.write() as s:
        snap = s.get(Snapshot, new_id)
        assert snap is not None
        snap.title = LONG_TITLE
    view = CompareView(library, old_id, new_id, op_runner)
    qtbot.addWidget(view)
    assert view.minimumSizeHint().width() <= 1024
    view.resize(1024, 768)
    view.show()
    qtbot.waitUntil(lambda: view.result is not None, timeout=30_000)
    qtbot.waitUntil(lambda: view.new_view.current is not None, timeout=30_000)
    qtbot.waitUntil(lambda: view.old_view.current is not None, timeout=30_000)
    combo = view.new_view.timeline
    whole = f"2025-01-01 00:00 · {LONG_TITLE}  • changed"
    assert combo.currentText() == whole
    assert combo.toolTip() == whole
    # (once the layout has given the panes their widths)
    qtbot.waitUntil(lambda: combo.shown_text().startswith("2025-01-01 00:00 · Harb"))
    shown = combo.shown_text()
    assert shown.endswith("  • changed")
    assert "…" in shown and len(shown) < len(whole)
    room = combo.style().subControlRect(
        QStyle.ComplexControl.CC_ComboBox, _option(combo), QStyle.SubControl.SC_ComboBoxEditField
    )
    assert combo.fontMetrics().horizontalAdvance(shown) <= room.width()
    assert view.old_view.timeline.shown_text().startswith("2024-01-01 00:00 · Capture")
    combo.showPopup()
    try:
        assert combo.view().width() >= combo.view().sizeHintForColumn(0)
    finally:
        combo.hidePopup()
    assert view.new_view.address.width() >= 50  # the address is not squeezed to "http"


def _option(combo: QComboBox) -> QStyleOptionComboBox:
    option = QStyleOptionComboBox()
    combo.initStyleOption(option)
    return option


def test_an_entry_keeps_its_time_whole_when_cut() -> None:
    from archiver_app.gui.replay.capture_combo import elide_entry

    metrics = QFontMetrics(QFont())
    text = f"2025-01-01 00:00 · {LONG_TITLE}  • changed"
    assert elide_entry(metrics, text, 10_000) == text
    half = elide_entry(metrics, text, metrics.horizontalAdvance(text) // 2)
    assert half.startswith("2025-01-01 00:00 · ") and half.endswith("changed") and "…" in half
    no_title = elide_entry(
        metrics, text, metrics.horizontalAdvance("2025-01-01 00:00 · …  • changed")
    )
    assert no_title == "2025-01-01 00:00 · …  • changed"
    tight = elide_entry(metrics, text, metrics.horizontalAdvance("2025-01-01 00:00 …"))
    assert tight.startswith("2025-01-01 00:") and tight.endswith("…")


def test_an_unchanged_text_says_so_without_a_gap_marker() -> None:
    from types import SimpleNamespace

    side = SimpleNamespace(captured_at=at(2024, 1, 1))
    c = SimpleNamespace(old=side, new=side, text=diff_texts("a\nb\nc", "a\nb\nc"))
    shown = diff_html(c)  # type: ignore[arg-type]
    assert "The text is the same in both captures (3 lines)." in shown
    assert "⋯" not in shown  # nothing is left out: there is nothing to show
    changed = SimpleNamespace(
        old=side, new=side, text=diff_texts("a\nb\nc\nd\ne\nf", "a\nb\nc\nd\ne\nX")
    )
    assert "⋯" in diff_html(changed)  # type: ignore[arg-type]


def test_a_title_change_is_in_the_summary(library: Library) -> None:
    from archiver_app.compare import compare_captures
    from archiver_app.gui.compare_view import summary_text
    from tests.helpers.snapshots import add_snapshot

    url, body = "https://harbour.example/", "Harbour notices\nThe ferry leaves at 9:00."
    a = add_snapshot(library, url, title="Harbour notices", body=body, captured_at=at(2024))
    b = add_snapshot(library, url, title="Harbour closed", body=body, captured_at=at(2025))
    shown = summary_text(compare_captures(library, a, b))
    assert "Title: “Harbour notices” → “Harbour closed”" in shown
    assert "Nothing differs" not in shown
    with library.write() as s:
        snap = s.get(Snapshot, b)
        assert snap is not None
        snap.http_status = 404
    shown = summary_text(compare_captures(library, a, b))
    assert "HTTP status: 200 → 404" in shown
    assert "different addresses" not in shown and url not in shown
    other = add_snapshot(library, "https://harbour.example/tides", title="Tides", body="High",
                         captured_at=at(2025))  # fmt: skip
    shown = summary_text(compare_captures(library, a, other, any_url=True))
    assert (
        shown.startswith(f"Left: {url}, captured ")
        and "Right: https://harbour.example/tides" in shown
    )
    assert "These are two different addresses" in shown


def test_captures_that_cannot_be_compared_say_so(
    qtbot: QtBot, library: Library, op_runner: OpRunner, monkeypatch: object
) -> None:
    old_id, _ = two_captures(library)
    shown: list[object] = []
    import archiver_app.gui.compare_view as module

    monkeypatch.setattr(module, "show_error", lambda *a: shown.append(a))  # type: ignore[attr-defined]
    view = CompareView(library, old_id, 999_999, op_runner)
    qtbot.addWidget(view)
    qtbot.waitUntil(lambda: bool(shown), timeout=30_000)
    assert view.summary.text() == "These captures cannot be compared."
    assert "no capture" in str(shown[0][1])


def test_changes_panel_lists_changes_and_asks_to_compare(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    from archiver_app.compare.changes import record_change
    from archiver_app.gui.changes_panel import ChangesPanel

    empty = ChangesPanel(library, op_runner)
    qtbot.addWidget(empty)
    qtbot.waitUntil(lambda: empty.loaded)
    assert empty.model.rowCount() == 0 and not empty.empty.isHidden()
    # how to watch a page, by the panel's own button and the menu entry (both exist:
    # tests/gui/test_watch_from_app.py), and from a timer
    guide = empty.no_watches.text()
    assert "Watch a Page…" in guide and "Capture > Watch Pages…" in guide
    assert "archiver watch run" in guide and empty.watch_button.text() == "Watch a Page…"
    assert empty.hint.isHidden()

    old_id, new_id = two_captures(library)
    summary = record_change(library, new_id)
    assert summary is not None and summary.changed
    panel = ChangesPanel(library, op_runner)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: panel.loaded)
    assert panel.model.rowCount() == 1
    from archiver_app.gui.changes_panel import HEADERS

    assert panel.model.index(0, HEADERS.index("Text")).data() == f"{summary.text_share:.1%}"
    assert panel.model.index(0, HEADERS.index("What changed")).data() == "text, look, resources"
    assert not panel.hint.isHidden() and panel.empty.isHidden()
    resources_tip = panel.model.headerData(
        HEADERS.index("Resources"), Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole
    )
    assert "+added −removed ~changed" in resources_tip
    with qtbot.waitSignal(panel.compareRequested) as blocker:
        panel.table.activated.emit(panel.model.index(0, 0))
    assert blocker.args == [old_id, new_id]
    panel.show()
    panel.table.setCurrentIndex(panel.model.index(0, 0))
    with qtbot.waitSignal(panel.compareRequested) as blocker:  # what the hint promises
        QTest.keyClick(panel.table, Qt.Key.Key_Return)
    assert blocker.args == [old_id, new_id]


def test_the_replay_timeline_marks_captures_that_changed(qtbot: QtBot, library: Library) -> None:

    from archiver_app.compare.changes import record_change
    from archiver_app.gui.replay.widget import ReplayWidget

    _old_id, new_id = two_captures(library)
    record_change(library, new_id)
    widget = ReplayWidget(library)
    qtbot.addWidget(widget)
    try:
        with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
            widget.open("https://harbour.example/")
        labels = [widget.timeline.itemText(i) for i in range(widget.timeline.count())]
        assert labels == [f"2024-01-01 00:00{TITLE}", f"2025-01-01 00:00{TITLE}  • changed"]
    finally:
        dispose(qtbot, widget)


def _retried_run(library: Library) -> str:
    """A page captured in 2024, then a run answering 500 twice: two attempts, each error
    page kept, the second the run's capture. Returns the page's address."""
    from datetime import UTC, datetime

    from archiver_app.compare.changes import record_change
    from archiver_app.store.models import Job, Page, PageAttempt

    url = "https://harbour.example/"
    times = [
        datetime(2024, 1, 1, tzinfo=UTC),
        *(datetime(2025, 1, 1, 0, m, tzinfo=UTC) for m in (0, 1)),
    ]
    for n, (when, status) in enumerate(zip(times, (200, 500, 500), strict=True)):
        w = ArchiveWriter(library, f"collections/default/{when:%Y}/01/r{n}/capture.warc.gz")
        w.response(
            url, f"<title>Harbour</title><p>answer {status}</p>", at=when, status=status, page=True
        )
        w.commit()
    collection = library.ensure_collection()
    with library.write() as s:
        ids = list(s.execute(select(Snapshot.id).order_by(Snapshot.captured_at)).scalars())
        job = Job(collection_id=collection, name="watch run", status="indexed")
        s.add(job)
        s.flush()
        page = Page(job_id=job.id, url=url, state="failed", snapshot_id=ids[2])
        s.add(page)
        s.flush()
        for attempt, sid in ((1, ids[1]), (2, ids[2])):
            tried = PageAttempt(job_id=job.id, page_id=page.id, attempt=attempt, worker_id="w")
            s.add(tried)
            tried.ruleset_version, tried.outcome, tried.snapshot_id = 1, "failed", sid
    record_change(library, ids[2])  # the run's capture: compared with the one before the run
    return url


def test_the_timeline_marks_an_error_page_its_job_tried_again(
    qtbot: QtBot, library: Library
) -> None:
    """A page answering 500 is tried again in the same run, and each attempt keeps its
    error page: the first attempt's is marked "retried" in the timeline (it was listed as
    an ordinary capture, unmarked), the last one is the run's capture, compared."""
    from archiver_app.gui.replay.widget import ReplayWidget

    url = _retried_run(library)
    widget = ReplayWidget(library)
    qtbot.addWidget(widget)
    try:
        with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
            widget.open(url)
        combo = widget.timeline
        labels = [combo.itemText(i) for i in range(combo.count())]
        assert [label[:16] for label in labels] == [
            "2024-01-01 00:00",
            "2025-01-01 00:00",
            "2025-01-01 00:01",
        ]
        assert labels[1].endswith("  ↻ HTTP 500, retried")
        assert labels[2].endswith("  • changed")
        tip = combo.itemData(1, Qt.ItemDataRole.ToolTipRole)
        assert tip.startswith(labels[1]) and "tried again in the same run" in tip
        assert combo.itemData(2, Qt.ItemDataRole.ToolTipRole) == labels[2]
    finally:
        dispose(qtbot, widget)


def test_the_banner_of_a_capture_its_job_tried_again_says_so(
    qtbot: QtBot, library: Library
) -> None:
    """The banner above the retried attempt's error page says what the timeline marks
    ("↻ HTTP 500, retried"); it said only when the capture was made, as for any other."""
    from archiver_app.gui.replay.widget import ReplayWidget

    url = _retried_run(library)
    widget = ReplayWidget(library)
    qtbot.addWidget(widget)
    try:
        with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
            widget.open(url)
        assert "retried" not in widget.banner.text()  # the run's capture
        with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
            widget.timeline_bar.step(-1)
        banner = widget.banner.text()
        assert "capture 2 of 3" in banner and "↻ HTTP 500, retried" in banner, banner
        assert "tried again in the same run" in banner
        with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
            widget.timeline_bar.step(-1)
        assert "capture 1 of 3" in widget.banner.text()
        assert "retried" not in widget.banner.text()
    finally:
        dispose(qtbot, widget)


def test_the_timeline_and_details_tell_captures_of_one_minute_apart(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    """Two captures 30 seconds apart (a watched page run twice) are two entries a reader can
    tell apart, in the replay tab's timeline and in the details' other captures."""

    from archiver_app.gui.detail_pane import DetailPane
    from archiver_app.gui.replay.widget import ReplayWidget
    from archiver_app.gui.thumbnails import ThumbnailCache

    two_captures(library)
    w = ArchiveWriter(library, "collections/default/2025/01/again/capture.warc.gz")
    later = at(2025).replace(second=30)
    w.response("https://harbour.example/", "<title>Harbour</title>", at=later, page=True)
    w.commit()
    widget = ReplayWidget(library)
    qtbot.addWidget(widget)
    try:
        with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
            widget.open("https://harbour.example/")
        labels = [widget.timeline.itemText(i) for i in range(widget.timeline.count())]
        assert [label.split(" · ")[0] for label in labels] == [
            "2024-01-01 00:00",
            "2025-01-01 00:00:00",
            "2025-01-01 00:00:30",
        ]
    finally:
        dispose(qtbot, widget)
    with library.session() as s:
        first = s.execute(select(Snapshot.id).order_by(Snapshot.captured_at)).scalars().first()
    pane = DetailPane(library, op_runner, ThumbnailCache(library))
    qtbot.addWidget(pane)
    with qtbot.waitSignal(pane.loaded, timeout=5000):
        pane.show_snapshot(first)
    others = [pane.others.item(i).text() for i in range(pane.others.count())]
    assert others == ["2025-01-01 00:00:30  complete", "2025-01-01 00:00:00  complete"]


def test_captures_in_the_same_minute_are_told_apart_by_their_seconds() -> None:
    first, second = at(2026, 11, 25, 19).replace(minute=47, second=18), at(2026, 11, 25, 19)
    second = second.replace(minute=47, second=25)
    assert whens(first, second) == (
        "25 November 2026, 19:47:18 UTC",
        "25 November 2026, 19:47:25 UTC",
    )
    assert whens(at(2024), at(2025)) == ("1 January 2024, 00:00 UTC", "1 January 2025, 00:00 UTC")


def test_a_compare_tab_names_both_pages_when_their_titles_differ() -> None:
    """A page now answering 500 is titled "Server error": its Compare tab read "Compare:
    Server error", the newer capture's title alone, as if another page were compared."""
    from datetime import UTC, datetime

    from archiver_app.compare import Comparison
    from archiver_app.compare.snapshots import CaptureRef, ChangeSummary, ResourceDiff

    def compared(old: str | None, new: str | None, new_url: str = "https://h.example/n") -> str:
        refs = [
            CaptureRef(n, f"u{n}", url, datetime(2026, 3, n, tzinfo=UTC), title)
            for n, url, title in ((1, "https://h.example/n", old), (2, new_url, new))
        ]
        summary = ChangeSummary(True, None, None, 0, 0, 0)
        c = Comparison(refs[0], refs[1], None, None, ResourceDiff((), (), ()), (), summary)
        return tab_title(c)[0]

    assert compared("Notices", "Notices") == "Compare: Notices"
    assert compared("Notices", "Server error") == "Compare: Notices → Server error"
    assert compared(None, None) == "Compare: h.example/n"  # no title: the address
    long = "Harbour notices and ferry timetable for the winter"
    assert compared(long, long) == f"Compare: {long[:39]}…"
    both = compared(long, "Server error")
    assert both == "Compare: Harbour notices and ferr… → Server error"  # 40 in all
    assert len(compared(long, long + "!")) == len("Compare: ") + 40
    other = compared(None, None, "https://h.example/m")  # two addresses compared on request
    assert other == "Compare: h.example/n → h.example/m"


def test_two_captures_with_no_change_say_so_with_their_text_figure(library: Library) -> None:
    """As `archiver diff` says "no change between these captures" and "text: 0 of 2 lines
    differ": a counter page with its ignored text left out said neither, only what
    differs without counting, as if something had changed."""
    from archiver_app.compare import compare_captures, compile_ignore_patterns
    from archiver_app.gui.compare_view import summary_text
    from tests.unit.compare.test_resource_answers import COUNTER, _capture

    a, b = _capture(library, 1, {"blue.png": 200}), _capture(library, 2, {"blue.png": 200})
    shown = summary_text(compare_captures(library, a, b, ignore=compile_ignore_patterns(COUNTER)))
    assert "\nNo change between these captures  ·  Text: 0 of 2 lines differ (0%)" in shown
    counted = summary_text(compare_captures(library, a, b))  # the counter's line left in
    assert "No change" not in counted and "Text: 1 of 3 lines differ (33.3%)" in counted
