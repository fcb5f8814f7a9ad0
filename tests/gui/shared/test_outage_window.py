"""The window over a shared library whose PostgreSQL server stops for a while: its loops
that retry by themselves (the status read, the idle migrator's count, the watch
scheduler's look for due watches) say the outage in one line as it begins and in one line
as it ends, and the status bar says it while it lasts. Before, stderr got "could not count
the folders to migrate: …" every ten seconds and a traceback from the watch scheduler every
minute, for as long as it lasted, and the window said nothing once its first box was shut.

These tests stop and start a throwaway server of their own."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from archiver_app.gui import idle_migrator, snapshot_model
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import OpRunner
from archiver_app.gui.snapshot_model import COL_TITLE
from archiver_app.gui.status_bar import UNREACHABLE
from archiver_app.library import Library
from archiver_app.watch import runner as watch_runner
from tests.helpers.postgres import StoppableServer
from tests.helpers.snapshots import add_snapshot

LOOPS = ("idle_job", "anything_due")
SHOTS = os.environ.get("ARCHIVER_SHOTS")  # a folder: the window saved as PNG to look at


@pytest.fixture
def shared(tmp_path: Path, stoppable_server: StoppableServer) -> Iterator[Library]:
    url = stoppable_server.new_database("outage_window")
    lib = Library.open(tmp_path / "lib", create=True, database_url=url)
    try:
        yield lib
    finally:
        lib.close()


@pytest.fixture
def tries(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times each loop tried the database."""
    counts = dict.fromkeys(LOOPS, 0)

    def counted(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            counts[name] += 1
            return fn(*args)

        return call

    monkeypatch.setattr(idle_migrator, "idle_job", counted("idle_job", idle_migrator.idle_job))
    monkeypatch.setattr(
        watch_runner, "anything_due", counted("anything_due", watch_runner.anything_due)
    )
    return counts


@pytest.fixture
def window(qtbot: QtBot, shared: Library, gui_settings: QSettings) -> Iterator[MainWindow]:
    add_snapshot(shared, "https://harbour.example/tides")
    runner = OpRunner()
    window = MainWindow(shared, runner=runner, settings=gui_settings)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
    qtbot.waitUntil(lambda: window.jobs.recover, timeout=20_000)  # its start-up look is done
    # every few hundred milliseconds rather than every few seconds (or minute)
    window.status.timer.setInterval(200)
    window.watches.timer.setInterval(300)
    window.migrator.idle_ms = 100  # counts again 0.1 s after each read the window makes
    window.migrator.stop()  # (its first wait, of 10 s, began as the window opened)
    window.migrator.start()
    try:
        yield window
    finally:
        for timer in (window.jobs.timer, window.drives.timer, window.status.timer):
            timer.stop()
        window.migrator.stop()
        window.watches.stop()
        runner.shutdown(wait=True)


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What reached the log at WARNING or above (what the app's stderr shows)."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_an_outage_is_one_line_as_it_begins_and_one_as_it_ends(
    qtbot: QtBot,
    window: MainWindow,
    stoppable_server: StoppableServer,
    tries: dict[str, int],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    outages = window.library.outages
    qtbot.waitUntil(lambda: all(tries.values()), timeout=10_000)  # each loop runs
    stoppable_server.stop()
    try:
        qtbot.waitUntil(lambda: outages.current is not None, timeout=10_000)
        before = dict(tries)
        # each loop tries again a few times while the server is down
        qtbot.waitUntil(lambda: all(tries[n] >= before[n] + 3 for n in LOOPS), timeout=20_000)
    finally:
        stoppable_server.start()
    qtbot.waitUntil(lambda: outages.current is None, timeout=20_000)
    after = dict(tries)
    qtbot.waitUntil(lambda: all(tries[n] >= after[n] + 2 for n in LOOPS), timeout=20_000)
    lines = said(caplog)
    assert not [r for r in caplog.records if r.exc_info], lines
    assert len(lines) == 2, lines
    assert lines[0].startswith("the library's database is unreachable: "), lines
    assert lines[0].endswith("; trying again until it is back") and "\n" not in lines[0]
    assert lines[1].startswith("the library's database answers again (unreachable for "), lines


def test_the_window_says_the_database_is_unreachable_while_it_is(
    qtbot: QtBot, window: MainWindow, stoppable_server: StoppableServer
) -> None:
    notice = window.status.outage
    assert notice.isHidden()
    stoppable_server.stop()
    try:
        qtbot.waitUntil(notice.isVisible, timeout=10_000)
        assert notice.text() == UNREACHABLE
        assert "Since " in notice.toolTip() and "\n" in notice.toolTip()
        if SHOTS:
            window.grab().save(str(Path(SHOTS) / "outage-notice.png"))
        qtbot.wait(1000)  # the reads go on failing: it stays, unchanged
        assert notice.isVisible() and notice.text() == UNREACHABLE
        window.resize(700, 600)  # a narrow window: cut, and the counters keep their room
        counters = (window.status.count, window.status.copies, window.status.disk)
        bar = window.statusBar()

        def room(c: QWidget) -> bool:
            return c.width() >= c.sizeHint().width() and c.geometry().right() < bar.width()

        qtbot.waitUntil(lambda: bar.width() <= 700)
        qtbot.wait(100)  # (laid out again)
        assert all(room(c) for c in counters), [(c.geometry(), bar.width()) for c in counters]
        assert notice.text().startswith("The library's database is unreachable")
        assert notice.text().endswith("…") and UNREACHABLE in notice.toolTip()
    finally:
        stoppable_server.start()
    qtbot.waitUntil(notice.isHidden, timeout=20_000)
    assert window.statusBar().currentMessage() == "The library's database answers again."


def test_the_jobs_and_drives_panels_read_on_through_an_outage_without_a_box(
    qtbot: QtBot,
    window: MainWindow,
    stoppable_server: StoppableServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lib = window.library
    reads = {"jobs": 0, "drives": 0}
    rows, drives = lib.jobs.rows, lib.drives.list

    def jobs_read(*args: Any, **kwargs: Any) -> Any:
        reads["jobs"] += 1
        return rows(*args, **kwargs)

    def drives_read(*args: Any, **kwargs: Any) -> Any:
        reads["drives"] += 1
        return drives(*args, **kwargs)

    monkeypatch.setattr(lib.jobs, "rows", jobs_read)
    monkeypatch.setattr(lib.drives, "list", drives_read)
    window.jobs.timer.setInterval(200)
    window.drives.timer.setInterval(200)

    def boxes() -> list[str]:
        return [b.text() for b in window.findChildren(QMessageBox) if b.isVisible()]

    stoppable_server.stop()
    try:
        qtbot.waitUntil(window.status.outage.isVisible, timeout=10_000)
        before = dict(reads)
        qtbot.waitUntil(lambda: all(reads[n] >= before[n] + 3 for n in reads), timeout=10_000)
        assert boxes() == []  # the status bar says it, once, not a box a panel opened
    finally:
        stoppable_server.start()
    qtbot.waitUntil(window.status.outage.isHidden, timeout=20_000)
    after = dict(reads)
    qtbot.waitUntil(lambda: all(reads[n] >= after[n] + 2 for n in reads), timeout=10_000)
    assert boxes() == []
    assert window.drives.timer.isActive()


def test_the_table_scrolled_during_an_outage_shows_its_rows_when_it_ends(
    qtbot: QtBot,
    window: MainWindow,
    stoppable_server: StoppableServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Rows not read yet were read on the GUI thread as they were painted: each paint
    raised into Qt, a traceback on stderr a paint, for as long as the server was down."""
    monkeypatch.setattr(snapshot_model, "PAGE", 4)  # (pages of 4 rows, not 128)
    for i in range(40):
        add_snapshot(window.library, f"https://harbour.example/{i}", title=f"Tide {i}")
    model = window.model
    window.refresh_all()
    qtbot.waitUntil(lambda: not model.loading and model.rowCount() == 41, timeout=10_000)
    last = model.index(40, COL_TITLE)
    caplog.set_level(logging.WARNING)
    stoppable_server.stop()
    try:
        qtbot.waitUntil(window.status.outage.isVisible, timeout=10_000)
        window.table.scrollToBottom()  # rows not read yet: painted as "…", nothing raised
        qtbot.wait(500)
        assert model.data(last) == "…"
    finally:
        stoppable_server.start()
    qtbot.waitUntil(lambda: model.data(last) == "https://harbour.example/tides", timeout=20_000)
    assert not [r for r in caplog.records if r.exc_info]


def test_refreshing_during_an_outage_logs_no_traceback(
    qtbot: QtBot,
    window: MainWindow,
    stoppable_server: StoppableServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """F5 while the server is down: the Changes view's read printed its traceback each
    time (and a box says the database is unreachable, once)."""
    changes = window.research.show_changes()
    caplog.set_level(logging.WARNING)
    stoppable_server.stop()
    try:
        qtbot.waitUntil(window.status.outage.isVisible, timeout=10_000)
        for _ in range(3):
            with qtbot.waitSignal(window.runner.changed, timeout=5000):
                changes.refresh()
            qtbot.waitUntil(lambda: "changes" not in [o.label for o in window.runner.running()])
    finally:
        stoppable_server.start()
    qtbot.waitUntil(window.status.outage.isHidden, timeout=20_000)
    loud = [r.getMessage() for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert loud == []
