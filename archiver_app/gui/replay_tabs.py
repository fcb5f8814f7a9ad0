"""The main window's tabs: the library first (never closed), then one tab per replay.

QtWebEngine is imported on the first replay opened, not at start-up.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTabWidget, QWidget

from archiver_app.gui.errors import show_error
from archiver_app.library import Library


class ReplayTabs(QTabWidget):
    """Tab 0 is ``library_view``; the others replay captures. Threading: GUI thread only.

    A replay's "capture it now?" (a page not archived) comes out as :attr:`captureRequested`;
    each tab's title follows the page it shows.
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
        index = self.addTab(widget, title[:40])
        self.setTabToolTip(index, f"{title}\n{url}")
        self.setCurrentIndex(index)
        widget.captureRequested.connect(self.captureRequested)
        widget.titleChanged.connect(lambda text, w=widget: self._retitle(w, text))
        return widget

    def _retitle(self, widget: QWidget, title: str) -> None:
        """A replay tab is named after the page it shows now (a link followed)."""
        index = self.indexOf(widget)
        if index > 0 and title.strip():
            self.setTabText(index, title.strip()[:40])
            self.setTabToolTip(index, title.strip())

    def close_tab(self, index: int) -> None:
        if index > 0:
            widget = self.widget(index)
            self.removeTab(index)
            if widget is not None:
                widget.deleteLater()

    def close_current(self) -> None:
        self.close_tab(self.currentIndex())
