"""The main window: sidebar | captures table | detail pane, with jobs and drives docks.

The window wires parts together and owns no long work: every database count, capture,
mirror or search runs through the :class:`~archiver_app.gui.ops.OpRunner` it is given.
Services (library, runner, settings) are passed in, so tests build it with a temporary
library and a throw-away ``QSettings`` file.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDialog,
    QDockWidget,
    QFileDialog,
    QHeaderView,
    QInputDialog,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from archiver_app.api import Changes
from archiver_app.api.labels import parse_tags
from archiver_app.api.settings import SAVED_SEARCHES_KEY
from archiver_app.api.table import Filters, SnapshotQuery, View
from archiver_app.gui.capture_dialog import TAB_BOOKMARKS, CaptureDialog
from archiver_app.gui.capture_input import CaptureRequest
from archiver_app.gui.detail_pane import DetailPane
from archiver_app.gui.drives_panel import DrivesPanel
from archiver_app.gui.errors import show_error
from archiver_app.gui.html_delegate import HtmlDelegate
from archiver_app.gui.idle_migrator import IdleMigrator, scrub_text
from archiver_app.gui.import_notice import import_notice
from archiver_app.gui.jobs_panel import JobsPanel
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner
from archiver_app.gui.research_actions import ResearchActions
from archiver_app.gui.search_bar import FilterBar, SearchField
from archiver_app.gui.settings_dialog import SettingsDialog
from archiver_app.gui.sidebar import Sidebar, SidebarEntry
from archiver_app.gui.snapshot_model import COL_MATCH, COL_TIME, COL_TITLE, SnapshotTableModel
from archiver_app.gui.status_bar import StatusPanel
from archiver_app.gui.tables import CapturesTable
from archiver_app.gui.thumbnails import ThumbnailCache
from archiver_app.gui.tray import Tray
from archiver_app.library import Library
from archiver_app.tasks import ProgressUpdate
from archiver_app.tasks.isolated import prepare as prepare_children

if TYPE_CHECKING:
    from archiver_app.crawl.inline import InlineRun

BOOKMARK_SUFFIXES = (".html", ".htm", ".json", ".txt")
ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz", ".wacz")
log = logging.getLogger(__name__)


EMPTY_LIBRARY_TEXT = (
    "Nothing saved yet.\n\n"
    "Paste a web address in the box above and press Capture (or Ctrl+N for a capture or a "
    "crawl).\n"
    "Drop WARC, WACZ or ARC files, or a folder of them, on this window, or choose File > "
    "Import Web Archives… (Ctrl+I).\n"
    "Coming from ArchiveBox? Choose File > Import ArchiveBox Folder…"
)


def _standard(key: QKeySequence.StandardKey, fallback: str) -> QKeySequence.StandardKey | str:
    """The platform's standard key, or ``fallback`` where it has none (Qt binds
    Preferences only on macOS, Quit not on Windows, Full Screen not on X11)."""
    return key if QKeySequence.keyBindings(key) else fallback


def run_capture_request(
    library: Library, request: CaptureRequest, *, progress: Any, cancel: Any
) -> Any:
    """The capture dialog's request as a job, exactly as ``archiver capture`` and
    ``archiver crawl`` make it (queue, attempts, coverage), run in a child process."""
    from archiver_app.crawl.inline import create_capture_job, create_crawl_job
    from archiver_app.jobs.background import run_in_child

    if request.crawl is None:
        job_id = create_capture_job(
            library, list(request.urls), collection=request.collection, tags=list(request.tags)
        )
    else:
        options = request.crawl
        job_id = create_crawl_job(
            library,
            list(request.urls),
            scope=options.scope,
            ignore_patterns=list(options.ignore_patterns),
            concurrency=options.concurrency,
            user_agent=options.user_agent or None,
            max_depth=options.depth,
            max_pages=options.page_limit,
            collection=request.collection,
            tags=list(request.tags),
            name=f"Crawl of {request.urls[0]}",
        )
    return run_in_child(library, job_id, progress=progress, cancel=cancel)


class MainWindow(QMainWindow):
    """Shows one library. Threading: GUI thread only; long work goes through ``runner``."""

    capture_finished = Signal()  # a capture finished; its result is in last_capture_result
    import_finished = Signal()  # dropped archives were imported; see last_import_report
    jobs_resumed = Signal(object)  # start-up check of interrupted jobs done (ResumeReport)
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
        self.last_capture_result: Any = None
        self.last_import_report: Any = None
        self.setObjectName("main_window")
        self.setWindowTitle(f"Archiver — {library.root}")
        self.setAcceptDrops(True)
        self.resize(1280, 800)

        self.thumbnails = ThumbnailCache(library, parent=self)
        self.model = SnapshotTableModel(
            library, self.runner, thumbnails=self.thumbnails, parent=self
        )
        self.sidebar = Sidebar(self)
        self.table = CapturesTable(self, self.empty_table_text)
        self.table.setObjectName("captures")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(COL_TIME, Qt.SortOrder.DescendingOrder)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setIconSize(self.thumbnails_size())
        vh = self.table.verticalHeader()
        vh.hide()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(36)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(True)
        hh.resizeSection(COL_TIME, 130)
        hh.resizeSection(COL_TITLE, 380)
        hh.moveSection(hh.visualIndex(COL_MATCH), COL_TITLE + 1)  # snippets beside titles
        hh.resizeSection(COL_MATCH, 340)
        hh.setSectionHidden(COL_MATCH, True)
        self.table.setItemDelegateForColumn(COL_MATCH, HtmlDelegate(self.table))
        self.filter_bar = FilterBar(self)
        self.filter_bar.hide()
        self.detail = DetailPane(library, self.runner, self.thumbnails, self)

        center = QWidget(self)
        col = QVBoxLayout(center)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(2)
        col.addWidget(self.filter_bar)
        col.addWidget(self.table, 1)
        self.splitter = QSplitter(self)
        self.splitter.setObjectName("main_splitter")
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(center)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([200, 760, 320])
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("tabs")
        self.tabs.setDocumentMode(True)
        self.tabs.setTabsClosable(True)
        self.tabs.addTab(self.splitter, "Library")
        self.tabs.tabBar().setTabButton(0, self.tabs.tabBar().ButtonPosition.RightSide, None)
        self.tabs.tabCloseRequested.connect(self.close_tab)
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
        self.url_field.returnPressed.connect(self.capture_from_field)
        self.status = StatusPanel(self.statusBar(), library, self.runner)
        self.tray = Tray(icon or self.windowIcon(), self)
        self._build_actions()
        self.research = ResearchActions(self)  # compare, changes, citations

        self.sidebar.entry_selected.connect(self._entry_selected)
        self.search.search_changed.connect(self._search_changed)
        self.filter_bar.filters_changed.connect(self._filters_changed)
        self.model.rowsInserted.connect(lambda *_: self._update_count())
        self.model.modelReset.connect(self._update_count)
        self.model.first_chunk.connect(self._update_count)
        self.model.loading_changed.connect(lambda _l: self._update_count())
        self.model.load_failed.connect(
            lambda msg: self.statusBar().showMessage(f"Could not list captures: {msg}", 10000)
        )
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.table.doubleClicked.connect(lambda index: self.open_replay(index.row()))
        self.detail.edited.connect(self.apply_changes)
        self.detail.open_capture.connect(self.open_replay_id)
        self.jobs.job_finished.connect(self._job_finished)
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
        self.migrator = IdleMigrator(library, self.runner, self)
        self.migrator.finished.connect(self.refresh_all)  # imported or moved snapshots show
        self.migrator.progressed.connect(self._background_progress)
        self.migrator.finished.connect(lambda: self.status.show_background(None))
        QTimer.singleShot(0, self.migrator.start)
        QTimer.singleShot(0, self.resume_interrupted_jobs)
        # Long work runs in child processes: as the first rows come in, load what
        # starting one needs (3 ms here, and a helper process booting beside us) rather
        # than in the worker thread that starts the first one (the window froze meanwhile).
        self._children_prepared = False
        self.model.first_chunk.connect(self._prepare_children_once)

        self.reload_sidebar()
        self.restore_state()
        QTimer.singleShot(0, self.status.refresh)

    def _prepare_children_once(self) -> None:
        if not self._children_prepared:
            self._children_prepared = True
            self._prepare_children()

    @staticmethod
    def _prepare_children() -> None:
        try:
            prepare_children()
        except Exception:  # not fatal: the first background process loads it instead
            log.warning("could not prepare for background processes", exc_info=True)

    @staticmethod
    def thumbnails_size() -> Any:
        from archiver_app.gui.thumbnails import SMALL

        return SMALL

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

    # ------------------------------------------------------------------ actions

    def _action(
        self, text: str, slot: Any, shortcut: QKeySequence.StandardKey | str | None = None
    ) -> QAction:
        action = QAction(text, self)
        if isinstance(shortcut, QKeySequence.StandardKey):
            action.setShortcuts(shortcut)
        elif shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        K = QKeySequence.StandardKey
        self.capture_action = self._action("&New Capture…", self.open_capture_dialog, K.New)
        self.import_bookmarks_action = self._action(
            "Capture &Bookmarks File…", lambda: self.open_capture_dialog(tab=TAB_BOOKMARKS)
        )
        self.paste_action = self._action("Capture from Clipboard", self.paste_capture, K.Paste)
        self.paste_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.table.addAction(self.paste_action)
        self.settings_action = self._action(
            "&Settings…", self.open_settings, _standard(K.Preferences, "Ctrl+,")
        )
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.quit_action = self._action("&Quit", self.request_quit, _standard(K.Quit, "Ctrl+Q"))
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self.find_action = self._action("&Find", self.focus_search, K.Find)
        self.refresh_action = self._action("&Refresh", self.refresh_all, K.Refresh)
        self.filters_action = self._action("Show &Filters", self.toggle_filters, "Ctrl+Shift+F")
        self.filters_action.setCheckable(True)
        self.save_search_action = self._action("&Save Search…", self.save_search, K.Save)
        self.export_action = self._action("&Export…", self.open_export, "Ctrl+E")
        self.import_archives_action = self._action(
            "&Import Web Archives…", self.choose_archives, "Ctrl+I"
        )
        self.archivebox_action = self._action(
            "Import &ArchiveBox Folder…", self.choose_archivebox_folder
        )
        self.open_action = self._action("&Open Replay", self.open_current, "Return")
        self.open_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.table.addAction(self.open_action)
        self.tag_action = self._action("Add &Tags to Selection…", self.tag_selection, "Ctrl+T")
        self.close_tab_action = self._action("&Close Tab", self.close_current_tab, K.Close)
        self.jobs_action = self.jobs_dock.toggleViewAction()
        self.jobs_action.setShortcut(QKeySequence("Ctrl+J"))
        self.drives_action = self.drives_dock.toggleViewAction()
        self.drives_action.setShortcut(QKeySequence("Ctrl+Shift+D"))
        self.fullscreen_action = self._action(
            "Full Screen", self.toggle_fullscreen, _standard(K.FullScreen, "F11")
        )
        self.url_capture_action = self._action("Capture", self.capture_from_field)
        self.url_capture_action.setToolTip("Capture this address now")

        menu = self.menuBar()
        file_menu = menu.addMenu("&File")
        for a in (self.capture_action, self.import_bookmarks_action, self.save_search_action):
            file_menu.addAction(a)
        file_menu.addAction(self.import_archives_action)
        file_menu.addAction(self.archivebox_action)
        file_menu.addAction(self.export_action)
        file_menu.addSeparator()
        file_menu.addAction(self.close_tab_action)
        file_menu.addAction(self.settings_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = menu.addMenu("&Edit")
        edit_menu.addAction(self.paste_action)
        edit_menu.addAction(self.find_action)
        edit_menu.addAction(self.tag_action)
        view_menu = menu.addMenu("&View")
        for a in (
            self.refresh_action,
            self.filters_action,
            self.jobs_action,
            self.drives_action,
            self.fullscreen_action,
        ):
            view_menu.addAction(a)
        capture_menu = menu.addMenu("&Capture")
        capture_menu.addAction(self.capture_action)
        capture_menu.addAction(self.open_action)
        from archiver_app.gui.browse_window import BrowseLauncher

        self.browse = BrowseLauncher(self)  # Capture while browsing… (Ctrl+Shift+B)
        self.browse.add_to(capture_menu)

        bar = self.addToolBar("Main")
        bar.setObjectName("main_toolbar")
        bar.setMovable(False)
        bar.addAction(self.capture_action)
        bar.addWidget(self.url_field)
        bar.addAction(self.url_capture_action)
        bar.addSeparator()
        bar.addWidget(self.search)
        bar.addAction(self.filters_action)
        bar.addSeparator()
        bar.addAction(self.jobs_action)
        bar.addAction(self.drives_action)

    # ------------------------------------------------------------------ library view

    def reload_sidebar(self) -> None:
        saved = self.library.settings.get(SAVED_SEARCHES_KEY, []) or []
        self.sidebar.populate(self.library.collections.all(), self.library.tags.all(), list(saved))

    def apply_changes(self, changes: Changes) -> None:
        """Refresh what an edit changed: the sidebar for tags, collections and saved
        searches; the table when its rows depend on tags; the details shown."""
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
        if self.detail.wanted is not None and self.detail.wanted in changes.snapshot_ids:
            self.detail.show_snapshot(self.detail.wanted)

    def _entry_selected(self, entry: SidebarEntry) -> None:
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
            q = q.with_(search=str(saved.get("search", "")), filters=filters)
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

    def empty_table_text(self) -> str | None:
        """What the captures table says when it has no rows (None while they load)."""
        if self.model.loading:
            return None
        q = self.model.query
        if (
            q.view == View.ALL
            and q.collection_id is None
            and q.tag_id is None
            and not q.search.strip()
            and q.filters == Filters()
        ):
            return EMPTY_LIBRARY_TEXT
        return "No captures match this view or search."

    def _update_count(self) -> None:
        self.status.set_count(self.model.rowCount(), self.model.loading, self.model.partial)

    def _current_changed(self, current: Any, _previous: Any) -> None:
        self.detail.show_snapshot(
            self.model.snapshot_id(current.row()) if current.isValid() else None
        )

    def selected_ids(self) -> list[int]:
        ids = []
        for index in self.table.selectionModel().selectedRows():
            sid = self.model.snapshot_id(index.row())
            if sid is not None:
                ids.append(sid)
        return ids

    def refresh_all(self) -> None:
        self.model.refresh()
        self.reload_sidebar()
        self.status.refresh()
        self.jobs.refresh()
        self.drives.refresh()

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def toggle_filters(self) -> None:
        self.filter_bar.setVisible(self.filters_action.isChecked())

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
        saved.append(
            {
                "name": name,
                "search": self.model.query.search,
                "filters": self.model.query.filters.to_json(),
            }
        )
        self.apply_changes(self.library.settings.put(SAVED_SEARCHES_KEY, saved))

    def tag_selection(self) -> None:
        ids = self.selected_ids()
        if not ids:
            return
        text, ok = QInputDialog.getText(
            self, "Add Tags", f"Tags to add to {len(ids)} captures (comma separated):"
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

    # ------------------------------------------------------------------ capture

    def collections(self) -> list[tuple[str, str]]:
        return [(c.slug, c.name) for c in self.library.collections.all()]

    def open_capture_dialog(self, text: str = "", *, tab: int = 0) -> CaptureDialog:
        dialog = CaptureDialog(self.collections(), self, initial_text=text)
        dialog.tabs.setCurrentIndex(tab)
        dialog.accepted.connect(lambda: dialog.request and self.run_capture(dialog.request))
        dialog.open()
        return dialog

    def capture_from_field(self) -> None:
        text = self.url_field.text().strip()
        if not text:
            return
        from archiver_app.errors import InputError
        from archiver_app.gui.capture_input import build_request, parse_url_lines

        urls, rejected = parse_url_lines(text)
        try:
            request = build_request(urls, collection="default", rejected=rejected)
        except InputError as exc:
            show_error(self, exc, "starting the capture")
            return
        self.url_field.clear()
        self.run_capture(request)

    def paste_capture(self) -> None:
        clip = QApplication.clipboard().mimeData()
        if clip.hasUrls():
            text = "\n".join(u.toString() for u in clip.urls() if not u.isLocalFile())
        else:
            text = clip.text()
        if text.strip():
            self.open_capture_dialog(text.strip())

    def run_capture(self, request: CaptureRequest) -> BackgroundOp[Any] | None:
        """Queue ``request`` as a capture or crawl job and run it in a child process."""
        library = self.library
        label = f"capturing {len(request.urls)} page{'s' if len(request.urls) != 1 else ''}"

        def work(progress: Any, cancel: Any) -> Any:
            return run_capture_request(library, request, progress=progress, cancel=cancel)

        def progress(update: ProgressUpdate) -> None:
            total = f" of {update.total}" if update.total else ""
            self.statusBar().showMessage(f"Capturing {update.done}{total} {update.message}")

        return (
            BackgroundOp(self.runner, work, label=label)
            .with_progress(progress)
            .success(lambda result: self._capture_done(request, result))
            .failure(self._capture_failed)
            .run_in_background()
        )

    def resume_interrupted_jobs(self) -> BackgroundOp[Any]:
        """Jobs whose process died (the app was killed mid-import, mid-mirror ...): run
        again those that resume, in a child process; the others are marked failed with
        the reason, which the Jobs panel shows."""
        from archiver_app.jobs.background import ResumeReport, resume_interrupted

        library = self.library

        def done(report: ResumeReport) -> None:
            if report.runs or report.reported or report.imports_undone:
                self.statusBar().showMessage(
                    f"Interrupted jobs: {len(report.runs)} resumed, {report.reported} "
                    f"could not resume (see Jobs); {report.imports_undone} unfinished "
                    "import(s) undone.",
                    10000,
                )
                self.refresh_all()
            self.jobs_resumed.emit(report)

        return (
            BackgroundOp(
                self.runner,
                lambda p, c: resume_interrupted(library, progress=p, cancel=c),
                label="resuming interrupted jobs",
                blocks_quit=False,  # interrupted again, it resumes at the next start
            )
            .success(done)
            .failure(lambda f: show_error(self, f, "resuming interrupted jobs"))
            .run_in_background()
        )

    def _capture_done(self, request: CaptureRequest, result: InlineRun) -> None:
        """``result``: the job's run (pages done and failed; the job log says why)."""
        text = f"Captured {result.pages_done} page(s) (job #{result.job_id})"
        if result.pages_failed:
            text += f"; {result.pages_failed} failed: see Jobs for why"
        self.statusBar().showMessage(f"{text}.", 8000)
        self.tray.notify("Capture finished", f"{text}.")
        self.refresh_all()
        self.last_capture_result = result
        self.capture_finished.emit()

    def _capture_failed(self, failure: OpFailure) -> None:
        if failure.cancelled:
            self.statusBar().showMessage("Capture cancelled.", 5000)
            return
        show_error(self, failure, "capturing")

    def _job_finished(self, job_id: int, status: str) -> None:
        self.tray.notify("Job finished", f"Job #{job_id} is {status}.")
        self.model.refresh()

    # ------------------------------------------------------------------ drag and drop

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        mime = event.mimeData()
        if mime.hasUrls() or mime.hasText():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        mime = event.mimeData()
        local = [u.toLocalFile() for u in mime.urls() if u.isLocalFile()]
        web = [u.toString() for u in mime.urls() if not u.isLocalFile()]
        archives = [  # folders too: the importer takes the archives inside them
            f for f in local if f.lower().endswith(ARCHIVE_SUFFIXES) or os.path.isdir(f)
        ]
        if archives:
            self.import_archives(archives)
        elif local and local[0].lower().endswith(BOOKMARK_SUFFIXES):
            from pathlib import Path

            dialog = self.open_capture_dialog(tab=TAB_BOOKMARKS)
            dialog.load_bookmarks(Path(local[0]))
        elif web:
            self.open_capture_dialog("\n".join(web))
        elif mime.hasText():
            self.open_capture_dialog(mime.text())
        event.acceptProposedAction()

    # ------------------------------------------------------------------ importing archives

    def choose_archives(self) -> BackgroundOp[Any] | None:
        """File > Import Web Archives: pick WARC, ARC or WACZ files to copy in and index."""
        patterns = " ".join(f"*{s}" for s in ARCHIVE_SUFFIXES)
        paths, _ = QFileDialog.getOpenFileNames(
            self,
            "Import web archives",
            "",
            f"Web archives ({patterns});;All files (*)",
        )
        return self.import_archives(paths) if paths else None

    def import_archives(self, paths: list[str]) -> BackgroundOp[Any]:
        """Import WARC/ARC/WACZ files (dropped on the window or chosen) and replay the first
        imported page."""
        from pathlib import Path

        from archiver_app.jobs import JobKind
        from archiver_app.jobs.background import enqueue_and_run_in_child
        from archiver_app.jobs.operations import import_config

        library = self.library

        def work(progress: Any, cancel: Any) -> Any:
            return enqueue_and_run_in_child(
                library,
                JobKind.IMPORT,
                import_config([Path(p) for p in paths]),
                name=f"Import of {Path(paths[0]).name}"
                + (f" (+{len(paths) - 1})" if len(paths) > 1 else ""),
                progress=progress,
                cancel=cancel,
            )

        def progress(update: ProgressUpdate) -> None:
            self.statusBar().showMessage(f"Importing {update.message}")

        return (
            BackgroundOp(self.runner, work, label="import archives")
            .with_progress(progress)
            .success(self._import_done)
            .failure(lambda failure: show_error(self, failure, "importing"))
            .run_in_background()
        )

    def choose_archivebox_folder(self) -> BackgroundOp[Any] | None:
        folder = QFileDialog.getExistingDirectory(
            self, "Choose the ArchiveBox data folder (the one holding archive/)"
        )
        return self.import_archivebox(Path(folder)) if folder else None

    def import_archivebox(self, folder: Path) -> BackgroundOp[Any]:
        """Register an ArchiveBox data folder (O(1)); the idle migrator imports it."""
        from archiver_app.layout.archivebox import register_archivebox

        library = self.library

        def registered(_source: object) -> None:
            self.statusBar().showMessage(
                f"ArchiveBox folder {folder} added: its snapshots are imported in the "
                "background (Upgrading folders in the status bar).",
                15000,
            )
            self.migrator.poke()

        return (
            BackgroundOp(self.runner, lambda _p, _c: register_archivebox(library, folder), label="")
            .success(registered)
            .failure(lambda f: show_error(self, f, "adding the ArchiveBox folder"))
            .run_in_background()
        )

    def _background_progress(self, update: ProgressUpdate) -> None:
        """A scheduled scrub's progress in the status bar (migration shows its own)."""
        if self.migrator.job == "scrub":
            self.status.show_background(scrub_text(update))

    def _import_done(self, report: Any) -> None:
        self.refresh_all()
        pages = [sid for o in report.outcomes for sid in o.snapshot_ids]
        summary = f"Imported {report.records} records, {len(pages)} pages."
        notice = import_notice(report)
        if notice is not None:  # not modal to the app: the replay below opens meanwhile
            box = QMessageBox(
                QMessageBox.Icon.Warning if notice.failed else QMessageBox.Icon.Information,
                notice.title,
                f"{summary}\n\n{notice.text}",
                QMessageBox.StandardButton.Ok,
                self,
            )
            box.setObjectName("importNotice")
            if notice.details:
                box.setDetailedText(notice.details)
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()
        self.statusBar().showMessage(summary, 8000)
        self.last_import_report = report
        if pages:
            self.open_replay_id(pages[0])
        self.import_finished.emit()

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
        from archiver_app.gui.replay.widget import ReplayWidget  # QtWebEngine: on first use

        target = self.library.snapshots.replay_target(snapshot_id)
        if target is None:
            return None
        url, at, title = target.url, target.captured_at, target.title
        try:
            widget: QWidget = ReplayWidget(self.library, url, at)
        except Exception as exc:
            show_error(self, exc, "opening the replay")
            return None
        index = self.tabs.addTab(widget, title[:40])
        self.tabs.setTabToolTip(index, f"{title}\n{url}")
        self.tabs.setCurrentIndex(index)
        return widget

    def close_tab(self, index: int) -> None:
        if index > 0:
            widget = self.tabs.widget(index)
            self.tabs.removeTab(index)
            if widget is not None:
                widget.deleteLater()

    def close_current_tab(self) -> None:
        self.close_tab(self.tabs.currentIndex())

    def open_export(self) -> QDialog:
        """Export what is on screen: the current search, else the current collection."""
        from archiver_app.gui.export_dialog import ExportDialog

        coll = self.model.query.collection_id
        slug = self.library.collections.slug_of(coll) if coll is not None else None
        dialog = ExportDialog(
            self.library, self.runner, self, collection=slug, search=self.model.query.search
        )
        dialog.open()
        return dialog

    # ------------------------------------------------------------------ settings & state

    def open_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.library, self.runner, self.settings, self)
        dialog.accepted.connect(self.status.refresh)
        dialog.move_requested.connect(self.request_move)
        dialog.open()
        return dialog

    def save_state(self) -> None:
        s = self.settings
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        s.setValue("window/splitter", self.splitter.saveState())
        s.setValue("window/header", self.table.horizontalHeader().saveState())
        entry = self.sidebar.current_entry()
        if entry is not None:
            s.setValue("window/collection", entry.key)
        s.setValue("window/filters", self.filters_action.isChecked())
        s.sync()

    def restore_state(self) -> None:
        s = self.settings

        def blob(key: str) -> QByteArray | None:
            value = s.value(key)
            return value if isinstance(value, QByteArray) and not value.isEmpty() else None

        if (geometry := blob("window/geometry")) is not None:
            self.restoreGeometry(geometry)
        if (state := blob("window/state")) is not None:
            self.restoreState(state)
        if (split := blob("window/splitter")) is not None:
            self.splitter.restoreState(split)
        if (header := blob("window/header")) is not None:
            self.table.horizontalHeader().restoreState(header)
            self.table.horizontalHeader().setSectionHidden(COL_MATCH, True)
        if str(s.value("window/filters", False)).lower() == "true":
            self.filters_action.setChecked(True)
            self.filter_bar.show()
        key = str(s.value("window/collection", "view:all") or "view:all")
        if not self.sidebar.select_key(key, emit=True):
            self.sidebar.select_key("view:all", emit=True)
        if self.model.rowCount() == 0 and not self.model.loading:
            self.model.refresh()

    # ------------------------------------------------------------------ closing

    def _capture_from_tray(self) -> None:
        self.show_and_raise()
        self.open_capture_dialog()

    def show_and_raise(self) -> None:
        self.show()
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.raise_()
        self.activateWindow()

    def confirm_quit(self) -> bool:
        """Ask before quitting while work runs; True when it is fine to quit."""
        running = [op.label for op in self.runner.running() if op.blocks_quit]
        if not running:
            return True
        answer = QMessageBox.question(
            self,
            "Quit Archiver?",
            "Work is still running:\n  "
            + "\n  ".join(running[:5])
            + "\n\nQuit anyway? Unfinished captures resume next time.",
        )
        return answer == QMessageBox.StandardButton.Yes

    def request_move(self, dest: Path) -> None:
        """Close the window so the app can move the library to ``dest`` and reopen it."""
        if not self.confirm_quit():
            return
        self.pending_move = dest
        self._quitting = True
        self.close()

    def request_quit(self) -> None:
        if not self.confirm_quit():
            return
        self._quitting = True
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        if not self._quitting and self.tray.available:
            self.hide()  # work goes on; the tray icon brings the window back
            self.tray.notify("Archiver is still running", "Captures and copies continue here.")
            event.ignore()
            return
        if not self._quitting and not self.confirm_quit():
            event.ignore()
            return
        for t in (self.jobs.timer, self.drives.timer, self.status.timer):
            t.stop()
        self.tray.hide()
        self.migrator.stop()
        self.model.shutdown()
        self.runner.cancel_all()
        event.accept()
        self.closed.emit()
