"""The window over a shared library whose PostgreSQL server stops: every view's read fails
at once. One message says what happened (the database cannot be reached, nothing changed,
refresh when it is back), not a "Something went wrong" box for each view."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
from tests.helpers.snapshots import add_snapshot
from tests.unit.shared.test_lost_database import Server, _new_database, server  # noqa: F401


@pytest.fixture
def shared(tmp_path: Path, server: Server) -> Iterator[Library]:  # noqa: F811
    url = _new_database(server, "window")
    lib = Library.open(tmp_path / "lib", create=True, database_url=url)
    try:
        yield lib
    finally:
        lib.close()


def test_a_stopped_server_is_one_clear_message(
    qtbot: QtBot,
    shared: Library,
    server: Server,  # noqa: F811 - the fixture imported above
    gui_settings: object,
) -> None:
    add_snapshot(shared, "https://harbour.example/tides")
    runner = OpRunner()
    window = MainWindow(shared, runner=runner, settings=gui_settings)  # type: ignore[arg-type]
    qtbot.addWidget(window)
    for timer in (window.jobs.timer, window.drives.timer, window.status.timer):
        timer.stop()
    window.show()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)

    server.stop()

    def boxes() -> list[QMessageBox]:
        return [b for b in window.findChildren(QMessageBox) if b.isVisible()]

    try:
        window.refresh_all()  # the table, sidebar, status, jobs and drives all read
        qtbot.waitUntil(lambda: bool(boxes()), timeout=20_000)
        qtbot.wait(1500)  # the other views' reads fail meanwhile
        shown = boxes()
        assert len(shown) == 1, [b.text() for b in shown]
        text = shown[0].text()
        assert "database is unreachable" in text and "Nothing was changed" in text, text
        assert "Something went wrong" not in text
        shown[0].close()
    finally:
        server.start()
        window.migrator.stop()
        window.watches.stop()
        runner.shutdown(wait=True)
