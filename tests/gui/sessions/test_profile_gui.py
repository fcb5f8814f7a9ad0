"""The GUI's side of browser profiles: the login dialog's checks, the capture dialog's
profile chooser, and the marks on captures made with a profile."""

from __future__ import annotations

import gzip
import io
import zipfile
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QIcon
from pytestqt.qtbot import QtBot
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archiver_app.gui.capture_dialog import CaptureDialog
from archiver_app.gui.export_dialog import ExportDialog
from archiver_app.gui.login_dialog import LoginDialog
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import OpRunner
from archiver_app.gui.snapshot_model import COL_STATUS
from archiver_app.importers.warcs import import_warc_file
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
    assert window.menus.login.text() == "&Log In to a Site…"


def _warc_with_cookies(path: Path) -> Path:
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="1.1")
        http = StatusAndHeaders(
            "200 OK",
            [("Content-Type", "text/html"), ("Set-Cookie", "sid=s3cret; HttpOnly")],
            protocol="HTTP/1.1",
        )
        body = b"<title>Account</title><p>balance</p>"
        writer.write_record(
            writer.create_warc_record(
                "https://bank.example/account",
                "response",
                payload=io.BytesIO(body),
                http_headers=http,
                length=len(body),
            )
        )
    return path


@pytest.mark.parametrize("keep", [False, True])
def test_export_dialog_leaves_private_headers_out_unless_ticked(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path, keep: bool
) -> None:
    import_warc_file(library, _warc_with_cookies(tmp_path / "in.warc.gz"), collection="bank")
    dialog = ExportDialog(library, op_runner, collection="bank", folder=tmp_path)
    qtbot.addWidget(dialog)
    assert not dialog.keep_private.isChecked()  # left out unless asked
    dialog.keep_private.setChecked(keep)
    assert dialog.start() is not None
    qtbot.waitUntil(lambda: dialog.finished_export is not None, timeout=20000)
    result = dialog.finished_export
    assert result is not None
    with zipfile.ZipFile(result.path) as z:
        warc = z.read("archive/data.warc.gz")
    assert (b"s3cret" in gzip.decompress(warc)) is keep
