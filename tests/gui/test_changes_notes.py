"""The Changes view's note line and its watch buttons, as a person clicking through them
meets them: rows that stay under the pointer when a note comes, notes that go once a
terminal makes them untrue, Capture Now that acts on a selected watch and says what it did.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from sqlalchemy import update

from archiver_app import cli
from archiver_app.gui.changes_panel import ChangesPanel
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
from archiver_app.store.models import Job
from tests.helpers.snapshots import add_snapshot

PAGE = "http://127.0.0.1:18473/watch/page.html"
OTHER = "http://127.0.0.1:18473/watch/other.html"


def _two_watches(library: Library) -> tuple[int, int]:
    first = library.jobs.watch([PAGE], schedule="daily")
    second = library.jobs.watch([OTHER], schedule="daily")
    with library.write() as s:  # as after their first captures
        s.execute(update(Job).where(Job.id.in_((first, second))).values(status="indexed"))
    return first, second


def _panel(qtbot: QtBot, library: Library, op_runner: OpRunner) -> ChangesPanel:
    panel = ChangesPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.resize(900, 500)
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: panel.loaded and panel.watches.rowCount() == 2)
    return panel


def _row_top(panel: ChangesPanel, row: int) -> int:
    """Where the watch table's row is on screen, in the panel's coordinates."""
    viewport = panel.watch_table.viewport()
    return viewport.mapTo(panel, QPoint(0, panel.watch_table.rowViewportPosition(row))).y()


def test_a_note_coming_or_going_leaves_the_watch_rows_where_they_are(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    """After Resume the note came above the watch table and pushed its rows ~27 px down:
    the next click landed on another watch, and Resume acted on the wrong one."""
    _two_watches(library)
    panel = _panel(qtbot, library, op_runner)
    QApplication.processEvents()
    tops = (_row_top(panel, 0), _row_top(panel, 1))
    panel.watch_table.selectRow(0)
    panel.pause_selected()
    qtbot.waitUntil(lambda: panel.pause_button.text() == "Resume")
    assert "is paused" in panel.note.text() and not panel.note.isHidden()
    QApplication.processEvents()
    assert (_row_top(panel, 0), _row_top(panel, 1)) == tops
    panel.say("")
    QApplication.processEvents()
    assert (_row_top(panel, 0), _row_top(panel, 1)) == tops
    long = "A note much longer than the view is wide " * 12
    panel.say(long)
    QApplication.processEvents()
    assert (_row_top(panel, 0), _row_top(panel, 1)) == tops  # cut with "…", not wrapped
    assert panel.note.text() == long == panel.note.toolTip()
    assert panel.width() == 900


def test_a_watch_paused_from_a_terminal_is_said_so_in_the_details_and_the_notes(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """After `archiver watch pause 9` the details of the capture shown still said
    "Watched: … ; next … UTC" until another row was selected; after Resume in the Changes
    view then a pause from a terminal, "… is watched again from its next capture." stayed
    above a row reading "paused". Both follow once the status bar's reading notices."""
    window, status = main_window, main_window.status
    scheduler = window.watches
    qtbot.waitUntil(lambda: scheduler.busy is None, timeout=10_000)  # the start-up look
    scheduler.stop()  # no run: the watches are only looked at
    status.timer.stop()  # the status bar reads when the test says
    sid = add_snapshot(library, PAGE, title="Notices", body="text")
    first, _second = _two_watches(library)
    library.jobs.pause_watching(first)
    window.model.refresh()
    detail = window.detail
    with qtbot.waitSignal(detail.loaded, timeout=10_000):
        detail.show_snapshot(sid)
    assert detail.watched.text() == "every day at 03:00 UTC; paused"
    status.refresh()
    qtbot.waitUntil(lambda: status.figures is not None and len(status.figures.watches) == 2)

    panel = window.research.show_changes()
    qtbot.waitUntil(lambda: panel.loaded and panel.watches.rowCount() == 2)
    panel.watch_table.selectRow(0)
    with qtbot.waitSignal(detail.loaded, timeout=10_000):  # the app's own Resume, at once
        panel.pause_button.click()
    assert panel.note.text() == f"{PAGE} is watched again from its next capture."
    assert detail.watched.text().startswith("every day at 03:00 UTC; next ")
    status.refresh()  # the reading that sees the app's own Resume: the note stays true
    qtbot.waitUntil(lambda: status.figures is not None and not status.figures.watches[0].paused)
    qtbot.waitUntil(lambda: not status._reads.busy)
    assert panel.note.text() == f"{PAGE} is watched again from its next capture."

    root = ["--library", str(library.root)]
    assert cli.main([*root, "watch", "pause", str(first)]) == 0  # from a terminal
    status.refresh()  # its next reading, within a few seconds
    qtbot.waitUntil(lambda: detail.watched.text() == "every day at 03:00 UTC; paused")
    qtbot.waitUntil(lambda: panel.watches.rows[0].paused)
    qtbot.waitUntil(lambda: panel.note.text() == "")
    assert panel.note.isHidden() and panel.pause_button.text() == "Resume"


def test_capture_now_needs_a_selected_watch_and_says_a_paused_one_stays_paused(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    """Capture Now stayed enabled with no watch selected and then captured every watch
    not paused; with every watch paused it did nothing, without a word. Now it needs a
    selected watch; a paused one is captured once, as `watch run N` does, and the note
    says it stays paused."""
    first, second = _two_watches(library)
    for job_id in (first, second):
        library.jobs.pause_watching(job_id)
    panel = _panel(qtbot, library, op_runner)
    assert not panel.capture_now.isEnabled()  # nothing selected
    assert panel.capture_selected_now() is None  # (the keyboard's way round the button)
    assert panel.note.text() == "Select a watched page first."
    panel.watch_table.selectRow(1)
    assert panel.capture_now.isEnabled()
    with qtbot.waitSignal(panel.captureNowRequested, timeout=10_000):
        panel.capture_now.click()
    assert panel.note.text() == f"{OTHER} is captured now, once: it stays paused."
    [made] = [w for w in library.jobs.watches() if w.next_run_at is not None]
    assert made.job_id == second and made.paused
    panel.watch_table.clearSelection()
    assert not panel.capture_now.isEnabled()
