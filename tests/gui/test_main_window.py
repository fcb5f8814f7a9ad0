"""The main window: sidebar views, detail pane edits, search, saved searches, state."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
from archiver_app.store.models import Copy, Destination, File, Snapshot
from tests.helpers.archive import at
from tests.helpers.factories import bulk_snapshots
from tests.helpers.snapshots import add_snapshot


def _fts_tags(library: Library, snapshot_id: int) -> str:
    conn = sqlite3.connect(library.db_path)
    try:
        return str(
            conn.execute("SELECT tags FROM snapshot_fts WHERE rowid=?", (snapshot_id,)).fetchone()[
                0
            ]
        )
    finally:
        conn.close()


def test_lists_captures_and_shows_details_with_copies(
    qtbot: QtBot, library: Library, op_runner: OpRunner, gui_settings: QSettings
) -> None:
    bulk_snapshots(library, 250)
    sid = add_snapshot(
        library,
        "https://river.example/flood",
        title="Flood report",
        body="river rose",
        fidelity="fallback",
        provenance={"fidelity_reason": "timed out after 30 s"},
    )
    older = add_snapshot(library, "https://river.example/flood", title="Flood (older)")
    with library.write() as s:
        dest = Destination(uuid="u-1", label="Blue drive", last_mount_path="/nowhere")
        s.add(dest)
        s.flush()
        for f in s.query(File).filter_by(snapshot_id=sid):
            s.add(Copy(file_id=f.id, destination_id=dest.id, state="present"))
    window = MainWindow(library, runner=op_runner, settings=gui_settings)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: not window.model.loading)
    assert window.model.rowCount() == 252
    assert "252 captures" in window.status.count.text()
    assert str(library.root) in window.windowTitle()
    row = window.model.row_of(sid)
    assert row is not None
    with qtbot.waitSignal(window.detail.loaded, timeout=5000):
        window.table.selectRow(row)
    d = window.detail
    assert d.title.text() == "Flood report"
    assert d.url.text().replace("\u200b", "") == "https://river.example/flood"
    assert d.fidelity.text() == "fallback — timed out after 30 s"
    assert "2 copies" in d.copies.text() and "Blue drive: present" in d.copies.text()
    assert d.others.count() == 1 and older == d.others.item(0).data(Qt.ItemDataRole.UserRole)
    assert any("screenshot" in d.files.item(i).text() for i in range(d.files.count()))
    qtbot.waitUntil(
        lambda: d.screenshot.pixmap() is not None and not d.screenshot.pixmap().isNull()
    )
    qtbot.waitUntil(lambda: window.status.worker.text() != "")
    assert "free" in window.status.disk.text()
    failed = add_snapshot(  # why a capture failed is said with its state, not its fidelity
        library,
        "https://members.example/",
        state="failed",
        fidelity="unknown",
        provenance={"error": "session expired: the site asked to log in again"},
    )
    window.refresh_all()
    qtbot.waitUntil(lambda: window.model.row_of(failed) is not None)
    with qtbot.waitSignal(window.detail.loaded, timeout=5000):
        window.table.selectRow(window.model.row_of(failed))
    assert d.status.text().startswith("failed — session expired: the site asked to log in")
    assert d.fidelity.text() == "unknown"
    window.request_quit()


def test_an_edit_refreshes_what_its_changes_name(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    window = main_window
    a = add_snapshot(library, "https://a.example/", title="A")
    b = add_snapshot(library, "https://b.example/", title="B")
    window.refresh_all()
    assert window.sidebar.select_key("view:untagged")
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)
    window.add_tags([a], ["river"])  # Untagged depends on tags: the table re-reads
    qtbot.waitUntil(lambda: window.model.rowCount() == 1 and window.model.snapshot_id(0) == b)
    qtbot.waitUntil(lambda: any(e.label == "river" for e in window.sidebar.entries()))
    qtbot.waitUntil(lambda: not window.model.loading)
    window.apply_changes(window.library.snapshots.set_notes(b, "later"))  # no tags touched
    assert not window.model.loading  # a refresh would have started at once


def test_tags_and_notes_edits_reach_database_and_search(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    window = main_window
    sid = add_snapshot(library, "https://a.example/", title="Alpha page", body="alpha text")
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
    with qtbot.waitSignal(window.detail.loaded):
        window.table.selectRow(0)
    window.detail.tags.setText("research, climate ,research")
    with qtbot.waitSignal(window.detail.edited, timeout=5000):
        window.detail.save_tags()
    with library.session() as s:
        from archiver_app.store.models import Snapshot

        assert sorted(t.name for t in s.get(Snapshot, sid).tags) == ["climate", "research"]
    assert _fts_tags(library, sid) == "climate research"
    qtbot.waitUntil(lambda: any(e.kind == "tag" for e in window.sidebar.entries()))
    window.detail.notes.setPlainText("check the map later")
    with qtbot.waitSignal(window.detail.edited, timeout=5000):
        window.detail.save_notes()
    with library.session() as s:
        assert s.get(Snapshot, sid).notes == "check the map later"
    # the new tag is a sidebar view and is searchable
    tag = next(e for e in window.sidebar.entries() if e.kind == "tag")
    assert window.sidebar.select_key(tag.key)
    qtbot.waitUntil(lambda: not window.model.loading)
    assert window.model.rowCount() == 1
    window.sidebar.select_key("view:untagged")
    qtbot.waitUntil(lambda: not window.model.loading)
    assert window.model.rowCount() == 0


def test_notes_typed_are_saved_without_the_button(
    qtbot: QtBot, library: Library, op_runner: OpRunner, gui_settings: QSettings
) -> None:
    """Notes typed and never saved with the button are kept when the user selects another
    capture, and when the window closes."""
    first = add_snapshot(library, "https://a.example/", title="Alpha page")
    second = add_snapshot(library, "https://b.example/", title="Beta page")
    window = MainWindow(library, runner=op_runner, settings=gui_settings)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)
    with qtbot.waitSignal(window.detail.loaded):
        window.table.selectRow(window.model.row_of(first))
    window.detail.notes.setPlainText("ask the harbour office")
    with qtbot.waitSignal(window.detail.edited, timeout=5000):  # saved on the way
        window.table.selectRow(window.model.row_of(second))
    qtbot.waitUntil(lambda: window.detail.detail is not None and window.detail.detail.id == second)
    assert library.snapshots.detail(first).notes == "ask the harbour office"
    window.detail.notes.setPlainText("tide tables differ")
    window.request_quit()
    assert library.snapshots.detail(second).notes == "tide tables differ"


def test_search_as_you_type_and_saved_search(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    window = main_window
    add_snapshot(library, "https://r.example/", title="River flood", body="levee")
    add_snapshot(library, "https://c.example/", title="City hall", body="council")
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)
    window.open_replay_id(library.recent_snapshots(1)[0].id)
    assert window.tabs.currentIndex() == 1  # reading a capture in its tab
    window.search.setFocus()
    qtbot.keyClicks(window.search, "lev")
    qtbot.waitUntil(lambda: window.model.query.search == "lev" and not window.model.loading)
    assert window.model.rowCount() == 1
    assert window.tabs.currentIndex() == 0  # typed over the replay: the results show
    assert not window.table.horizontalHeader().isSectionHidden(5)  # the Match column
    window.add_saved_search("Levees")
    qtbot.keyClick(window.search, "a", Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(window.search, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: window.model.query.search == "" and not window.model.loading)
    assert window.model.rowCount() == 2
    saved = [e for e in window.sidebar.entries() if e.kind == "saved"]
    assert [e.label for e in saved] == ["Levees"]
    window.sidebar.select_key(saved[0].key)
    qtbot.waitUntil(lambda: not window.model.loading)
    assert window.model.rowCount() == 1 and window.search.text() == "lev"


def test_filters_out_of_sight_filter_nothing(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """Hiding the filter bar kept its filters: "All captures" showed 1 of 7 with nothing on
    screen to say why. Hidden, it clears them; a saved search with filters shows the bar."""
    window = main_window
    add_snapshot(library, "https://r.example/", title="River flood", tags=("cranes",))
    add_snapshot(library, "https://c.example/", title="City hall")
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)
    window.menus.filters.trigger()  # Show Filters
    assert window.filter_bar.isVisible()
    window.filter_bar.tag.setText("cranes")
    window.filter_bar.tag.textEdited.emit("cranes")
    qtbot.waitUntil(lambda: window.model.query.filters.tag == "cranes" and not window.model.loading)
    assert window.model.rowCount() == 1
    window.add_saved_search("Cranes")
    window.menus.filters.trigger()  # hidden: the filter goes with it
    assert not window.filter_bar.isVisible() and window.filter_bar.tag.text() == ""
    qtbot.waitUntil(lambda: window.model.query.filters.tag == "" and not window.model.loading)
    assert window.model.rowCount() == 2
    saved = [e for e in window.sidebar.entries() if e.kind == "saved"]
    window.sidebar.select_key(saved[0].key)
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
    assert window.filter_bar.isVisible() and window.menus.filters.isChecked()


def test_the_chosen_captures_stay_chosen_when_the_table_is_read_again(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """A capture that finished reset the table: the selection went, Delete and Ctrl+D
    acted on nothing while the pane showed a capture no row was chosen for."""
    from PySide6.QtCore import QItemSelectionModel

    window = main_window
    first = add_snapshot(library, "https://a.example/", title="A", captured_at=at(2024))
    second = add_snapshot(library, "https://b.example/", title="B", captured_at=at(2023))
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)
    with qtbot.waitSignal(window.detail.loaded):
        window.table.selectRow(window.model.row_of(second))
    chosen = window.table.selectionModel()
    chosen.select(
        window.model.index(window.model.row_of(first), 0),
        QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
    )
    assert sorted(window.selected_ids()) == sorted([first, second])
    newest = add_snapshot(library, "https://c.example/", title="C", captured_at=at(2025))
    window.refresh_all()  # as when a capture finishes: the rows move down by one
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 3)
    assert sorted(window.selected_ids()) == sorted([first, second])
    assert newest not in window.selected_ids()
    current = chosen.currentIndex()
    assert window.model.snapshot_id(current.row()) == second == window.detail.wanted
    many = set(range(1, 40))  # past the few looked up one by one: one pass, same rows
    expected = {sid: window.model.row_of(sid) for sid in (first, second, newest)}
    assert window.model.rows_of(many) == expected


def test_remembers_geometry_splitter_columns_and_collection(
    qtbot: QtBot, library: Library, op_runner: OpRunner, gui_settings: QSettings
) -> None:
    library.ensure_collection("trips")
    window = MainWindow(library, runner=op_runner, settings=gui_settings)
    qtbot.addWidget(window)
    window.show()
    window.resize(720, 520)  # fits the offscreen screen (800x600)
    window.splitter.setSizes([150, 400, 170])
    window.table.horizontalHeader().resizeSection(1, 222)
    trips = [e for e in window.sidebar.entries() if e.kind == "collection" and e.label == "Trips"]
    window.sidebar.select_key(trips[0].key)
    size = window.size()
    window.request_quit()
    again = MainWindow(library, runner=op_runner, settings=gui_settings)
    qtbot.addWidget(again)
    again.show()
    assert again.size() == size
    assert again.splitter.sizes()[0] == window.splitter.sizes()[0]
    assert again.table.horizontalHeader().sectionSize(1) == 222
    assert again.sidebar.current_entry() is not None
    assert again.sidebar.current_entry().key == trips[0].key  # type: ignore[union-attr]
    again.request_quit()


def _drop(window: MainWindow, *urls: QUrl) -> None:
    """Drop ``urls`` onto the window, as the system delivers it (the event only points at
    its data, which must outlive the call)."""
    mime = QMimeData()
    mime.setUrls(list(urls))
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)


def test_drop_and_paste_open_the_capture_dialog(qtbot: QtBot, main_window: MainWindow) -> None:
    _drop(main_window, QUrl("https://example.org/a"), QUrl("https://example.org/b"))
    dialog = main_window.findChild(type(main_window.capture.open_dialog()), "capture_dialog")
    dialogs = [d for d in main_window.findChildren(type(dialog)) if d.urls.toPlainText()]
    assert dialogs[0].urls.toPlainText() == "https://example.org/a\nhttps://example.org/b"
    for d in main_window.findChildren(type(dialog)):
        d.reject()
    QApplication.clipboard().setText("https://example.net/pasted")
    main_window.table.setFocus()
    main_window.menus.paste.trigger()
    pasted = [d for d in main_window.findChildren(type(dialog)) if d.isVisible()]
    assert pasted[-1].urls.toPlainText() == "https://example.net/pasted"
    pasted[-1].reject()


def test_dropping_a_warc_imports_it_and_opens_its_replay(
    qtbot: QtBot, main_window: MainWindow, tmp_path: Path
) -> None:
    from tests.helpers.warcs import Resp, html_page, write_warc

    warc = write_warc(
        tmp_path / "dropped.warc.gz",
        [Resp("https://dropped.example/", html_page("Dropped page", "rare aardvark words"))],
    )
    with qtbot.waitSignal(main_window.imports.finished, timeout=60_000):
        _drop(main_window, QUrl.fromLocalFile(str(warc)))
    report = main_window.imports.last_report
    assert report.failed == []
    assert report.records == 1
    with main_window.library.session() as s:
        titles = s.scalars(select(Snapshot.title)).all()
    assert "Dropped page" in titles
    assert main_window.tabs.count() == 2  # the library and the replay of the dropped page
    from archiver_app.crawl.api import list_jobs

    (job,) = list_jobs(main_window.library)  # the import ran as a job, recorded in the library
    assert (job.kind, job.status) == ("import", "completed")
    assert job.result is not None and job.result["records"] == 1


def test_status_bar_shows_progress_only_when_the_work_knows_its_fraction(
    qtbot: QtBot, main_window: MainWindow, op_runner: OpRunner
) -> None:
    """A bar that follows the work's fraction; no busy animation for work that has none."""
    import threading

    from archiver_app.gui.ops import BackgroundOp
    from archiver_app.tasks import ProgressUpdate

    for panel in (main_window.status, main_window.jobs, main_window.drives):
        panel.timer.stop()  # no refreshes: their operations' start and end move the bar too
    step = threading.Event()
    known = threading.Event()

    def work(progress, cancel) -> None:  # type: ignore[no-untyped-def]
        progress(ProgressUpdate(done=3, total=None, message="finding pages"))
        step.wait(10)
        progress(ProgressUpdate(done=25, total=100, message="copying"))
        known.set()
        cancel.wait(10)

    bar = main_window.status.op
    op = BackgroundOp(op_runner, work, label="copying files").run_in_background()
    try:
        qtbot.waitUntil(lambda: op_runner.running() != [], timeout=5000)
        qtbot.wait(700)  # a poll or two with no fraction known
        assert bar.isHidden()
        assert bar.maximum() != 0  # never the animated busy indicator
        step.set()
        qtbot.waitUntil(lambda: known.is_set() and bar.isVisible(), timeout=3000)
        qtbot.waitUntil(lambda: bar.value() == 250, timeout=3000)
        assert "copying files" in bar.toolTip()
    finally:
        step.set()
        op.cancel()
    qtbot.waitUntil(lambda: not op_runner.running() and bar.isHidden(), timeout=5000)
    assert not main_window.status.op_timer.isActive()


def test_an_import_tells_which_files_failed_or_lost_parts(
    qtbot: QtBot, main_window: MainWindow, tmp_path: Path
) -> None:
    """Dropped files that fail, lose damaged parts, or are changed on the way in are named
    in a notice, with each problem under Show Details; clean files are not mentioned."""
    from PySide6.QtWidgets import QMessageBox

    from tests.helpers.warcs import damaged_warc, one_stream_warc, page_and_data, write_warc

    damaged = damaged_warc(tmp_path / "damaged.warc.gz")
    whole = one_stream_warc(tmp_path / "whole.warc.gz")
    clean = write_warc(tmp_path / "clean.warc.gz", page_and_data("clean.example"))
    bogus = tmp_path / "notes.warc"
    bogus.write_text("just some notes, no WARC at all\n")
    folder = tmp_path / "folder"  # a dropped folder: the archives inside it
    folder.mkdir()
    clean.rename(folder / clean.name)
    with qtbot.waitSignal(main_window.imports.finished, timeout=60_000):
        _drop(main_window, *(QUrl.fromLocalFile(str(p)) for p in (damaged, whole, folder, bogus)))
    [box] = [b for b in main_window.findChildren(QMessageBox) if b.objectName() == "importNotice"]
    assert box.isVisible() and box.icon() == QMessageBox.Icon.Warning
    lines = [line for line in box.text().splitlines() if line]
    assert lines[0] == "Imported 8 records, 8 pages."  # both sides of the damage kept
    assert lines[1].startswith("\N{BULLET} notes.warc was not imported: it is neither")
    assert lines[2] == "\N{BULLET} damaged.warc.gz: 1 damaged part skipped, the rest imported"
    assert lines[3].startswith("\N{BULLET} whole.warc.gz: gzipped as one stream: stored recomp")
    assert len(lines) == 4  # nothing about clean.warc.gz
    assert "damaged.warc.gz\n  - " in box.detailedText()
    box.close()


def test_file_import_web_archives_imports_the_chosen_files(
    qtbot: QtBot, main_window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    from tests.helpers.warcs import Resp, html_page, write_warc

    warc = write_warc(
        tmp_path / "chosen.warc.gz",
        [Resp("https://chosen.example/", html_page("Chosen page", "words"))],
    )
    asked: list[str] = []

    def choose(_parent: object, _title: str, _dir: str, filters: str) -> tuple[list[str], str]:
        asked.append(filters)
        return [str(warc)], ""

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(choose))
    action = main_window.menus.import_archives
    file_menu = main_window.menuBar().actions()[0].menu()
    assert action in file_menu.actions() and action.shortcut().toString() == "Ctrl+I"
    with qtbot.waitSignal(main_window.imports.finished, timeout=60_000):
        action.trigger()
    assert "*.warc.gz" in asked[0] and "*.wacz" in asked[0]
    assert main_window.imports.last_report.records == 1
    with main_window.library.session() as s:
        assert "Chosen page" in s.scalars(select(Snapshot.title)).all()


def test_every_key_in_the_guide_is_bound(main_window: MainWindow) -> None:
    """docs/gui.md's key table holds on this platform (Qt's standard Preferences key, for
    one, exists only on macOS)."""
    import re

    from PySide6.QtGui import QAction

    guide = (Path(__file__).parents[2] / "docs" / "gui.md").read_text(encoding="utf-8")
    table = guide[guide.index("| Key | Action |") :]
    documented = {
        key.strip()
        for cell in re.findall(r"^\| ([^|]+?) \|", table, re.MULTILINE)[2:]
        for key in re.sub(r"\s*\([^)]*\)", "", cell).split(" / ")
    }
    bound = {
        seq.toString() for action in main_window.findChildren(QAction) for seq in action.shortcuts()
    }
    assert "Ctrl+," in documented and len(documented) >= 14
    assert documented <= bound, sorted(documented - bound)


def test_opening_the_window_resumes_or_reports_jobs_whose_process_died(
    qtbot: QtBot, library: Library, op_runner: OpRunner, gui_settings: QSettings
) -> None:
    from datetime import timedelta

    from sqlalchemy import update

    from archiver_app.jobs import JobKind, enqueue
    from archiver_app.jobs.background import ResumeReport
    from archiver_app.jobs.operations import export_config, mirror_config
    from archiver_app.store.models import Job

    mirror_id = enqueue(library, JobKind.MIRROR, mirror_config(), name="mirror")
    export_id = enqueue(library, JobKind.EXPORT, export_config(Path("x.wacz")), name="export")
    with library.write() as s:  # what a killed app leaves: running rows nobody renews
        s.execute(
            update(Job)
            .where(Job.id.in_([mirror_id, export_id]))
            .values(
                status="running",
                lease_owner="gone:1:x",
                lease_expires_at=library.clock() - timedelta(seconds=5),
            )
        )
    window = MainWindow(library, runner=op_runner, settings=gui_settings)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.background.resumed, timeout=60_000) as resumed:
        window.show()
    report = resumed.args[0]
    assert isinstance(report, ResumeReport)
    assert (report.runs, report.reported) == ([(mirror_id, "completed")], 1)
    with library.session() as s:
        export = s.get(Job, export_id)
        assert export is not None and export.status == "failed"
        assert "interrupted" in (export.last_error or "")
    for timer in (window.jobs.timer, window.drives.timer, window.status.timer):
        timer.stop()
    window.migrator.stop()


def test_a_capture_without_a_screenshot_says_so(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """A failed capture has no screenshot: the pane stops saying it is loading one."""
    sid = add_snapshot(library, "http://127.0.0.1:9/", state="failed", screenshot=False)
    main_window.refresh_all()
    qtbot.waitUntil(lambda: not main_window.model.loading and main_window.model.rowCount() == 1)
    with qtbot.waitSignal(main_window.detail.loaded):
        main_window.detail.show_snapshot(sid)
    qtbot.waitUntil(lambda: main_window.detail.screenshot.text() == "No screenshot")


def test_sidebar_entries_have_room_around_their_text(main_window: MainWindow) -> None:
    """Uniform row heights come from the first row, a group title in a smaller font: the
    entries under it must not be cramped to that height."""
    sidebar = main_window.sidebar
    assert sidebar.select_key("view:recent")
    item = sidebar.currentItem()
    assert item is not None
    assert sidebar.visualItemRect(item).height() >= sidebar.fontMetrics().height() + 6


def test_the_pane_shows_who_wrote_the_page_and_when_it_says_so(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    from tests.unit.cite.test_cite import ARTICLE, _page

    said = _page(library, "https://harbour.example/cranes", ARTICLE)
    silent = _page(library, "https://harbour.example/quiet", "<title>Quiet</title><p>x</p>")
    detail, facts = main_window.detail, main_window.detail.facts
    with qtbot.waitSignal(detail.loaded):
        detail.show_snapshot(said)
    assert (detail.authors.text(), detail.published.text()) == ("Jane Port, Ali Quay", "2026-03-04")
    assert facts.isRowVisible(detail.authors) and facts.isRowVisible(detail.published)
    with qtbot.waitSignal(detail.loaded):
        detail.show_snapshot(silent)
    assert not facts.isRowVisible(detail.authors) and not facts.isRowVisible(detail.published)


def test_ctrl_f_finds_in_the_replay_in_front_and_searches_the_library_elsewhere(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    from archiver_app.gui.replay.widget import ReplayWidget

    window = main_window
    sid = add_snapshot(library, "https://r.example/", title="River flood", body="levee")
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    replay = window.open_replay_id(sid)
    assert isinstance(replay, ReplayWidget)
    replay.address.setFocus()
    qtbot.waitUntil(replay.address.hasFocus)
    qtbot.keyClick(replay.address, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert replay.find_bar.isVisible() and replay.find_edit.hasFocus()  # find in the page
    window.tabs.setCurrentIndex(0)
    window.table.setFocus()
    qtbot.waitUntil(window.table.hasFocus)
    qtbot.keyClick(window.table, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.search.hasFocus()  # the library's search field


def test_capture_it_now_in_a_replay_opens_the_capture_dialog_and_tabs_follow_the_page(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """The not-archived page's "capture it now?" button did nothing in the app (its signal
    was connected nowhere); a replay tab kept its first page's title after a link. A page
    linked from a capture made logged in is offered in that capture's profile and
    collection (it offered a fresh browser, not logged in: the capture met the login form)."""
    from archiver_app.gui.capture_dialog import CaptureDialog
    from archiver_app.gui.replay.widget import ReplayWidget

    window = main_window
    river = add_snapshot(library, "https://r.example/", title="River")
    replay = window.open_replay_id(river)
    assert isinstance(replay, ReplayWidget)
    replay.captureRequested.emit("https://elsewhere.example/", 0)
    qtbot.waitUntil(lambda: bool(window.findChildren(CaptureDialog)))
    [dialog] = window.findChildren(CaptureDialog)
    assert dialog.urls.toPlainText() == "https://elsewhere.example/"
    assert dialog.profile.currentData() is None
    dialog.reject()
    dialog.deleteLater()

    library.profiles.create("members")
    members = add_snapshot(library, "https://r.example/members", collection="club")
    with library.write() as s:
        s.get(Snapshot, members).profile = "members"  # type: ignore[union-attr]
    replay.captureRequested.emit("https://r.example/members/more", members)
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(CaptureDialog)))
    [dialog] = [d for d in window.findChildren(CaptureDialog) if d.isVisible()]
    assert dialog.urls.toPlainText() == "https://r.example/members/more"
    assert dialog.profile.currentData() == "members"
    assert dialog.collection.currentData() == "club"
    dialog.reject()
    replay.titleChanged.emit("Another page")
    assert window.tabs.tabText(window.tabs.indexOf(replay)) == "Another page"


def test_the_help_menu_lists_every_shortcut_and_checks_the_setup(
    qtbot: QtBot, main_window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    from archiver_app.diagnostics import Check
    from archiver_app.gui.help_menu import ShortcutsDialog, about_text

    window = main_window
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert titles[-1] == "Help"
    shortcuts = ShortcutsDialog(window)
    qtbot.addWidget(shortcuts)
    table = shortcuts.table
    rows = {
        (table.item(r, 0).text(), table.item(r, 1).text(), table.item(r, 2).text())
        for r in range(table.rowCount())
    }
    assert ("Edit", "Find", "Ctrl+F") in rows and ("View", "Jobs", "Ctrl+J") in rows
    assert ("Capture", "Compare Captures", "Ctrl+D") in rows  # added by another module
    assert ("Help", "Keyboard Shortcuts", "F1") in rows
    assert str(window.library.root) in about_text(window)

    checks = [Check("library", True, "fine"), Check("browser", False, "none found")]
    monkeypatch.setattr("archiver_app.diagnostics.run_doctor", lambda root: checks)
    window.help.check.trigger()
    qtbot.waitUntil(lambda: window.help.dialog is not None, timeout=10_000)
    dialog = window.help.dialog
    assert dialog.verdict.text() == "1 of 2 checks need attention."
    assert dialog.text.toPlainText() == (  # archiver doctor's lines, as it prints them
        "ok library  fine\n!! browser  none found\n1 problem found"
    )
    dialog.close()


def test_the_status_bar_says_when_a_capture_holds_the_sites_error_page(
    main_window: MainWindow,
) -> None:
    from archiver_app.crawl.inline import InlineRun

    bar = main_window.statusBar()
    main_window.capture._done(InlineRun(4, "done", 1, 0, (404,)))
    assert bar.currentMessage() == (
        "Captured 1 page (job #4), but the site answered HTTP 404: the capture is its error page."
    )
    main_window.capture._done(InlineRun(5, "done", 3, 1, (404, 503)))
    assert bar.currentMessage() == (
        "Captured 3 pages (job #5); error answers from the site: 2 (HTTP 404, 503); "
        "1 failed: see Jobs for why."
    )
    main_window.capture._done(InlineRun(6, "done", 1, 0))
    assert bar.currentMessage() == "Captured 1 page (job #6)."


def test_the_status_bar_says_a_paused_or_aborted_crawl_stopped_before_its_end(
    main_window: MainWindow,
) -> None:
    """A crawl paused (or aborted) in the Jobs panel ends its run here: the status bar and
    the notification say so (they said "Captured 21 pages", as of a crawl finished)."""
    from archiver_app.crawl.inline import InlineRun

    bar = main_window.statusBar()
    main_window.capture._done(InlineRun(13, "paused", 21, 0))
    assert bar.currentMessage() == (
        "Paused job #13 after capturing 21 pages; Resume it in the Jobs panel."
    )
    main_window.capture._done(InlineRun(14, "aborted", 3, 1))
    assert bar.currentMessage() == (
        "Aborted job #14 after capturing 3 pages; 1 failed: see Jobs for why."
    )


def test_a_capture_says_at_once_that_it_is_under_way(
    qtbot: QtBot, main_window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page that answered slowly gave no sign of its capture for seconds."""
    import threading

    from archiver_app.crawl.inline import InlineRun
    from archiver_app.gui import window_capture
    from archiver_app.gui.capture_input import CaptureRequest

    release = threading.Event()

    def slow(*_args: object, **_kwargs: object) -> InlineRun:
        release.wait(10)
        return InlineRun(9, "done", 1, 0)

    monkeypatch.setattr(window_capture, "run_capture_request", slow)
    bar = main_window.statusBar()
    try:
        main_window.capture.run(CaptureRequest(("https://slow.example/page",)))
        assert bar.currentMessage() == "Capturing https://slow.example/page…"
    finally:
        release.set()
    qtbot.waitUntil(lambda: bar.currentMessage() == "Captured 1 page (job #9).", timeout=10_000)


def test_a_refused_capture_no_longer_says_it_is_under_way(
    qtbot: QtBot, main_window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused (here: its browser profile does not exist), the capture's "Capturing …"
    stayed in the status bar for ever beside the error box."""
    from PySide6.QtWidgets import QMessageBox

    from archiver_app.gui.capture_input import CaptureRequest

    boxes: list[str] = []
    monkeypatch.setattr(QMessageBox, "open", lambda box: boxes.append(box.text()))
    bar = main_window.statusBar()
    url = "http://127.0.0.1:8765/notice.html"
    main_window.capture.run(CaptureRequest((url,), profile="nobody"))
    assert bar.currentMessage() == f"Capturing {url}…"
    qtbot.waitUntil(lambda: bool(boxes), timeout=10_000)
    assert boxes[0].startswith("Could not finish capturing: ") and "nobody" in boxes[0]
    assert bar.currentMessage() == boxes[0]
    assert not main_window.runner.busy()


def test_a_smaller_window_takes_from_the_details_too(main_window: MainWindow, qtbot: QtBot) -> None:
    main_window.resize(1400, 900)
    qtbot.waitUntil(lambda: main_window.width() == 1400)
    main_window.resize(900, 600)
    qtbot.waitUntil(lambda: main_window.width() == 900)
    _, table, details = main_window.splitter.sizes()
    assert table > 1.4 * details  # the table alone shrank: 365 beside 315


def test_the_filters_leave_the_details_their_room(main_window: MainWindow, qtbot: QtBot) -> None:
    """The filter bar is wider than the table's column at 1024 pixels: above the table it
    crushed the details pane to 40 pixels; it spans the window instead."""
    main_window.resize(1024, 700)
    qtbot.waitUntil(lambda: main_window.width() == 1024)
    main_window.menus.filters.setChecked(True)
    main_window.toggle_filters()
    qtbot.waitUntil(main_window.filter_bar.isVisible)
    qtbot.wait(50)
    assert main_window.splitter.sizes()[2] > 150


def test_a_cancelled_import_is_said_in_the_status_bar_not_as_an_error(
    qtbot: QtBot, main_window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelling an import read "Something went wrong while importing … Cancelled:"."""
    from PySide6.QtWidgets import QMessageBox

    from archiver_app.gui.window_imports import CANCELLED_IMPORT
    from tests.helpers.warcs import site, write_warc

    boxes: list[str] = []
    monkeypatch.setattr(QMessageBox, "open", lambda box: boxes.append(box.text()))
    op = main_window.imports.import_archives([str(write_warc(tmp_path / "a.warc.gz", site(2)))])
    op.cancel()  # as the Jobs panel's Cancel does, before its first record
    qtbot.waitUntil(lambda: not main_window.runner.busy(), timeout=60_000)
    assert boxes == []
    assert main_window.statusBar().currentMessage() == CANCELLED_IMPORT
    assert main_window.library.info().snapshots == 0


def test_the_details_show_the_capture_acted_on(
    main_window: MainWindow, library: Library, qtbot: QtBot
) -> None:
    """Ctrl+End moves the table's current row without selecting it: the details followed
    the current row and showed another capture than the one Delete, Compare and Cite act
    on (a note typed there went to a capture not selected). They follow the selection."""
    from PySide6.QtTest import QTest

    window = main_window
    ids = [
        add_snapshot(library, f"https://{h}.example/", title=h.upper(), captured_at=at(2020 + i))
        for i, h in enumerate("abc")
    ]
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 3)
    chosen = ids[1]
    with qtbot.waitSignal(window.detail.loaded):
        window.table.selectRow(window.model.row_of(chosen))
    window.table.setFocus()
    for key in (Qt.Key.Key_End, Qt.Key.Key_Home):
        QTest.keyClick(window.table, key, Qt.KeyboardModifier.ControlModifier)
        qtbot.wait(50)
        current = window.table.selectionModel().currentIndex()
        assert window.model.snapshot_id(current.row()) != chosen  # the current row moved...
        assert window.selected_ids() == [chosen] == [window.detail.wanted]  # ...nothing else
    QTest.keyClick(window.table, Qt.Key.Key_End)  # a move without Ctrl selects: followed
    qtbot.waitUntil(lambda: window.selected_ids() == [ids[2]] == [window.detail.wanted])


def test_an_imported_capture_shows_the_screenshot_its_warc_keeps(
    qtbot: QtBot, main_window: MainWindow, library: Library, tmp_path: Path
) -> None:
    """An import's captures share its folder and have no screenshot file: each shows the
    PNG of its own ``urn:view:`` record (detail pane and thumbnail), and its size says
    what it counts."""
    from tests.helpers.imported import BLUE, RED, import_captures

    red, blue = import_captures(
        library, tmp_path, {"https://site.example/a": RED, "https://site.example/b": BLUE}
    )
    main_window.refresh_all()
    qtbot.waitUntil(lambda: not main_window.model.loading and main_window.model.rowCount() == 2)
    d = main_window.detail
    for sid, colour in ((red, (200, 0, 0)), (blue, (0, 0, 200))):
        with qtbot.waitSignal(d.loaded):
            d.show_snapshot(sid)
        qtbot.waitUntil(
            lambda: d.screenshot.pixmap() is not None and not d.screenshot.pixmap().isNull()
        )
        image = d.screenshot.pixmap().toImage()
        shown = image.pixelColor(image.width() // 2, image.height() // 2)
        assert (shown.red(), shown.green(), shown.blue()) == colour
        assert "its records in the imported WARC" in d.size_label.text()
    thumbnails = main_window.thumbnails
    folder = library.snapshots.detail(red).folder  # type: ignore[union-attr]
    thumbnails.small(red, folder)
    thumbnails.wait_idle()
    qtbot.waitUntil(lambda: thumbnails.has(red))
    small = thumbnails.small(red, folder)
    assert small is not None and not small.isNull()


def test_add_tags_with_nothing_selected_says_what_to_do(main_window: MainWindow) -> None:
    """Ctrl+T with no capture selected did nothing at all (Delete says what it needs)."""
    main_window.table.clearSelection()
    main_window.tag_selection()
    assert main_window.statusBar().currentMessage() == "Select the captures to tag first."


def test_the_details_shown_follow_a_job_that_finished(
    qtbot: QtBot, main_window: MainWindow, tmp_path: Path
) -> None:
    """After Mirror Now the selected capture's Copies still read "1 copy ✔ Laptop" until
    another row was picked and this one again: a finished job re-reads the details shown."""
    from archiver_app.mirror import add_destination, run_mirror

    library = main_window.library
    sid = add_snapshot(library, "https://harbour.example/", title="Harbour")
    main_window.detail.show_snapshot(sid)
    qtbot.waitUntil(lambda: "Laptop" in main_window.detail.copies.text())
    assert "drive1" not in main_window.detail.copies.text()
    (tmp_path / "drive1").mkdir()
    add_destination(library, tmp_path / "drive1", "drive1")
    assert run_mirror(library).ok
    main_window.jobs.job_finished.emit(1, "completed")
    qtbot.waitUntil(lambda: "drive1: present" in main_window.detail.copies.text())
