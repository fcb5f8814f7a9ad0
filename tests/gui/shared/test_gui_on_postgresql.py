"""The main window over a library on PostgreSQL: the table, search as you type, the
detail pane, and the jobs panel's column of worker hosts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.scope import Scope
from archiver_app.gui.jobs_panel import JOB_HEADERS
from archiver_app.gui.main_window import MainWindow
from archiver_app.library import Library
from archiver_app.store.models import Worker
from tests.helpers.snapshots import add_snapshot


@pytest.fixture
def library(library_root: Path, postgres_url: str) -> Iterator[Library]:
    lib = Library.open(library_root, create=True, database_url=postgres_url)
    try:
        yield lib
    finally:
        lib.close()


def test_the_window_reads_and_searches_a_library_on_postgresql(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    assert library.engine.dialect.name == "postgresql"
    window = main_window
    add_snapshot(library, "https://r.example/", title="River flood", body="levee")
    add_snapshot(library, "https://c.example/", title="City hall", body="council")
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)
    window.search.setFocus()
    qtbot.keyClicks(window.search, "lev")
    qtbot.waitUntil(lambda: window.model.query.search == "lev" and not window.model.loading)
    assert window.model.rowCount() == 1
    with qtbot.waitSignal(window.detail.loaded):
        window.table.selectRow(0)


def test_the_jobs_panel_shows_the_hosts_of_its_workers(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    job = create_job(library, ["http://h.test/"], scope=Scope.PAGE)
    now = library.clock()
    with library.write() as s:
        for i, host in enumerate(["lab-1", "lab-2", "lab-2"]):
            s.add(
                Worker(id=f"{host}:{i}", pid=i, host=host, version="t", started_at=now,
                       heartbeat_at=now + timedelta(seconds=1), state="working",
                       current_job_id=job)
            )  # fmt: skip
    panel = main_window.jobs
    column = JOB_HEADERS.index("Workers on")

    def shown() -> str:
        model = panel.model
        rows = [r for r in range(model.rowCount()) if model.rows[r].id == job]
        return str(model.data(model.index(rows[0], column))) if rows else ""

    panel.refresh()
    qtbot.waitUntil(lambda: shown() == "lab-1, lab-2 ×2", timeout=10_000)
