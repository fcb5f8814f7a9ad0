"""The main window's actions, menus and toolbar.

Each action is an attribute of :class:`WindowActions` (``window.menus.capture`` ...), so a
test or another part of the window reaches it by name; the slots are the window's own
methods, so this module holds wiring only. A new feature adds its action here and, where
it has one, its menu entry, in a line or two.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMenu

from archiver_app.gui.capture_dialog import TAB_BOOKMARKS
from archiver_app.gui.login_dialog import open_login_dialog

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow

K = QKeySequence.StandardKey


def standard_key(key: QKeySequence.StandardKey, fallback: str) -> QKeySequence.StandardKey | str:
    """The platform's standard key, or ``fallback`` where it has none (Qt binds
    Preferences only on macOS, Quit not on Windows, Full Screen not on X11)."""
    return key if QKeySequence.keyBindings(key) else fallback


class WindowActions:
    """Builds the window's actions, then its menu bar and toolbar from them."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        w = window
        # a lambda: triggered(bool) would otherwise arrive as the dialog's initial text
        self.capture = self.action("&New Capture…", lambda: w.capture.open_dialog(""), K.New)
        self.capture_bookmarks = self.action(
            "Capture &Bookmarks File…", lambda: w.capture.open_dialog(tab=TAB_BOOKMARKS)
        )
        self.login = self.action(  # a browser profile for captures behind a login
            "&Log In to a Site…", lambda: open_login_dialog(w.library, w.runner, w)
        )
        self.paste = self.action("Capture from Clip&board", w.capture.paste, K.Paste)
        self.paste.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        w.table.addAction(self.paste)
        self.open_library = self.action("Open &Library…", w.choose_library)
        self.settings = self.action(
            "&Settings…", w.open_settings, standard_key(K.Preferences, "Ctrl+,")
        )
        self.settings.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.quit = self.action("&Quit", w.request_quit, standard_key(K.Quit, "Ctrl+Q"))
        self.quit.setMenuRole(QAction.MenuRole.QuitRole)
        self.find = self.action("&Find", w.focus_search, K.Find)
        self.refresh = self.action("&Refresh", w.refresh_all, K.Refresh)
        self.filters = self.action("Show &Filters", w.toggle_filters, "Ctrl+Shift+F")
        self.filters.setCheckable(True)
        self.save_search = self.action("Sa&ve Search…", w.save_search, K.Save)
        self.export = self.action("&Export…", w.open_export, "Ctrl+E")
        self.import_archives = self.action(
            "&Import Web Archives…", w.imports.choose_archives, "Ctrl+I"
        )
        self.archivebox = self.action("Import &ArchiveBox Folder…", w.imports.choose_archivebox)
        self.open = self.action("&Open Replay", w.open_current, "Return")
        self.open.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        w.table.addAction(self.open)
        self.tag = self.action("Add &Tags to Selection…", w.tag_selection, "Ctrl+T")
        self.close_tab = self.action("Close &Tab", w.tabs.close_current, K.Close)
        self.jobs = self.panel_action(w.jobs_dock, "&Jobs", "Ctrl+J")
        self.drives = self.panel_action(w.drives_dock, "&Drives", "Ctrl+Shift+D")
        self.fullscreen = self.action(
            "Full &Screen", w.toggle_fullscreen, standard_key(K.FullScreen, "F11")
        )
        self.url_capture = self.action("Capture", w.capture.from_field)
        self.url_capture.setToolTip("Capture this address now")
        self._build_menus()
        self._build_toolbar()

    def panel_action(self, dock: QDockWidget, text: str, shortcut: str) -> QAction:
        """A checkable action for a panel, checked while the panel is in front: it brings
        a panel that sits behind another one's tab to the front (Qt's toggle view action
        would close it: a tabbed panel counts as shown), and closes the panel in front."""
        action = QAction(text, self.window)
        action.setCheckable(True)
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        front = [False]

        def seen(visible: bool) -> None:
            front[0] = visible
            action.setChecked(visible)

        def triggered() -> None:
            if front[0]:
                dock.close()
            else:
                dock.show()
                dock.raise_()
            action.setChecked(front[0])  # until the panel says otherwise

        dock.visibilityChanged.connect(seen)
        action.triggered.connect(triggered)
        self.window.addAction(action)
        return action

    def action(
        self,
        text: str,
        slot: Callable[[], Any],
        shortcut: QKeySequence.StandardKey | str | None = None,
    ) -> QAction:
        """A window-wide action running ``slot``."""
        action = QAction(text, self.window)
        if isinstance(shortcut, QKeySequence.StandardKey):
            action.setShortcuts(shortcut)
        elif shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        self.window.addAction(action)
        return action

    def _build_menus(self) -> None:
        menu = self.window.menuBar()
        file_menu = menu.addMenu("&File")
        for a in (self.capture, self.capture_bookmarks, self.save_search):
            file_menu.addAction(a)
        for a in (self.import_archives, self.archivebox, self.export):
            file_menu.addAction(a)
        file_menu.addSeparator()
        file_menu.addAction(self.open_library)
        file_menu.addAction(self.close_tab)
        file_menu.addAction(self.settings)
        file_menu.addSeparator()
        file_menu.addAction(self.quit)
        edit_menu = menu.addMenu("&Edit")
        for a in (self.paste, self.find, self.tag):
            edit_menu.addAction(a)
        view_menu = menu.addMenu("&View")
        for a in (self.refresh, self.filters, self.jobs, self.drives):
            view_menu.addAction(a)
        self.view_panels_end = view_menu.addSeparator()  # panels above, Full Screen below
        view_menu.addAction(self.fullscreen)
        capture_menu = self.capture_menu = menu.addMenu("&Capture")
        capture_menu.addAction(self.capture)
        capture_menu.addAction(self.login)
        self.capture_menu_end = capture_menu.addSeparator()  # below: acts on captures made
        capture_menu.addAction(self.open)

    def _build_toolbar(self) -> None:
        w = self.window
        bar = w.addToolBar("Main")
        bar.setObjectName("main_toolbar")
        bar.setMovable(False)
        bar.addAction(self.capture)
        bar.addWidget(w.url_field)
        bar.addAction(self.url_capture)
        bar.addSeparator()
        bar.addWidget(w.search)
        bar.addAction(self.filters)
        bar.addSeparator()
        bar.addAction(self.jobs)
        bar.addAction(self.drives)


def add_after_export(window: MainWindow, action: QAction) -> None:
    """Put ``action`` in the File menu right after Export… (last when there is none)."""
    for item in window.menuBar().actions():
        menu = item.menu()
        if isinstance(menu, QMenu) and menu.title().replace("&", "") == "File":
            entries = menu.actions()
            export = window.menus.export
            at = entries.index(export) + 1 if export in entries else 0
            if 0 < at < len(entries):
                menu.insertAction(entries[at], action)
            else:
                menu.addAction(action)
