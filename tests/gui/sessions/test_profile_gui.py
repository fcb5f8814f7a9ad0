"""The GUI's side of browser profiles: the login dialog's checks, the capture dialog's
profile chooser, and the marks on captures made with a profile."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QIcon
from pytestqt.qtbot import QtBot

from archiver_app.gui.capture_dialog import CaptureDialog
from archiver_app.gui.login_dialog import LoginDialog
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import OpRunner
from archiver_app.gui.snapshot_model import COL_STATUS
from archiver_app.library import Library
from tests.helpers.snapshots import add_snapshot


def test_login_dialog_checks_before_opening_a_window(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    library.profiles.create("university")
    dialog = LoginDialog(library, op_runner)
    qtbot.addWidget(dialog)
    assert dialog.profile.currentText() == "university"  # an existing one to log in again
    dialog.profile.setCurrentText("../escape")
    dialog.url.setText("https://login.example.org/")
    assert dialog.start() is None
    assert "is not a profile name" in dialog.status.text()
    dialog.profile.setCurrentText("news")
    dialog.url.setText("file:///etc/passwd")
    assert dialog.start() is None and dialog.status.text()
    assert dialog.op is None and dialog.open_button.isEnabled()


def test_capture_dialog_offers_the_profiles(qtbot: QtBot) -> None:
    dialog = CaptureDialog([("default", "Default")], profiles=["news", "university"])
    qtbot.addWidget(dialog)
    dialog.urls.setPlainText("https://journal.example.org/article/7")
    assert dialog.build().profile is None  # a fresh browser unless chosen
    dialog.profile.setCurrentIndex(dialog.profile.findData("university"))
    assert dialog.build().profile == "university"


def test_captures_made_with_a_profile_are_marked(
    qtbot: QtBot, library: Library, op_runner: OpRunner, gui_settings: QSettings
) -> None:
    private = add_snapshot(library, "https://journal.example.org/article/7", title="Article")
    public = add_snapshot(library, "https://example.org/", title="Public")
    with library.write() as s:
        from archiver_app.store.models import Snapshot

        snap = s.get(Snapshot, private)
        assert snap is not None
        snap.profile = "university"
    window = MainWindow(library, runner=op_runner, settings=gui_settings)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: not window.model.loading)
    row, other = window.model.row_of(private), window.model.row_of(public)
    assert row is not None and other is not None
    cell = window.model.index(row, COL_STATUS)
    assert isinstance(window.model.data(cell, Qt.ItemDataRole.DecorationRole), QIcon)
    tip = window.model.data(cell, Qt.ItemDataRole.ToolTipRole)
    assert tip == "captured with profile university — may show private data"
    plain = window.model.index(other, COL_STATUS)
    assert window.model.data(plain, Qt.ItemDataRole.DecorationRole) is None
    with qtbot.waitSignal(window.detail.loaded, timeout=5000):
        window.table.selectRow(row)
    assert "captured with profile university — may show private data" in (
        window.detail.status.text()
    )
    assert window.login_action.text() == "&Log In to a Site…"
