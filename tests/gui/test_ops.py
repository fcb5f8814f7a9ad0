"""The background-operation API: work off the GUI thread, callbacks on it."""

from __future__ import annotations

import threading

from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from archiver_app.errors import InputError
from archiver_app.gui.errors import describe
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner
from archiver_app.tasks import ProgressUpdate


def test_success_runs_work_off_thread_and_callback_on_gui_thread(
    qtbot: QtBot, op_runner: OpRunner
) -> None:
    gui = threading.get_ident()
    seen: dict[str, object] = {}

    def work(progress: object, cancel: object) -> int:
        seen["work_thread"] = threading.get_ident()
        return 41 + 1

    def done(value: int) -> None:
        seen["value"] = value
        seen["callback_thread"] = threading.get_ident()

    BackgroundOp(op_runner, work, label="answer").success(done).run_in_background()
    assert op_runner.busy()
    qtbot.waitUntil(lambda: "value" in seen)
    assert seen["value"] == 42
    assert seen["work_thread"] != gui
    assert seen["callback_thread"] == gui
    qtbot.waitUntil(lambda: not op_runner.running())


def test_failure_carries_readable_message_and_traceback_only_in_details(
    qtbot: QtBot, op_runner: OpRunner
) -> None:
    failures: list[OpFailure] = []

    def boom(_p: object, _c: object) -> None:
        raise KeyError("missing-thing")

    BackgroundOp(op_runner, boom, label="boom").failure(failures.append).run_in_background()
    qtbot.waitUntil(lambda: bool(failures))
    message, details = describe(failures[0].exception, "testing", failures[0].traceback_text)
    assert "Traceback" not in message and "KeyError" not in message
    assert "Something went wrong while testing" in message
    assert "KeyError" in details and "Traceback" in details

    message, details = describe(InputError("bad address", details="line 3"), "capturing")
    assert message == "Could not finish capturing: bad address"
    assert details == "line 3"


def test_progress_is_polled_and_cancel_reaches_the_work(qtbot: QtBot, op_runner: OpRunner) -> None:
    updates: list[ProgressUpdate] = []
    failures: list[OpFailure] = []
    started = threading.Event()

    def long_work(progress, cancel) -> None:  # type: ignore[no-untyped-def]
        for i in range(1_000_000):
            progress(ProgressUpdate(done=i, total=None, message="step"))
            started.set()
            if cancel.wait(0.005):
                cancel.raise_if_cancelled()

    op = (
        BackgroundOp(op_runner, long_work, label="long")
        .with_progress(updates.append)
        .failure(failures.append)
        .run_in_background()
    )
    qtbot.waitUntil(lambda: len(updates) >= 2, timeout=5000)
    assert updates[-1].done > 0
    op.cancel()
    qtbot.waitUntil(lambda: bool(failures), timeout=5000)
    assert failures[0].cancelled
    assert not op_runner.running()


def test_nothing_starts_once_the_runner_is_shut_down(qtbot: QtBot) -> None:
    runner = OpRunner()
    runner.shutdown()
    ran: list[int] = []
    op = BackgroundOp(runner, lambda _p, _c: ran.append(1)).success(ran.append)
    op.run_in_background()  # a late timer tick while the app closes: no error, no work
    qtbot.wait(100)
    assert ran == [] and op.cancel_token.cancelled and runner.running() == []


def test_a_result_that_arrives_after_shutdown_is_not_delivered(qtbot: QtBot) -> None:
    """The window a result was for is gone once its runner is shut down (the app opens
    another library, or moves this one): the callback must not touch its widgets."""
    runner = OpRunner()
    delivered: list[int] = []
    BackgroundOp(runner, lambda _p, _c: 7).success(delivered.append).run_in_background()
    runner.shutdown(wait=True)  # the work is done; its delivery waits in the event queue
    qtbot.wait(100)
    assert delivered == [] and runner.running() == []


def test_many_operations_finishing_at_once_all_report(qtbot: QtBot, op_runner: OpRunner) -> None:
    """Thousands of short operations, their workers finishing while the GUI thread handles
    the ones before, all through the runner's one signal: every success callback runs
    once, on the GUI thread, with its own result."""
    gui = threading.get_ident()
    done: list[int] = []
    threads: set[int] = set()

    def finished(value: int) -> None:
        done.append(value)
        threads.add(threading.get_ident())

    total = 3000
    for i in range(total):
        BackgroundOp(op_runner, lambda _p, _c, i=i: i, blocks_quit=False).success(
            finished
        ).run_in_background()
        if i % 5 == 0:
            qtbot.wait(0)  # the GUI thread handles finished ones while more finish
    qtbot.waitUntil(lambda: len(done) == total, timeout=30000)
    assert sorted(done) == list(range(total))
    assert threads == {gui}
    qtbot.waitUntil(lambda: not op_runner.running())


def test_a_locked_database_reads_as_a_busy_library_naming_the_lost_edit() -> None:
    import sqlite3

    try:
        try:
            raise sqlite3.OperationalError("database is locked")
        except sqlite3.OperationalError as orig:
            raise RuntimeError("(sqlite3.OperationalError) database is locked") from orig
    except RuntimeError as wrapped:  # as SQLAlchemy wraps the driver's error
        message, details = describe(wrapped, "saving the tags of #3 (news)")
    assert message.startswith("Could not finish saving the tags of #3 (news): the library is busy")
    assert "Something went wrong" not in message and "database is locked" in details


def test_a_lost_database_box_starts_its_sentence_with_a_capital(qtbot: QtBot) -> None:
    """The box for a shared library's database gone away began "the library's database
    is unreachable: …", the core's words made to follow the CLI's "archiver: " prefix."""
    import psycopg
    from sqlalchemy.exc import OperationalError

    from archiver_app.gui.errors import show_error

    lost = OperationalError("SELECT 1", {}, psycopg.OperationalError("connection refused"))
    message, _details = describe(lost, "reading the captures")
    assert message.startswith("the library's database is unreachable: ")  # (the core's)
    parent = QWidget()
    qtbot.addWidget(parent)
    box = show_error(parent, lost, "reading the captures")
    assert box.text().startswith("The library's database is unreachable: connection refused.")
    box.close()
