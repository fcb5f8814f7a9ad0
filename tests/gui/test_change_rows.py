"""What the Changes view's rows and the Compare view's summary say about a change that
shows 0% everywhere: a page that now answers 404, a new title, resources that now answer
an error; and the watch table: a watch's browser profile, a first capture due now."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from sqlalchemy import select, update

from archiver_app.compare import compare_captures, compile_ignore_patterns
from archiver_app.compare.changes import recent_changes, record_change
from archiver_app.gui.changes_panel import HEADERS, ChangesModel, watch_cells
from archiver_app.gui.compare_view import summary_text
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
from archiver_app.store.models import Job, Snapshot
from tests.unit.compare.test_resource_answers import COUNTER, URL, _capture

PAGE = "http://127.0.0.1:18473/watch/page.html"


def _row_text(model: ChangesModel, row: int) -> dict[str, str]:
    from PySide6.QtCore import Qt

    return {
        header: model.data(model.index(row, column), Qt.ItemDataRole.DisplayRole)
        for column, header in enumerate(HEADERS)
    }


def test_a_change_row_says_what_changed(library: Library) -> None:
    a = _capture(library, 1, {"blue.png": 200})
    b = _capture(library, 2, {"blue.png": 404})
    c = _capture(library, 3, {"blue.png": 404})
    with library.write() as s:  # the page itself now answers 404, under a new title
        s.execute(update(Snapshot).where(Snapshot.id == c).values(http_status=404, title="Gone"))
    ignore = compile_ignore_patterns(COUNTER)
    for sid in (b, c):
        record_change(library, sid, ignore=ignore)
    model = ChangesModel()
    model.set_rows(recent_changes(library))
    newest, older = _row_text(model, 0), _row_text(model, 1)
    assert newest["What changed"] == "HTTP 200 → 404 (an error), title “Harbour” → “Gone”"
    assert older["What changed"] == "1 resource now answers an error"
    assert (older["Text"], older["Look"]) == ("0%", "0%")  # nothing else to see: hence the hint

    text = summary_text(compare_captures(library, a, b, ignore=ignore))
    assert "blue.png now answers 404" in text
    assert "Nothing differs" not in text


def test_the_watch_table_shows_the_profile_and_a_first_capture_due_now(library: Library) -> None:
    library.profiles.create("site")
    plain = library.jobs.watch([PAGE], schedule="daily")
    logged = library.jobs.watch([PAGE], schedule="daily", profile="site")
    rows = {w.job_id: w for w in library.jobs.watches()}
    assert watch_cells(rows[logged])[0] == f"{PAGE} (profile site)"
    assert watch_cells(rows[plain])[0] == PAGE
    assert watch_cells(rows[plain])[2] == "now (first capture)"
    with library.write() as s:  # as after its first capture: its next slot
        s.execute(update(Job).where(Job.id == plain).values(status="indexed"))
    rows = {w.job_id: w for w in library.jobs.watches()}
    assert watch_cells(rows[plain])[2].endswith("03:00 UTC")


def test_a_change_whose_earlier_capture_was_deleted_says_so(
    qtbot: QtBot, library: Library, op_runner: OpRunner, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows show the page's address (error pages share titles); a change whose earlier
    capture was deleted opens nothing, and says why, in the Changes view and in
    `watch changes` (no `archiver diff None 2`)."""
    from archiver_app import cli
    from archiver_app.gui.changes_panel import ChangesPanel

    a = _capture(library, 1, {"blue.png": 200})
    b = _capture(library, 2, {"blue.png": 404})
    with library.write() as s:
        s.execute(update(Snapshot).where(Snapshot.id == b).values(title="Server error"))
    record_change(library, b)
    deleted, _changes = library.snapshots.delete([a])
    assert deleted.deleted == [a]

    panel = ChangesPanel(library, op_runner)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: panel.loaded)
    row = _row_text(panel.model, 0)
    assert row["Page"] == URL and row["Before"] == "–"
    tip = panel.model.data(panel.model.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("Server error\n")
    with qtbot.assertNotEmitted(panel.compareRequested):
        panel.table.activated.emit(panel.model.index(0, 0))
    assert panel.note.text().startswith(
        "The earlier capture this one was compared with has been deleted since: "
    )
    assert not panel.note.isHidden()
    c = _capture(library, 3, {"blue.png": 200})  # a later run
    record_change(library, c)
    panel.refresh()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2)
    assert "has been deleted since" in panel.note.text()  # still true of that row

    assert cli.main(["--library", str(library.root), "watch", "changes"]) == 0
    out = capsys.readouterr().out
    assert "None" not in out and f"capture {b}; the capture before it was deleted" in out

    library.snapshots.delete([b])  # the change the note is about is gone: so is the note
    panel.refresh()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1)
    assert panel.note.isHidden() and panel.note.text() == ""


def test_the_deleted_capture_note_stays_within_the_main_window(
    qtbot: QtBot, main_window: MainWindow, library: Library, tmp_path: Path
) -> None:
    """The note on a change whose earlier capture was deleted stays within the Changes
    view (cut with "…" where it is too long, whole in its tooltip): on one line as wide as
    its text it widened the whole main window past the screen."""
    a = _capture(library, 1, {"blue.png": 200})
    b = _capture(library, 2, {"blue.png": 404})
    record_change(library, b)
    library.snapshots.delete([a])
    main_window.resize(900, 650)
    main_window.show()
    qtbot.waitExposed(main_window)
    panel = main_window.research.show_changes()
    qtbot.waitUntil(lambda: panel.loaded and panel.model.rowCount() == 1)
    width = main_window.width()
    panel.table.activated.emit(panel.model.index(0, 0))
    assert not panel.note.isHidden()
    QApplication.processEvents()
    assert main_window.width() == width
    assert main_window.minimumSizeHint().width() <= width
    main_window.grab().save(str(tmp_path / "deleted_note.png"))


def test_pause_then_resume_the_selected_watch_from_the_changes_view(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    """The button follows the selected watch (Pause, or Resume when it is paused), its row
    says "paused", and Capture Now acts on the selected watch only. Capture Now, Change…,
    Pause and Stop Watching… are enabled only while a watch is selected (Change… and Stop
    Watching… stayed enabled and then said "Select a watched page first.")."""
    from archiver_app.gui.changes_panel import ChangesPanel

    plain = library.jobs.watch([PAGE], schedule="daily")
    other = library.jobs.watch(["http://127.0.0.1:18473/other.html"], schedule="daily")
    with library.write() as s:  # as after their first captures
        s.execute(update(Job).where(Job.id.in_((plain, other))).values(status="indexed"))
    panel = ChangesPanel(library, op_runner)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: panel.loaded)
    buttons = (panel.capture_now, panel.change_button, panel.pause_button, panel.stop_button)
    assert not any(b.isEnabled() for b in buttons)  # nothing selected
    panel.watch_table.selectRow(0)
    assert all(b.isEnabled() for b in buttons) and panel.pause_button.text() == "Pause"
    op = panel.pause_selected()
    assert op is not None
    qtbot.waitUntil(lambda: panel.pause_button.text() == "Resume")
    paused = {w.job_id: w.paused for w in library.jobs.watches()}
    assert paused == {plain: True, other: False}
    cells = {panel.watches.rows[i].job_id: watch_cells(panel.watches.rows[i]) for i in (0, 1)}
    assert cells[plain][2] == "paused" and "paused" in panel.note.text()

    panel.watch_table.clearSelection()
    assert not any(b.isEnabled() for b in buttons)
    panel.watch_table.selectRow(1)
    panel.capture_selected_now()

    def due() -> set[int]:
        now = library.clock()
        return {w.job_id for w in library.jobs.watches() if w.next_run_at and w.next_run_at <= now}

    qtbot.waitUntil(lambda: due() == {other})

    panel.watch_table.selectRow(0)
    panel.pause_selected()
    qtbot.waitUntil(lambda: panel.pause_button.text() == "Pause")
    assert not any(w.paused for w in library.jobs.watches())


def test_a_page_that_now_redirects_is_named_by_diff_changes_and_the_row(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    """`watch run` said "now redirects to …"; `archiver diff`, `watch changes` and the
    Changes row showed only the new title."""
    from datetime import UTC, datetime

    from archiver_app import cli
    from archiver_app.gui.changes_panel import what_changed
    from archiver_app.store.models import Page, PageAttempt
    from tests.helpers.snapshots import add_snapshot

    login = "http://127.0.0.1:18473/login?next=/watch/page.html"
    ids = []
    for day, title, final in ((1, "Notices", PAGE), (2, "Log in", login)):
        job = library.jobs.capture([PAGE])  # one run a day
        when = datetime(2026, 3, day, tzinfo=UTC)
        sid = add_snapshot(library, PAGE, title=title, body=title, captured_at=when)
        with library.write() as s:  # where the capture's browser ended, as a run keeps it
            page_id = s.scalar(select(Page.id).where(Page.job_id == job))
            assert page_id is not None
            s.add(PageAttempt(job_id=job, page_id=page_id, attempt=1, worker_id="w",
                              ruleset_version=1, snapshot_id=sid, http_status=200,
                              final_url=final))  # fmt: skip
        ids.append(sid)
    a, b = ids
    assert record_change(library, b) is not None

    root = ["--library", str(library.root)]
    assert cli.main([*root, "diff", str(a), str(b)]) == 0
    assert f"address: B now redirects to {login}\n" in capsys.readouterr().out
    assert cli.main([*root, "diff", str(a), str(b), "--json"]) == 0
    assert f'"redirect": "now redirects to {login}"' in capsys.readouterr().out
    assert cli.main([*root, "watch", "changes"]) == 0
    assert f"{PAGE}  (now redirects to {login}, title " in capsys.readouterr().out
    [row] = recent_changes(library)
    assert what_changed(row.summary).startswith(f"now redirects to {login}, title ")
    assert summary_text(compare_captures(library, a, b)).count(f"now redirects to {login}") == 1
