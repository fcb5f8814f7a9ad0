"""The main window: sidebar | captures table | detail pane, with jobs and drives docks.

The window lays the parts out and routes between them; each responsibility lives in its
own module: actions, menus and the toolbar (:mod:`~archiver_app.gui.window_menus`),
capturing (:mod:`~archiver_app.gui.window_capture`), imports and drops
(:mod:`~archiver_app.gui.window_imports`), replay tabs (:mod:`~archiver_app.gui.replay_tabs`),
background jobs (:mod:`~archiver_app.gui.window_jobs`) and the remembered layout
(:mod:`~archiver_app.gui.window_state`). It owns no long work: every database count,
capture, mirror or search runs through the :class:`~archiver_app.gui.ops.OpRunner` it is
given. Services (library, runner, settings) are passed in, so tests build it with a
temporary library and a throw-away ``QSettings`` file.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QIcon
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDockWidget,
    QFileDialog,
    QHeaderView,
    QInputDialog,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from archiver_app.api import Changes
from archiver_app.api.labels import parse_tags
from archiver_app.api.settings import SAVED_SEARCHES_KEY
from archiver_app.api.table import Filters, RowData, SnapshotQuery, View
from archiver_app.gui.browse_window import BrowseLauncher
from archiver_app.gui.delete_captures import DeleteCaptures
from archiver_app.gui.detail_pane import DetailPane
from archiver_app.gui.drives_panel import DrivesPanel
from archiver_app.gui.edition_dialog import install_edition_action
from archiver_app.gui.empty_table import empty_table_text
from archiver_app.gui.errors import show_error
from archiver_app.gui.help_menu import HelpActions
from archiver_app.gui.html_delegate import HtmlDelegate
from archiver_app.gui.idle_migrator import IdleMigrator
from archiver_app.gui.jobs_panel import JobsPanel
from archiver_app.gui.kept_selection import KeptSelection
from archiver_app.gui.message_bar import message_bar, show_status_error
from archiver_app.gui.ops import STOPS_ON_QUIT, BackgroundOp, OpRunner
from archiver_app.gui.replay_tabs import ReplayTabs
from archiver_app.gui.research_actions import ResearchActions
from archiver_app.gui.search_bar import FilterBar, SearchField
from archiver_app.gui.search_keys import SearchKeys, find_or_search
from archiver_app.gui.settings_dialog import SettingsDialog
from archiver_app.gui.sidebar import Sidebar, SidebarEntry
from archiver_app.gui.sidebar_menu import SidebarMenu
from archiver_app.gui.snapshot_model import COL_MATCH, COL_TIME, COL_TITLE, SnapshotTableModel
from archiver_app.gui.status_bar import StatusPanel
from archiver_app.gui.table_menu import install_table_menu
from archiver_app.gui.tables import CapturesTable
from archiver_app.gui.thumbnails import SMALL, ThumbnailCache
from archiver_app.gui.tray import Tray
from archiver_app.gui.verify_dialog import VerifyActions
from archiver_app.gui.watch_scheduler import install_watch_scheduler
from archiver_app.gui.window_capture import WindowCapture
from archiver_app.gui.window_imports import WindowImports
from archiver_app.gui.window_jobs import WindowJobs
from archiver_app.gui.window_menus import WindowActions
from archiver_app.gui.window_state import restore_window_state, save_window_state
from archiver_app.library import Library
from archiver_app.units import counted


class MainWindow(QMainWindow):
    """Shows one library. Threading: GUI thread only; long work goes through ``runner``."""

    closed = Signal()  # the window really closed (not hidden to the tray): quit the app

    def __init__(
        self,
        library: Library,
        *,
        runner: OpRunner | None = None,
        settings: QSettings | None = None,
        icon: QIcon | None = None,
    ) -> None:
        super().__init__()
        self.library = library
        self.runner = runner or OpRunner(self)
        self.settings = settings or QSettings()
        self._quitting = False
        self.pending_move: Path | None = None  # set when closing to move the library
        self.pending_open: Path | None = None  # set when closing to open another library
        self.setObjectName("main_window")
        self.setWindowTitle(f"Archiver — {library.root}")
        self.setAcceptDrops(True)
        self.resize(1280, 800)

        self.thumbnails = ThumbnailCache(library, parent=self)
        self.model = SnapshotTableModel(
            library, self.runner, thumbnails=self.thumbnails, parent=self
        )
        self.sidebar = Sidebar(self)
        self._table_entry = "view:all"  # the sidebar entry whose captures the table lists
        self.table = self._captures_table()
        self.filter_bar = FilterBar(self)
        self.filter_bar.hide()
        self.detail = DetailPane(library, self.runner, self.thumbnails, self)
        self.splitter = QSplitter(self)
        self.splitter.setObjectName("main_splitter")
        for part in (self.sidebar, self.table, self.detail):
            self.splitter.addWidget(part)
        self.splitter.setStretchFactor(1, 3)  # a smaller window takes from both, not the table
        self.splitter.setStretchFactor(2, 1)
        self.splitter.setSizes([200, 760, 320])
        view = QWidget(self)  # the filters span the window: in the table's column they were
        col = QVBoxLayout(view)  # wider than the table, and crushed the details pane
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(2)
        col.addWidget(self.filter_bar)
        col.addWidget(self.splitter, 1)
        self.tabs = ReplayTabs(library, view, self)
        self.setCentralWidget(self.tabs)

        self.jobs = JobsPanel(library, self.runner, self)
        self.drives = DrivesPanel(library, self.runner, self)
        self.jobs_dock = self._dock("Jobs", "jobs_dock", self.jobs)
        self.drives_dock = self._dock("Drives", "drives_dock", self.drives)
        self.tabifyDockWidget(self.jobs_dock, self.drives_dock)
        self.jobs_dock.hide()
        self.drives_dock.hide()

        self.search = SearchField(self)
        self.url_field = QLineEdit(self)
        self.url_field.setObjectName("url_field")
        self.url_field.setPlaceholderText("Paste a web address to capture")
        self.status = StatusPanel(message_bar(self), library, self.runner)
        self.tray = Tray(icon or self.windowIcon(), self)
        self.capture = WindowCapture(self)
        # "capture it now?" on a replay's not-archived page: the capture dialog, on that URL
        self.tabs.captureRequested.connect(self.capture.linked_from_replay)
        self.imports = WindowImports(self)
        self.menus = WindowActions(self)
        self.research = ResearchActions(self)  # compare, changes, citations
        self.browse = BrowseLauncher(self)  # Capture while browsing… (Ctrl+Shift+B)
        self.menus.capture_menu.insertAction(self.menus.capture_menu_end, self.browse.action)
        self.verify = VerifyActions(self)  # Tools > Verify Library...
        self.deletion = DeleteCaptures(self)  # Edit > Delete Captures…
        self.sidebar_menu = SidebarMenu(self)  # rename, delete tags and collections
        self.new_edition_action = install_edition_action(self)  # File > New Edition…
        self.background = WindowJobs(self)
        self.watches = install_watch_scheduler(self)  # due watches run; changes in the tray
        self.copy_address = install_table_menu(self)  # right click: the actions above
        self.help = HelpActions(self)  # Help > Keyboard Shortcuts, Check Setup, About
        self._connect()
        self.reload_sidebar()
        restore_window_state(self)
        QTimer.singleShot(0, self.status.refresh)

    @property
    def migrator(self) -> IdleMigrator:
        """The idle migrator (folder migration and scheduled scrubs)."""
        return self.background.migrator

    def _captures_table(self) -> CapturesTable:
        table = CapturesTable(self, self.empty_table_text)
        table.setObjectName("captures")
        table.setModel(self.model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        table.setSortingEnabled(True)
        table.sortByColumn(COL_TIME, Qt.SortOrder.DescendingOrder)
        table.setWordWrap(False)
        table.setAlternatingRowColors(True)
        table.setShowGrid(False)
        table.setIconSize(SMALL)
        vh = table.verticalHeader()
        vh.hide()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(36)
        hh = table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(True)
        hh.resizeSection(COL_TIME, 130)
        # Status (with a profile's mark, beside a scroll bar) fits at 1280 px
        hh.resizeSection(COL_TITLE, 240)
        hh.moveSection(hh.visualIndex(COL_MATCH), COL_TITLE + 1)  # snippets beside titles
        hh.resizeSection(COL_MATCH, 340)
        hh.setSectionHidden(COL_MATCH, True)
        table.setItemDelegateForColumn(COL_MATCH, HtmlDelegate(table))
        return table

    def _connect(self) -> None:
        self.url_field.returnPressed.connect(self.capture.from_field)
        self.sidebar.entry_selected.connect(self._entry_selected)
        self.search.search_changed.connect(self._search_changed)
        # Down and Return in the search field: to the results, open one
        self.search_keys = SearchKeys(self.search, self.table, self.model, self.open_replay)
        self.filter_bar.filters_changed.connect(self._filters_changed)
        self.model.rowsInserted.connect(lambda *_: self._update_count())
        self.model.modelReset.connect(self._update_count)
        self.model.first_chunk.connect(self._update_count)
        self.model.loading_changed.connect(lambda _l: self._update_count())
        self.model.load_failed.connect(
            lambda msg: show_status_error(self, f"Could not list captures: {msg}")
        )
        selection = self.table.selectionModel()
        selection.currentRowChanged.connect(lambda *_: self._follow_selection())
        selection.selectionChanged.connect(lambda *_: self._follow_selection())
        self.kept_selection = KeptSelection(self.table, self.model)  # across refreshes
        self.table.doubleClicked.connect(lambda index: self.open_replay(index.row()))
        self.detail.edited.connect(self.apply_changes)
        self.detail.open_capture.connect(self.open_replay_id)
        self.drives.drive_plugged.connect(
            lambda label: self.tray.notify(
                "Drive plugged in",
                f"{label}: copying what the retention policy asks for now."
                if self.drives.auto_mirror
                else f"{label} is ready for copies.",
            )
        )
        self.drives.message.connect(lambda m: self.statusBar().showMessage(m, 5000))
        self.tray.show_requested.connect(self.show_and_raise)
        self.tray.capture_requested.connect(self._capture_from_tray)
        self.tray.quit_requested.connect(self.request_quit)

    def _dock(self, title: str, name: str, widget: QWidget) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        sized = {"done": False}

        def first_show(visible: bool) -> None:
            if visible and not sized["done"] and self.settings.value("window/state") is None:
                sized["done"] = True  # a restored layout keeps its own sizes
                self.resizeDocks(
                    [dock], [max(220, self.height() * 2 // 5)], Qt.Orientation.Vertical
                )

        dock.visibilityChanged.connect(first_show)
        return dock

    # ------------------------------------------------------------------ library view

    def reload_sidebar(self) -> None:
        lib = self.library
        try:  # a shared library's server gone: said in a box, as the views' reads say it
            saved = list(lib.settings.get(SAVED_SEARCHES_KEY, []) or [])
            lists = lib.collections.all(), lib.tags.all(), saved, lib.editions.list()
        except Exception as exc:  # shown, not raised into Qt's event loop
            show_error(self, exc, "reading the sidebar")
            return
        self.sidebar.populate(*lists)

    def apply_changes(self, changes: Changes) -> None:
        """Refresh what an edit changed: the sidebar for tags, collections and saved
        searches; the table when its rows depend on tags; the details and replays shown."""
        if changes.tags or changes.collections or changes.settings:
            self.reload_sidebar()
        query = self.model.query
        if changes.tags and (
            query.tag_id is not None
            or query.filters.tag
            or query.view is View.UNTAGGED
            or query.search.strip()
        ):
            self.model.refresh()
        elif changes.collections and changes.snapshot_ids and query.collection_id is not None:
            self.model.refresh()  # captures moved into or out of the collection listed
        if self.detail.wanted is not None and self.detail.wanted in changes.snapshot_ids:
            self.detail.show_snapshot(self.detail.wanted)
        self.tabs.apply_changes(changes)  # a replay of a capture deleted says so

    def _entry_selected(self, entry: SidebarEntry) -> None:
        if entry.kind == "edition":  # its coverage view, in a tab (gui/edition_view.py)
            from archiver_app.gui.edition_view import open_edition

            open_edition(self.tabs, self.library, str(entry.value), self.runner,
                         self.apply_changes, job_finished=self.jobs.job_finished,
                         open_capture=self.open_replay_id)  # fmt: skip
            # the sidebar goes back to naming what the table shows: picking the edition
            # again (its tab closed) then opens it again
            QTimer.singleShot(0, lambda: self.sidebar.select_key(self._table_entry, emit=False))
            return
        self._table_entry = entry.key
        q = SnapshotQuery(sort=self.model.query.sort, descending=self.model.query.descending)
        if entry.kind == "view":
            q = q.with_(view=View(entry.value))
        elif entry.kind == "collection":
            q = q.with_(collection_id=int(entry.value))
        elif entry.kind == "tag":
            q = q.with_(tag_id=int(entry.value))
        elif entry.kind == "saved":
            saved = dict(entry.value)
            filters = Filters.from_json(dict(saved.get("filters") or {}))
            self.search.blockSignals(True)
            self.search.set_search(str(saved.get("search", "")))
            self.search.blockSignals(False)
            self.filter_bar.set_filters(filters)
            if filters != Filters():  # a saved search's filters are in sight, never hidden
                self.menus.filters.setChecked(True)
                self.filter_bar.show()
            q = q.with_(search=str(saved.get("search", "")), filters=filters)
            scope = dict(saved.get("scope") or {})  # (saved before scopes were: everything)
            q = q.with_(
                view=View(scope.get("view") or View.ALL.value),
                collection_id=scope.get("collection_id"),
            )
            self.model.set_query(q)
            self._after_query_change()
            return
        q = q.with_(search=self.model.query.search, filters=self.model.query.filters)
        self.model.set_query(q)
        self._after_query_change()

    def _search_changed(self, value: str) -> None:
        self.model.set_query(self.model.query.with_(search=value))
        self._after_query_change()

    def _filters_changed(self, filters: Filters) -> None:
        self.model.set_query(self.model.query.with_(filters=filters))
        self._after_query_change()

    def _after_query_change(self) -> None:
        searching = bool(self.model.query.search.strip())
        self.table.horizontalHeader().setSectionHidden(COL_MATCH, not searching)
        self.detail.show_snapshot(None)
        self.tabs.setCurrentIndex(0)  # typed over a replay tab: the results are the table's

    def empty_table_text(self) -> str | None:
        """What the captures table says when it has no rows (None while they load)."""
        return empty_table_text(self)

    def _update_count(self) -> None:
        self.status.set_count(self.model.rowCount(), self.model.loading, self.model.partial)

    def _follow_selection(self) -> None:
        """The details show a selected capture, the one acted on: the current row when it is
        selected, else the first selected (Ctrl+Home moves the current row alone, and the
        details must not show another capture than Delete, Compare or Cite act on)."""
        selection = self.table.selectionModel()
        current = selection.currentIndex()
        rows = (
            [current.row()] if current.isValid() and selection.isRowSelected(current.row()) else []
        )
        rows = rows or sorted(i.row() for i in selection.selectedRows())[:1]
        sid = self.model.snapshot_id(rows[0]) if rows else None
        if sid is None or sid != self.detail.wanted:  # chosen again after a refresh: shown
            self.detail.show_snapshot(sid)

    def selected_ids(self) -> list[int]:
        """The captures the Edit and Capture menus act on: the one the replay tab in front
        shows (not the table's selection behind it, which may be another capture of the
        address), else the table's selection; none from a tab of another kind."""
        front = self.tabs.currentWidget()
        if front is not self.tabs.widget(0):
            shown = getattr(front, "current", None)  # a ReplayWidget's capture on screen
            sid = getattr(shown, "snapshot_id", None)
            return [sid] if isinstance(sid, int) else []
        ids = []
        for index in self.table.selectionModel().selectedRows():
            sid = self.model.snapshot_id(index.row())
            if sid is not None:
                ids.append(sid)
        return ids

    def selected_rows(self) -> list[RowData]:
        """What the table shows of :meth:`selected_ids`, in table order."""
        if self.tabs.currentWidget() is not self.tabs.widget(0):
            return list(self.library.table.rows(self.selected_ids()).values())
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [rd for rd in map(self.model.row_data, rows) if rd is not None]

    def refresh_all(self) -> None:
        self.model.refresh()
        self.reload_sidebar()
        self.status.refresh(baseline=True)
        self.jobs.refresh()
        self.drives.refresh()
        self.research.refresh_changes()  # watches and changes made elsewhere
        if self.detail.wanted is not None:  # its other captures may have grown, or it is
            self.detail.show_snapshot(self.detail.wanted)  # gone (what is typed there stays)
        from archiver_app.gui.edition_view import EditionView

        for view in self.tabs.findChildren(EditionView):  # changed in a terminal, say
            view.reload()

    def focus_search(self) -> None:
        """Ctrl+F: find in the page of the replay in front, else search the library."""
        find_or_search(self)

    def toggle_filters(self) -> None:
        shown = self.menus.filters.isChecked()
        self.filter_bar.setVisible(shown)
        if not shown:  # filters out of sight must not go on hiding captures
            self.filter_bar.clear()

    def toggle_fullscreen(self) -> None:
        self.setWindowState(self.windowState() ^ Qt.WindowState.WindowFullScreen)

    def save_search(self) -> None:
        name, ok = QInputDialog.getText(self, "Save Search", "Name of this search:")
        if ok and name.strip():
            self.add_saved_search(name.strip())

    def add_saved_search(self, name: str) -> None:
        saved = [
            s
            for s in (self.library.settings.get(SAVED_SEARCHES_KEY, []) or [])
            if s.get("name") != name
        ]
        q = self.model.query  # the sidebar's scope too: a tag's as a tag filter (renamed,
        # merged or deleted, it is followed as any saved tag filter), a collection or view
        entry = self.sidebar.current_entry()
        filters = q.filters
        if q.tag_id is not None and not filters.tag and entry is not None and entry.kind == "tag":
            filters = replace(filters, tag=entry.label)
        scope = {"view": q.view.value, "collection_id": q.collection_id}
        saved.append(
            {"name": name, "search": q.search, "filters": filters.to_json(), "scope": scope}
        )
        self.apply_changes(self.library.settings.put(SAVED_SEARCHES_KEY, saved))

    def tag_selection(self) -> None:
        ids = self.selected_ids()
        if not ids:
            show_status_error(self, "Select the captures to tag first.")
            return
        text, ok = QInputDialog.getText(
            self, "Add Tags", f"Tags to add to {counted(len(ids), 'capture')} (comma separated):"
        )
        names = parse_tags(text) if ok else []
        if names:
            self.add_tags(ids, names)

    def add_tags(self, ids: list[int], names: list[str]) -> BackgroundOp[Changes]:
        library = self.library
        return (
            BackgroundOp(self.runner, lambda _p, _c: library.tags.add(ids, names), label="tagging")
            .success(self.apply_changes)
            .failure(lambda f: show_error(self, f, "adding tags"))
            .run_in_background()
        )

    # ------------------------------------------------------------------ replay tabs

    def open_current(self) -> None:
        index = self.table.currentIndex()
        if index.isValid():
            self.open_replay(index.row())

    def open_replay(self, row: int) -> None:
        sid = self.model.snapshot_id(row)
        if sid is not None:
            self.open_replay_id(sid)

    def open_replay_id(self, snapshot_id: int) -> QWidget | None:
        return self.tabs.open_replay(snapshot_id)

    # ------------------------------------------------------------------ drag and drop

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        mime = event.mimeData()
        if mime.hasUrls() or mime.hasText():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        self.imports.drop(event.mimeData())
        event.acceptProposedAction()

    def open_export(self) -> QDialog:
        """Export what is on screen: the current search, else the current collection."""
        from archiver_app.gui.export_dialog import ExportDialog

        q = self.model.query
        slug = self.library.collections.slug_of(q.collection_id) if q.collection_id else None
        narrowed = q.search.strip() or q.tag_id is not None or q.filters != Filters()
        narrowed = narrowed or q.view is not View.ALL
        shown = None
        if narrowed and not self.model.loading:  # exactly what the table shows
            what = [f"search “{q.search.strip()}”"] if q.search.strip() else []
            what += ["filtered"] if q.filters != Filters() else []
            entry = self.sidebar.current_entry()
            place = entry.label if entry is not None else "All captures"
            shown = (", ".join([place, *what]), self.model.shown_ids())
        dialog = ExportDialog(
            self.library, self.runner, self, collection=slug, search=q.search, shown=shown
        )
        dialog.open()
        return dialog

    def open_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.library, self.runner, self.settings, self)
        dialog.accepted.connect(self.status.refresh)
        dialog.move_requested.connect(self.request_move)
        dialog.open()
        return dialog

    # ------------------------------------------------------------------ closing

    def _capture_from_tray(self) -> None:
        self.show_and_raise()
        self.capture.open_dialog()

    def show_and_raise(self) -> None:
        self.show()
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.raise_()
        self.activateWindow()

    def confirm_quit(self) -> bool:
        """Ask before quitting while work runs; True when it is fine to quit."""
        running = [
            f"{op.label}: {op.on_quit or STOPS_ON_QUIT}"
            for op in self.runner.running()
            if op.blocks_quit
        ]
        if not running:
            return True
        answer = QMessageBox.question(
            self,
            "Quit Archiver?",
            "Work is still running:\n  " + "\n  ".join(running[:5]) + "\n\nQuit anyway?",
        )
        return answer == QMessageBox.StandardButton.Yes

    def request_move(self, dest: Path) -> None:
        """Close the window so the app can move the library to ``dest`` and reopen it."""
        if not self.confirm_quit():
            return
        self.pending_move = dest
        self._quitting = True
        self.close()

    def choose_library(self) -> Path | None:
        """File > Open Library…: a folder chosen, the window closes and the app opens the
        library there (or offers to create one in an empty folder)."""
        chosen = QFileDialog.getExistingDirectory(
            self, "Open a library", str(self.library.root.parent)
        )
        if not chosen or Path(chosen) == self.library.root:
            return None
        if not self.confirm_quit():
            return None
        self.pending_open = Path(chosen)
        self._quitting = True
        self.close()
        return self.pending_open

    def request_quit(self) -> None:
        if not self.confirm_quit():
            return
        self._quitting = True
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        save_window_state(self)
        if not self._quitting and self.tray.available:
            self.hide()  # work goes on; the tray icon brings the window back
            self.tray.notify("Archiver is still running", "Captures and copies continue here.")
            event.ignore()
            return
        if not self._quitting and not self.confirm_quit():
            event.ignore()
            return
        self.detail.flush_notes(now=True)  # typed notes outlive the window
        for t in (self.jobs.timer, self.drives.timer, self.status.timer):
            t.stop()
        self.tray.hide()
        self.background.stop()
        self.model.shutdown()
        self.runner.cancel_all()
        event.accept()
        self.closed.emit()
