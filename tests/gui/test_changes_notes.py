"""The Changes view's note line and its watch buttons, as a person clicking through them
meets them: rows that stay under the pointer when a note comes, notes that go once a
terminal makes them untrue, Capture Now that acts on a selected watch and says what it did.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from sqlalchemy import update

from archiver_app.gui.changes_panel import ChangesPanel
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
from archiver_app.store.models import Job

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
