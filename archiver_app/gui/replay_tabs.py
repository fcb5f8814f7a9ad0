"""The main window's tabs: the library first (never closed), then one tab per replay.

QtWebEngine is imported on the first replay opened, not at start-up.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTabWidget, QWidget

from archiver_app.api.changes import Changes
from archiver_app.gui.errors import show_error
from archiver_app.gui.fitting import as_typed
from archiver_app.library import Library

DELETED_PREFIX = "Deleted: "


class ReplayTabs(QTabWidget):
    """Tab 0 is ``library_view``; the others replay captures. Threading: GUI thread only.

    A replay's "capture it now?" (a page not archived) comes out as :attr:`captureRequested`;
    each tab's title follows the page it shows, and a tab whose capture was deleted says so
    (:meth:`apply_changes` tells the replays, in tabs and in comparisons, what changed).
    """

    # a URL the user asked to capture from a replay, and the capture it was linked from
    captureRequested = Signal(str, int)

    def __init__(self, library: Library, library_view: QWidget, parent: QWidget) -> None:
        super().__init__(parent)
        self.library = library
        self.setObjectName("tabs")
        self.setDocumentMode(True)
        self.setTabsClosable(True)
        self.addTab(library_view, "Library")
        self.tabBar().setTabButton(0, self.tabBar().ButtonPosition.RightSide, None)
        self.tabCloseRequested.connect(self.close_tab)

    def open_replay(self, snapshot_id: int) -> QWidget | None:
        """Replay ``snapshot_id`` in a new tab (None when it is gone or cannot replay)."""
        from archiver_app.gui.replay.widget import ReplayWidget  # QtWebEngine: on first use

        target = self.library.snapshots.replay_target(snapshot_id)
        if target is None:
            return None
        url, title = target.url, target.title
        try:
            widget = ReplayWidget(self.library, url, target.captured_at)
        except Exception as exc:
            show_error(self, exc, "opening the replay")
            return None
        index = self.addTab(widget, as_typed(title[:40]))
        self.setTabToolTip(index, f"{title}\n{url}")
        self.setCurrentIndex(index)
        widget.captureRequested.connect(self.captureRequested)
        widget.titleChanged.connect(lambda text, w=widget: self._retitle(w, text))
        widget.deletedChanged.connect(lambda gone, w=widget: self._mark_deleted(w, gone))
        return widget

    def apply_changes(self, changes: Changes) -> None:
        """Replays that show or list a capture ``changes`` names (none named: any may have
        changed, elsewhere) read their timelines again; one whose capture was deleted says
        so. Until a replay opens its module, and QtWebEngine with it, is not loaded: no
        replay is open then."""
        replay = sys.modules.get("archiver_app.gui.replay.widget")
        if replay is None or not changes.snapshots:
            return
        for view in self.findChildren(replay.ReplayWidget):
            if not changes.snapshot_ids or view.lists_any(changes.snapshot_ids):
                view.refresh_timeline()

    def _mark_deleted(self, widget: QWidget, gone: bool) -> None:
        """The tab of a deleted capture is named so, in red, until it shows another."""
        index = self.indexOf(widget)
        if index <= 0:
            return
        text = self.tabText(index).removeprefix(DELETED_PREFIX)
        self.setTabText(index, DELETED_PREFIX + text if gone else text)
        self.tabBar().setTabTextColor(index, QColor("#c53030") if gone else QColor())
        if gone:
            shown = text.replace("&&", "&")  # a tooltip has no access keys
            self.setTabToolTip(index, f"This capture was deleted from the library.\n{shown}")

    def _retitle(self, widget: QWidget, title: str) -> None:
        """A replay tab is named after the page it shows now (a link followed)."""
        index = self.indexOf(widget)
        if index > 0 and title.strip():
            self.setTabText(index, as_typed(title.strip()[:40]))
            self.setTabToolTip(index, title.strip())

    def close_tab(self, index: int) -> None:
        if index > 0:
            widget = self.widget(index)
            self.removeTab(index)
            if widget is not None:
                widget.deleteLater()

    def close_current(self) -> None:
        self.close_tab(self.currentIndex())
