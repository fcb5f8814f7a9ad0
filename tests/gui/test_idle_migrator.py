"""The app migrates old folders and imports ArchiveBox folders while idle, and steps aside."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from archiver_app.gui.idle_migrator import IdleMigrator
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import BackgroundOp, OpRunner
from archiver_app.layout.migrator import pending_count
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.legacy import legacy_library


def test_migrates_while_idle_and_stops_for_the_users_work(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    legacy_library(library, 400)
    assert pending_count(library) == 400
    migrator = IdleMigrator(library, op_runner, idle_ms=50, recheck_ms=60_000)
    seen: list[Any] = []
    migrator.progressed.connect(seen.append)

    # The user's own work runs first: the migrator waits for it.
    release = threading.Event()
    user = BackgroundOp(
        op_runner, lambda _p, _c: release.wait(20), label="capture"
    ).run_in_background()
    migrator.start()
    qtbot.wait(300)
    assert not migrator.running and pending_count(library) == 400
    release.set()
    qtbot.waitUntil(lambda: not any(op.label == "capture" for op in op_runner.running()))
    del user

    # Idle now: it starts by itself; a new user operation stops it at a batch boundary.
    qtbot.waitUntil(lambda: migrator.running, timeout=5000)
    gate = threading.Event()
    BackgroundOp(op_runner, lambda _p, _c: gate.wait(20), label="mirror").run_in_background()
    qtbot.waitUntil(lambda: not migrator.running, timeout=20000)
    assert getattr(migrator.last_report, "cancelled", None) is True  # it stepped aside
    stopped_at = pending_count(library)
    gate.set()

    # ...and comes back when the app is idle again, until nothing is left.
    qtbot.waitUntil(lambda: library.imports.pending() == 0, timeout=60000)
    qtbot.waitUntil(lambda: not migrator.running, timeout=10000)
    assert seen  # progress reached the GUI thread
    assert stopped_at > 0  # it stopped before finishing (at a batch boundary, cursor saved)
    with library.session() as s:
        versions = {v for (v,) in s.query(Snapshot.fs_version).distinct()}
    assert versions == {"archiver-2"}
    migrator.stop()
    # Each pass was a migrate job: the Jobs panel and `archiver jobs` list them.
    passes = [r for r in library.jobs.rows() if r.kind == "migrate"]
    assert len(passes) >= 2 and passes[0].name == "Upgrading folders"
    assert {r.status for r in passes} == {"completed"}


def test_an_archivebox_folder_added_from_the_window_is_imported_in_the_background(
    qtbot: QtBot, main_window: MainWindow, archivebox_factory: Any
) -> None:
    folder, snaps = archivebox_factory("0.8", count=4, odd=False)
    main_window.migrator.idle_ms = 50
    main_window.imports.import_archivebox(Path(folder))
    lib = main_window.library

    def imported() -> bool:
        with lib.session() as s:
            urls = {u for (u,) in s.query(Snapshot.url)}
        return {sn.url for sn in snaps} <= urls

    qtbot.waitUntil(imported, timeout=30000)
    qtbot.waitUntil(lambda: lib.imports.pending() == 0, timeout=30000)
    qtbot.waitUntil(lambda: main_window.model.rowCount() >= len(snaps), timeout=10000)


def test_due_scrubs_run_once_the_app_has_been_idle_long_enough(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    """Nothing to migrate, copies never verified: after the longer idle delay the app
    verifies the laptop's copies and the drive's, repairing rot from the drive."""
    import time

    from archiver_app.mirror import add_destination, run_mirror, scrubs_due
    from archiver_app.mirror.scrub import THIS_COMPUTER
    from tests.helpers.mirror_data import make_snapshot

    snap = make_snapshot(library, [4000, 6000], seed=5)
    drive = tmp_path / "usb"
    drive.mkdir()
    add_destination(library, drive, "usb")
    assert run_mirror(library).ok
    rotten = library.abspath(snap.paths[0])
    good = rotten.read_bytes()
    rotten.write_bytes(bytes([good[0] ^ 0xFF]) + good[1:])
    assert scrubs_due(library) == [THIS_COMPUTER, "usb"]

    migrator = IdleMigrator(library, op_runner, idle_ms=50, recheck_ms=200, scrub_idle_ms=1500)
    started = time.monotonic()
    migrator.start()
    qtbot.waitUntil(lambda: migrator.running, timeout=15000)
    assert time.monotonic() - started >= 1.4  # not before the app was idle that long
    qtbot.waitUntil(lambda: not migrator.running, timeout=60000)
    migrator.stop()
    assert scrubs_due(library) == []
    assert rotten.read_bytes() == good  # repaired from the drive
    report = migrator.last_report
    assert isinstance(report, list)
    assert [(r.label, r.checked, r.repaired) for r in report] == [
        (THIS_COMPUTER, 2, 1),
        ("usb", 0, 0),  # its copies were verified as they were written, minutes ago
    ]
    (job,) = [r for r in library.jobs.rows() if r.kind == "verify"]  # the scrub was a job
    assert job.status == "completed" and job.config["scheduled"] is True


def test_the_status_bar_says_when_the_app_verifies_copies_by_itself(
    qtbot: QtBot, main_window: MainWindow
) -> None:
    from tests.helpers.mirror_data import make_snapshot

    for i in range(8):
        make_snapshot(main_window.library, [2_000_000], seed=i, name=f"v{i}")
    label = main_window.status.background
    seen: list[str] = []
    main_window.migrator.progressed.connect(lambda _u: seen.append(label.text()))
    main_window.migrator.idle_ms, main_window.migrator.scrub_idle_ms = 50, 200
    main_window.migrator._recheck.setInterval(200)
    with qtbot.waitSignal(main_window.migrator.finished, timeout=60000):
        main_window.migrator.poke()
    assert seen and seen[-1] == "Verifying copies: 8 of 8 files"
    assert not label.isVisible()  # gone once it has finished


def test_no_second_migration_while_one_is_queued_or_running(library: Library) -> None:
    """A migrate job resumed at start-up (or started by ``archiver migrate``) runs alone."""
    from archiver_app.api.jobs import JobKind
    from archiver_app.gui.idle_migrator import idle_job
    from archiver_app.jobs.operations import migrate_config

    legacy_library(library, 3)
    assert idle_job(library) == "migrate"
    job = library.jobs.enqueue(JobKind.MIGRATE, migrate_config(), name="Upgrading folders")
    assert idle_job(library) is None
    library.jobs.cancel(job)  # queued: aborted at once
    assert idle_job(library) == "migrate"
