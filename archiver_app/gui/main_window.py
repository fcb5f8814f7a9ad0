"""The main window. A first shell: the library's newest captures in a table."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow, QTableWidget, QTableWidgetItem

from archiver_app.library import Library


class MainWindow(QMainWindow):
    """Shows the library; owns no background work yet."""

    def __init__(self, library: Library) -> None:
        super().__init__()
        self.library = library
        self.setWindowTitle(f"Archiver — {library.root}")
        self.resize(1100, 700)
        self.table = QTableWidget(0, 3, self)
        self.table.setHorizontalHeaderLabels(["Captured", "Title", "URL"])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.setCentralWidget(self.table)
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        self.menuBar().addMenu("&File").addAction(quit_action)
        self.status = QLabel(self)
        self.statusBar().addPermanentWidget(self.status)
        self.reload()

    def reload(self) -> None:
        rows = self.library.recent_snapshots(limit=100)
        self.table.setRowCount(len(rows))
        for i, snap in enumerate(rows):
            self.table.setItem(i, 0, QTableWidgetItem(f"{snap.captured_at:%Y-%m-%d %H:%M}"))
            self.table.setItem(i, 1, QTableWidgetItem(snap.title or ""))
            self.table.setItem(i, 2, QTableWidgetItem(snap.url))
        self.status.setText(f"{self.library.info().snapshots} captures")
