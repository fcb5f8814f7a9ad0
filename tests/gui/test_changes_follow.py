"""The Changes view follows watches added and stopped from a terminal while the app is
open (the status bar's reading tells, and F5 reads it again), and Capture Now on a watch
stopped meanwhile says so instead of "being captured already"; it shows what a watch's
run elsewhere found, recorded after the run's captures."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from archiver_app import cli
from archiver_app.gui.main_window import MainWindow
from archiver_app.library import Library
from archiver_app.store.models import SnapshotChange
from tests.gui.test_watch_from_app import RUNS, recorded_run
from tests.helpers.snapshots import add_snapshot

PAGE = "http://127.0.0.1:18473/watch/page.html"
OTHER = "http://127.0.0.1:18473/watch/other.html"


def test_the_changes_view_follows_watches_changed_elsewhere(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    window, status = main_window, main_window.status
    scheduler = window.watches
    qtbot.waitUntil(lambda: scheduler.busy is None, timeout=10_000)  # the start-up look
    scheduler.timer.stop()  # no run but those the test asks for (none)
    app = QGuiApplication.instance()
    assert isinstance(app, QGuiApplication)
    app.applicationStateChanged.disconnect(scheduler._state_changed)
    scheduler.run = recorded_run
    RUNS.clear()
    status.timer.stop()  # the status bar reads when the test says
    status.refresh()
    qtbot.waitUntil(lambda: status.figures is not None and status.figures.watches == ())
    panel = window.research.show_changes()
    qtbot.waitUntil(lambda: panel.loaded)
    assert panel.watches.rowCount() == 0 and not panel.no_watches.isHidden()

    root = ["--library", str(library.root)]
    assert cli.main([*root, "watch", "add", PAGE, "--schedule", "hourly"]) == 0  # a terminal
    status.refresh()  # its next reading (every few seconds)
    qtbot.waitUntil(lambda: panel.watches.rowCount() == 1)
    [watch] = panel.watches.rows
    assert watch.seeds == (PAGE,) and panel.no_watches.isHidden()

    # stopped from the terminal before the view read it again: Capture Now says so
    assert cli.main([*root, "watch", "remove", str(watch.job_id)]) == 0
    panel.watch_table.selectRow(0)
    panel.capture_selected_now()
    qtbot.waitUntil(lambda: bool(panel.note.text()))
    assert panel.note.text() == f"No longer watched (stopped elsewhere): {PAGE}."
    qtbot.waitUntil(lambda: panel.watches.rowCount() == 0)  # and the list is read again
    assert not panel.no_watches.isHidden() and RUNS == []  # nothing was run

    # F5 reads the view again too
    status.watches_elsewhere.disconnect()
    assert cli.main([*root, "watch", "add", OTHER, "--schedule", "daily"]) == 0
    window.menus.refresh.trigger()
    qtbot.waitUntil(lambda: panel.watches.rowCount() == 1)
    assert panel.watches.rows[0].seeds == (OTHER,)


def test_the_changes_view_shows_a_change_recorded_elsewhere_after_its_captures(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """A watch's run in a terminal records its comparisons after its captures: the reading
    that saw the captures came too early for them, and the view kept showing none."""
    window, status = main_window, main_window.status
    status.timer.stop()  # the status bar reads when the test says
    # the captures' own news reads the view too (before the comparison is there): only
    # the comparison's may read it after, so a read of the captures' cannot pass for it
    status.changed_elsewhere.disconnect()
    before = add_snapshot(library, PAGE, title="Tide table", body="high water 06:10")
    after = add_snapshot(library, PAGE, title="Tide table", body="high water 06:55")
    panel = window.research.show_changes()
    status.refresh()  # the reading that sees the captures, before their comparison
    qtbot.waitUntil(lambda: status.figures is not None and status.figures.newest_capture == after)
    qtbot.waitUntil(lambda: panel.loaded and not status._reads.busy)
    assert panel.model.rowCount() == 0

    with library.write() as s:  # the run's comparison, recorded after
        s.add(SnapshotChange(snapshot_id=after, previous_id=before, changed=True, text_share=0.5))
    status.refresh()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=5000)
