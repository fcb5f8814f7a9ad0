"""Jobs panel, drives panel, settings dialog, first-run screen, tray and quitting."""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QDialog, QInputDialog, QMessageBox
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from archiver_app.api.status import status_figures
from archiver_app.crawl.rules import Rules
from archiver_app.gui.drives_panel import DrivesPanel, laptop_summary
from archiver_app.gui.first_run import LIBRARY_KEY, FirstRunDialog, needs_first_run
from archiver_app.gui.jobs_panel import JobsPanel, format_eta
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.ops import CAPTURE_ON_QUIT, IMPORT_ON_QUIT, BackgroundOp, OpRunner
from archiver_app.gui.settings_dialog import APPEARANCE_KEY, BROWSER_KEY, SettingsDialog
from archiver_app.library import Library
from archiver_app.mirror.destinations import Marker, library_folder, write_marker
from archiver_app.mirror.status import SCRUB_KEY, LaptopStatus
from archiver_app.paths import resolve_library_root
from archiver_app.store.models import (
    Copy,
    Destination,
    File,
    Job,
    JobLog,
    Page,
    Ruleset,
    Snapshot,
)
from tests.helpers.snapshots import add_snapshot

BLUE, RED = "6a1b7c1e-0000-4000-8000-00000000b1e0", "6a1b7c1e-0000-4000-8000-0000000000ed"


def test_jobs_panel_counters_progress_log_tail_and_finish(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    empty = JobsPanel(library, op_runner)  # no job yet: no bar at 0%
    qtbot.addWidget(empty)
    qtbot.waitUntil(lambda: empty.summary.text() == "No jobs yet.")
    assert empty.progress.isHidden()
    coll = library.ensure_collection()
    now = library.clock()
    with library.write() as s:
        job = Job(
            collection_id=coll,
            name="docs crawl",
            status="running",
            items_queued=40,
            items_downloaded=10,
            error_count=5,  # failed attempts: two pages failed, one of them after 4 tries
            bytes_downloaded=5_000_000,
            r2xx=9,
            r4xx=1,
            started_at=now - timedelta(seconds=100),
            config={"seeds": ["https://docs.example/"]},
        )
        s.add(job)
        s.flush()
        job_id = job.id
        # a crawl's rules live in its versioned rules, not in its config
        rules = Rules(ignore=("/tag/",), concurrency=4).to_json()
        s.add(Ruleset(job_id=job_id, version=1, rules=rules, created_at=now))
        s.add(JobLog(job_id=job_id, message="started"))
        for n in (1, 2):  # the Failed column counts pages, not attempts
            s.add(Page(job_id=job_id, url=f"https://docs.example/{n}", state="failed"))
        # Total and Done count pages as the coverage report does: 40 intended, 10 captured
        for n in range(3, 41):
            state = "done" if n <= 12 else "ready"
            s.add(Page(job_id=job_id, url=f"https://docs.example/{n}", state=state))
        s.add(Page(job_id=job_id, url="https://docs.example/x", state="skipped"))  # excluded
    panel = JobsPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1)
    index = panel.model.index
    assert panel.model.data(index(0, 0), 0) == "#1 docs crawl"
    assert panel.model.data(index(0, 1), 0) == "crawl"
    assert [panel.model.data(index(0, c), 0) for c in (3, 4, 5, 7, 9)] == [
        "40",
        "10",
        "2",
        "9",
        "1",
    ]
    assert panel.model.data(index(0, 11), 0).startswith("4m 4")  # 28 left at 10 per 100 s
    panel.table.selectRow(0)
    qtbot.waitUntil(lambda: "started" in panel.log.toPlainText())
    assert panel.progress.value() == 12 and panel.progress.maximum() == 40
    assert not panel.progress.isHidden()
    qtbot.waitUntil(lambda: panel.ignore_edit.toPlainText() == "/tag/", timeout=5000)
    assert panel.concurrency_edit.value() == 4
    assert panel.rules_box.isVisible()  # a crawl's rules can change while it runs
    assert panel.pause_button.isEnabled() and not panel.resume_button.isEnabled()
    panel.pause_button.click()  # the crawl engine's job control, through a BackgroundOp
    qtbot.waitUntil(panel.resume_button.isEnabled, timeout=5000)
    with library.session() as s:
        assert s.get(Job, job_id).status == "paused"  # type: ignore[union-attr]
    panel.refresh()
    qtbot.waitUntil(lambda: "— paused" in panel.summary.text(), timeout=5000)
    assert "left" not in panel.summary.text()  # nothing runs it: no time left to show
    assert panel.model.data(index(0, 11), 0) == ""
    library.jobs.resume(job_id)  # (the button also runs it: see the test below)
    # queued for a worker, not running with nothing running it: Run runs it here
    qtbot.waitUntil(lambda: panel.resume_button.text() == "Run", timeout=5000)
    assert panel.resume_button.isEnabled() and not panel.pause_button.isEnabled()
    assert "left" not in panel.summary.text()  # no estimate while nothing runs it
    with library.write() as s:
        s.add(JobLog(job_id=job_id, level="warning", message="https://docs.example/x 404"))
    # a crawl's "completed" is followed at once by its indexing check: told once, as that ends
    told: list[tuple[int, str]] = []
    panel.job_finished.connect(lambda job, status: told.append((job, status)))
    for status in ("completed", "indexing", "indexed"):
        with library.write() as s:
            s.get(Job, job_id).status = status  # type: ignore[union-attr]
        panel.refresh()
        qtbot.waitUntil(lambda s=status: panel.model.data(index(0, 2), 0) == s, timeout=5000)
    assert told == [(job_id, "indexed")]
    qtbot.waitUntil(lambda: "404" in panel.log.toPlainText())
    assert panel.log.toPlainText().count("started") == 1  # the tail appends, never repeats
    assert format_eta(3725) == "1h 02m"
    panel.timer.stop()


def test_jobs_panel_shows_an_operation_with_its_progress_and_cancels_it(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    from archiver_app.jobs import JobKind, enqueue
    from archiver_app.jobs.operations import default_registry
    from archiver_app.jobs.runtime import claim

    job_id = enqueue(library, JobKind.MIRROR, {}, name="Mirror to drives")
    claim(library, job_id, "child:1:x", default_registry())
    with library.write() as s:
        job = s.get(Job, job_id)
        assert job is not None
        job.progress_done, job.progress_total, job.progress_message = 3, 12, "copying a.warc"
        job.started_at = library.clock() - timedelta(seconds=30)
    panel = JobsPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1)
    index = panel.model.index
    assert [panel.model.data(index(0, c), 0) for c in range(6)] == [
        f"#{job_id} Mirror to drives",
        "mirror",
        "running",
        "12",
        "3",
        "",
    ]
    assert panel.model.data(index(0, 11), 0) == "1m 30s"  # 9 left at 3 per 30 s
    panel.table.selectRow(0)
    qtbot.waitUntil(lambda: "job queued" in panel.log.toPlainText())
    assert "3 of 12: copying a.warc" in panel.summary.text()
    assert (panel.progress.value(), panel.progress.maximum()) == (3, 12)
    assert panel.abort_button.text() == "Cancel" and panel.abort_button.isEnabled()
    assert not panel.pause_button.isEnabled() and not panel.apply_button.isEnabled()
    assert not panel.rules_box.isVisible()  # a mirror has no ignore patterns or concurrency
    panel.abort_button.click()  # asks through the row; the running process sees it
    qtbot.waitUntil(lambda: not panel.abort_button.isEnabled(), timeout=5000)
    with library.session() as s:
        assert s.get(Job, job_id).status == "cancelling"  # type: ignore[union-attr]
    panel.timer.stop()


def test_drives_panel_states_counts_and_plug_event(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    sid = add_snapshot(library, "https://a.example/", title="A")
    drive = tmp_path / "drive"
    drive.mkdir()
    with library.write() as s:
        blue = Destination(uuid=BLUE, label="Blue", last_mount_path=str(drive))
        red = Destination(uuid=RED, label="Red", last_mount_path=str(tmp_path / "gone"))
        s.add_all([blue, red])
        s.flush()
        files = s.query(File).filter_by(snapshot_id=sid).all()
        s.add(Copy(file_id=files[0].id, destination_id=blue.id, state="present"))
        s.add(Copy(file_id=files[1].id, destination_id=blue.id, state="corrupted"))
    panel = DrivesPanel(library, op_runner)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2)
    rows = {r.label: r for r in panel.model.rows}
    assert not rows["Blue"].mounted  # no marker file yet
    assert (rows["Blue"].present, rows["Blue"].corrupted, rows["Blue"].missing) == (1, 1, 0)
    assert rows["Red"].missing == 2
    assert panel.model.data(panel.model.index(1, 1), 0) == "not plugged in"
    panel.auto_mirror = False  # (the next test plugs a real destination and mirrors)
    write_marker(drive, Marker(BLUE, "Blue", "2026-01-01T00:00:00"))
    with qtbot.waitSignal(panel.drive_plugged, timeout=5000) as plugged:
        panel.refresh()
    assert plugged.args == ["Blue"]
    # the marker alone: this library's folder is not on the drive (moved aside?)
    assert panel.model.data(panel.model.index(0, 1), 0) == "plugged in, library folder missing"
    assert panel.model.data(panel.model.index(0, 3), 0) == "1 (cannot be read)"
    library_folder(drive, library.id).mkdir(parents=True)  # as `archiver drives add` makes it
    panel.refresh()
    qtbot.waitUntil(
        lambda: panel.model.data(panel.model.index(0, 1), 0) == "plugged in, safe to unplug"
    )
    assert "free" not in panel.model.data(panel.model.index(0, 2), 0)
    assert panel.model.data(panel.model.index(0, 2), 0)  # a figure from the mounted folder
    assert panel.mirror_button.isEnabled() == (panel.mirror_button.toolTip() == "")
    panel.table.selectRow(0)  # Export Collection… writes to the selected, plugged-in drive
    dialog = panel.open_export()
    assert dialog.dest.text().startswith(str(drive / "")) and dialog.isVisible()  # type: ignore[attr-defined]
    dialog.reject()
    panel.timer.stop()


def test_a_known_drive_plugged_in_somewhere_new_is_found_and_mirrored_to(
    qtbot: QtBot,
    library: Library,
    op_runner: OpRunner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from archiver_app.mirror import add_destination

    for i in range(3):
        add_snapshot(library, f"https://a.example/{i}", title=f"A{i}")
    with library.session() as s:
        n_files = s.query(File).count()
    mounts = tmp_path / "media"
    (mounts / "usb").mkdir(parents=True)
    add_destination(library, mounts / "usb", "Blue")
    (mounts / "usb").rename(tmp_path / "unplugged")  # the drive goes away
    panel = DrivesPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.scan_roots = [mounts]
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1)
    assert not panel.model.rows[0].mounted and panel.model.rows[0].present == 0
    (tmp_path / "unplugged").rename(mounts / "usb2")  # back, at another mount point
    panel._refreshes = 0  # the next refresh scans the mount points
    with qtbot.waitSignal(panel.drive_plugged, timeout=5000) as plugged:
        panel.refresh()
    assert plugged.args == ["Blue"]
    assert panel.model.rows[0].mount_path == mounts / "usb2"
    assert panel._mirror_op is not None  # a mirror started by itself

    def mirrored() -> bool:
        panel.refresh()
        return bool(panel.model.rows) and panel.model.rows[0].present == n_files

    qtbot.waitUntil(mirrored, timeout=30000)
    qtbot.waitUntil(lambda: panel._mirror_op is None, timeout=10000)
    assert panel.model.rows[0].missing == 0
    # a whole mirror (the policy picks the drives): named for what started it, not as if
    # it copied to that drive only
    assert panel.verdict.text().startswith("Mirroring (Blue plugged in): ")
    assert [j.name for j in library.jobs.rows() if j.kind == "mirror"] == [
        "Mirroring (Blue plugged in)"
    ]
    tip = panel.model.headerData(4, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "Not lost" in tip  # "Not here" says what it counts, over its header
    assert panel.summary.text() == (
        f"This computer: {n_files} files, last verified never (due: verified when the app is "
        "idle). 1 drive, 1 plugged in."
    )

    # Verify re-reads every copy in reach: this computer's, then the plugged-in drive's
    with library.session() as s:
        rotten = library.abspath(s.scalars(select(File.path).order_by(File.id)).first() or "")
    good = rotten.read_bytes()
    rotten.write_bytes(good[:-1] + bytes([good[-1] ^ 0xFF]))
    with qtbot.waitSignal(
        panel.message, timeout=60000, check_params_cb=lambda m: "Finished" in m
    ) as said:
        panel.verify_button.click()
    assert rotten.read_bytes() == good  # repaired from the drive
    # the verdict itself, not only "finished"
    assert "1 corrupted; 1 repaired from a good copy" in said.args[0], said.args
    panel.refresh()
    today = f"{library.clock():%Y-%m-%d}"
    qtbot.waitUntil(lambda: f"files, last verified {today}." in panel.summary.text())
    with library.session() as s:
        blue = s.scalars(select(Destination)).one()
        assert blue.last_scrub_at is not None  # the drive was verified too

    # Free Laptop Space says why nothing was freed: one drive, and the policy asks for two
    monkeypatch.setattr(QInputDialog, "getInt", lambda *_a: (0, True))
    with qtbot.waitSignal(
        panel.message, timeout=60000, check_params_cb=lambda m: "Finished" in m
    ) as said:
        panel.offload_button.click()
    assert "freed 0 B: 0 snapshots" in said.args[0]
    assert "3 older snapshots kept: their policy asks for more copies" in said.args[0]
    assert not panel.verdict.isHidden()  # whole in the panel: the status bar cuts it
    assert panel.verdict.text().splitlines()[1:] == [
        "3 older snapshots kept: their policy asks for more copies than the drives it allows"
        " can hold (add a drive, or lower its copies)"
    ]
    panel.timer.stop()


def test_settings_dialog_writes_library_and_computer_settings(
    qtbot: QtBot,
    library: Library,
    op_runner: OpRunner,
    gui_settings: QSettings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from archiver_app.capture.browser import BROWSER_ENV, find_browser
    from archiver_app.mirror.policy import library_policy, set_policy

    monkeypatch.setenv(BROWSER_ENV, "")  # put back as it was, whatever the dialog sets
    monkeypatch.delenv(BROWSER_ENV)
    chosen = tmp_path / "my-chrome"  # not the browser this machine would find by itself
    chosen.write_text("#!/bin/sh\n")

    set_policy(library, max_age_seconds=7200)  # a field the dialog does not show
    dialog = SettingsDialog(library, op_runner, gui_settings)
    qtbot.addWidget(dialog)
    assert dialog.copies.value() == 2 and dialog.scrub_days.value() == 30
    assert dialog.move_button.isEnabled() and "verified" in dialog.move_button.toolTip()
    dialog.copies.setValue(3)
    dialog.scrub_days.setValue(14)
    dialog.browser_path.setText(str(chosen))
    dialog.appearance.setCurrentIndex(dialog.appearance.findData("dark"))
    dialog.accept()
    policy = library_policy(library)
    assert policy.copies == 3
    assert policy.max_age_seconds == 7200  # kept, not overwritten
    assert library.settings.get(SCRUB_KEY) == {"interval_days": 14}
    assert gui_settings.value(BROWSER_KEY) == str(chosen)
    found = find_browser()  # what captures use from now on, in this process and its children
    assert found is not None and found.path == chosen
    assert gui_settings.value(APPEARANCE_KEY) == "dark"
    again = SettingsDialog(library, op_runner, gui_settings)
    qtbot.addWidget(again)
    assert again.copies.value() == 3 and again.appearance.currentData() == "dark"
    again.browser_path.clear()  # back to finding one
    again.accept()
    assert BROWSER_ENV not in os.environ
    from archiver_app.gui.settings_dialog import apply_appearance

    apply_appearance("system")


def test_settings_find_names_the_browser_and_offers_an_installed_headless_shell(
    qtbot: QtBot,
    library: Library,
    op_runner: OpRunner,
    gui_settings: QSettings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from archiver_app.capture import browser

    full = tmp_path / "system" / "chromium"
    shell = tmp_path / "lib" / "chromium-headless-shell"
    for exe in (full, shell):
        exe.parent.mkdir(parents=True)
        exe.write_text("#!/bin/sh\necho Chromium 156.0.1\n")
        exe.chmod(0o755)
    monkeypatch.delenv(browser.BROWSER_ENV, raising=False)
    monkeypatch.setattr(browser, "playwright_chromium", lambda: None)
    monkeypatch.setattr(browser, "system_candidates", lambda: [("Chromium", full)])
    monkeypatch.setattr(browser.shutil, "which", lambda _name: None)
    monkeypatch.setattr(browser, "DEBIAN_SHELL", str(shell))
    dialog = SettingsDialog(library, op_runner, gui_settings)
    qtbot.addWidget(dialog)

    dialog.find_button.click()
    qtbot.waitUntil(dialog.find_button.isEnabled, timeout=10_000)
    assert dialog.browser_status.text() == "Found Chromium 156.0.1"
    assert dialog.browser_path.text() == str(full)
    assert not dialog.shell_offer.isHidden() and dialog.shell_label.toolTip() == str(shell)
    assert "two thirds of the time" in dialog.shell_label.text()
    dialog.use_shell.click()
    assert dialog.browser_path.text() == str(shell) and dialog.shell_offer.isHidden()
    assert "pages can tell it from a person's browser" in dialog.browser_status.text()

    monkeypatch.setenv(browser.BROWSER_ENV, str(shell))  # chosen: said what it means
    dialog.find_button.click()
    qtbot.waitUntil(dialog.find_button.isEnabled, timeout=10_000)
    status = dialog.browser_status.text()
    assert status.startswith("Found Chromium's headless shell 156.0.1: faster crawls")
    assert "windows open another browser" in status and dialog.shell_offer.isHidden()


def test_first_run_chooses_library_and_is_shown_once(
    qtbot: QtBot,
    op_runner: OpRunner,
    gui_settings: QSettings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("ARCHIVER_LIBRARY", raising=False)
    assert needs_first_run(gui_settings)
    dialog = FirstRunDialog(tmp_path / "default", op_runner, gui_settings)
    qtbot.addWidget(dialog)
    assert "browser" in dialog.browser.text()  # looking for one in the background
    dialog.location.setText(str(tmp_path / "mine"))
    dialog.accept()
    assert dialog.library_root == tmp_path / "mine"
    assert gui_settings.value(LIBRARY_KEY) == str(tmp_path / "mine")
    assert resolve_library_root() == tmp_path / "mine"  # the command line opens it too
    assert not needs_first_run(gui_settings)


def test_the_first_run_screen_says_what_start_does_and_refuses_a_folder_of_other_files(
    qtbot: QtBot, op_runner: OpRunner, gui_settings: QSettings, tmp_path: Path
) -> None:
    papers, existing = tmp_path / "papers", tmp_path / "existing"
    papers.mkdir()
    (papers / "thesis.pdf").write_bytes(b"%PDF-1.4")
    Library.open(existing, create=True).close()
    dialog = FirstRunDialog(tmp_path / "default", op_runner, gui_settings)
    qtbot.addWidget(dialog)
    assert dialog.verdict.text() == "Start creates a new library in this folder."
    dialog.location.setText(str(existing))
    assert dialog.verdict.text() == "A library is already in this folder: Start opens it."
    dialog.location.setText(str(papers))
    assert "is not empty and is not an Archiver library" in dialog.verdict.text()
    assert not dialog.start.isEnabled()
    dialog.accept()  # Return in the folder field: refused, and nothing remembered
    assert dialog.result() != QDialog.DialogCode.Accepted and needs_first_run(gui_settings)
    assert gui_settings.value(LIBRARY_KEY) is None


def test_quit_asks_while_work_runs_and_close_hides_to_tray(
    qtbot: QtBot, main_window: MainWindow, monkeypatch: object
) -> None:
    import threading

    release = threading.Event()
    BackgroundOp(
        main_window.runner,
        lambda _p, _c: release.wait(10),
        label="capturing 3 pages",
        on_quit=CAPTURE_ON_QUIT,
    ).run_in_background()
    BackgroundOp(
        main_window.runner,
        lambda _p, _c: release.wait(10),
        label="import archives",
        on_quit=IMPORT_ON_QUIT,
    ).run_in_background()
    asked: list[str] = []

    def answer(_parent: object, _title: str, text: str, *a: object) -> QMessageBox.StandardButton:
        asked.append(text)
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "question", answer)  # type: ignore[attr-defined]
    main_window.tray.available = False
    main_window.request_quit()
    # each kind of work says what quitting does to it: an import is undone, not resumed
    assert asked and f"capturing 3 pages: {CAPTURE_ON_QUIT}" in asked[0]
    assert f"import archives: {IMPORT_ON_QUIT}" in asked[0] and "undone" in IMPORT_ON_QUIT
    assert main_window.isVisible()  # the user said no
    main_window.tray.available = True  # with a tray, closing only hides the window
    main_window.close()
    assert not main_window.isVisible()
    assert main_window.tray.notifications[-1][0] == "Archiver is still running"
    release.set()
    qtbot.waitUntil(lambda: not main_window.runner.busy())
    main_window.tray.available = False
    main_window.request_quit()  # nothing running: no question
    assert len(asked) == 1


def _worker_running_a_job(library: Library, beat: datetime) -> int:
    """A crawl worker "w1" whose last heartbeat was at ``beat``, running a new job: its id."""
    from archiver_app.store.models import Worker

    with library.write() as s:
        job = Job(collection_id=library.ensure_collection(), name="crawl", status="running")
        s.add(job)
        s.flush()
        s.add(
            Worker(
                id="w1",
                pid=1,
                host="h",
                version="v",
                state="working",
                current_job_id=job.id,
                heartbeat_at=beat,
            )
        )
        return job.id


def test_a_status_refresh_asked_while_one_reads_is_not_lost(
    qtbot: QtBot, library: Library, main_window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change lands while the status bar reads older figures: it reads once more after."""
    import threading

    from archiver_app.gui import status_bar

    status = main_window.status
    status.timer.stop()  # only the refreshes asked for here
    qtbot.waitUntil(lambda: not status._reads.busy)
    held = threading.Event()
    reads: list[str] = []

    def read_then_wait(lib: Library, now: object) -> object:
        figures = status_figures(lib, lib.clock())
        reads.append(figures.worker)
        if len(reads) == 1:
            held.wait(10)  # the first read's figures predate the change below
        return figures

    monkeypatch.setattr(status_bar, "status_figures", read_then_wait)
    status.refresh()
    qtbot.waitUntil(lambda: len(reads) == 1)
    job_id = _worker_running_a_job(library, library.clock())
    status.refresh()  # asked while the first read is still running
    held.set()
    qtbot.waitUntil(lambda: status.worker.text() == f"Captures: running job {job_id}")
    assert reads == ["Captures: none running", f"Captures: running job {job_id}"]


def test_captures_added_or_deleted_elsewhere_show_within_a_status_reading(
    qtbot: QtBot, library: Library, main_window: MainWindow
) -> None:
    """A capture made by another process (a terminal, a watch's timer, another machine of a
    shared library) showed only at the window's next own action, minutes later; the status
    bar's reading every few seconds sees it and the table reads again. The window's own
    refresh is no news (no second read of the table)."""
    window, status = main_window, main_window.status
    status.timer.stop()  # only the readings asked for here
    qtbot.waitUntil(lambda: not status._reads.busy and status.figures is not None)
    add_snapshot(library, "https://harbour.example/tides")
    with qtbot.assertNotEmitted(status.changed_elsewhere, wait=300):
        window.refresh_all()  # the window's own read: its figures are no news
        qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
        qtbot.waitUntil(lambda: not status._reads.busy)
        status.refresh()  # nothing new since
        qtbot.waitUntil(lambda: not status._reads.busy)

    elsewhere = add_snapshot(library, "https://harbour.example/ferries")  # not by the window
    with qtbot.waitSignal(status.changed_elsewhere, timeout=5000):
        status.refresh()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)

    library.snapshots.delete([elsewhere])  # deleted elsewhere: the row goes too
    with qtbot.waitSignal(status.changed_elsewhere, timeout=5000):
        status.refresh()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)


def test_status_bar_says_what_captures_are_doing(
    qtbot: QtBot, library: Library, main_window: MainWindow
) -> None:
    from archiver_app.store.models import Worker

    now = library.clock()
    assert status_figures(library, now).worker == "Captures: none running"
    job_id = _worker_running_a_job(library, now)
    assert status_figures(library, now).worker == f"Captures: running job {job_id}"
    main_window.status.refresh()
    qtbot.waitUntil(lambda: main_window.status.worker.text() == f"Captures: running job {job_id}")
    with library.write() as s:
        row = s.get(Worker, "w1")
        assert row is not None
        row.state, row.current_job_id = "idle", None
    assert status_figures(library, now).worker == "Captures: waiting for work"
    # a worker that stopped beating (killed) runs nothing, whatever its row last said
    later = now + timedelta(minutes=3)
    assert status_figures(library, later).worker == "Captures: none running"
    # a page claimed under a live lease is being captured, whatever the worker rows say
    from archiver_app.store.models import Page

    with library.write() as s:
        s.add(
            Page(
                job_id=job_id,
                url="https://e.test/",
                state="claimed",
                claimed_by="w2",
                lease_expires_at=later + timedelta(minutes=1),
            )
        )
    assert status_figures(library, later).worker == f"Captures: running job {job_id}"
    after_lease = later + timedelta(minutes=2)
    assert status_figures(library, after_lease).worker == "Captures: none running"


def test_a_narrow_list_table_keeps_its_names_readable(qtbot: QtBot) -> None:
    """The jobs table has a dozen figure columns: in a narrow dock the name column keeps
    NAME_MIN_WIDTH (the table scrolls sideways); in a wide one it takes the spare width."""
    from PySide6.QtGui import QStandardItem, QStandardItemModel
    from PySide6.QtWidgets import QHeaderView

    from archiver_app.gui.tables import NAME_MIN_WIDTH, list_table

    model = QStandardItemModel(0, 12)
    table = list_table(None, model, "t")  # type: ignore[arg-type]
    qtbot.addWidget(table)
    model.appendRow(
        [QStandardItem("#6 watch https://harbour.example/notices")]
        + [QStandardItem("123,456 KB") for _ in range(11)]
    )
    header = table.horizontalHeader()
    table.resize(500, 200)
    table.show()
    qtbot.waitUntil(lambda: header.sectionSize(0) >= NAME_MIN_WIDTH)
    assert header.sectionResizeMode(0) == QHeaderView.ResizeMode.Interactive
    table.resize(3000, 200)
    qtbot.waitUntil(lambda: header.sectionResizeMode(0) == QHeaderView.ResizeMode.Stretch)
    figures = sum(header.sectionSize(c) for c in range(1, 12))
    assert header.sectionSize(0) >= table.viewport().width() - figures - 2


def test_resume_retry_and_run_run_the_capture_here(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    """A paused capture's run has ended, a retried one goes back in the queue, and one
    queued outside the window (bookmarks imported from a terminal) waits for a worker:
    Resume, Retry and Run each run the job here, in a child process, with a real browser
    (they only changed its row, and the job waited for a worker the app never starts)."""
    from tests.helpers.webserver import LocalServer, Request, Response

    broken = [True]

    def flaky(_request: Request) -> Response:
        if broken[0]:
            raise ConnectionError("the connection drops before any answer")
        return Response(body=b"<!doctype html><title>Back again</title><p>Here now.</p>")

    server = LocalServer({"/flaky": flaky}).start()
    panel = JobsPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.show()

    def choose(job_id: int, button: str) -> None:
        panel.refresh()
        qtbot.waitUntil(lambda: any(r.id == job_id for r in panel.model.rows))
        panel.select_job(job_id)
        qtbot.waitUntil(panel.resume_button.isEnabled, timeout=20_000)
        assert panel.resume_button.text() == button

    try:
        first = library.jobs.capture([server.url("/flaky")])
        library.jobs.pause(first)
        choose(first, "Resume")
        with qtbot.waitSignal(panel.job_finished, timeout=120_000) as resumed:
            panel.resume_button.click()
        assert resumed.args == [first, "failed"]
        broken[0] = False
        qtbot.waitUntil(panel.retry_button.isEnabled, timeout=20_000)
        with qtbot.waitSignal(panel.job_finished, timeout=120_000) as retried:
            panel.retry_button.click()
        assert retried.args == [first, "indexed"]
        second = library.jobs.capture([server.url("/flaky")])
        choose(second, "Run")
        with qtbot.waitSignal(panel.job_finished, timeout=120_000) as ran:
            panel.resume_button.click()
        assert ran.args == [second, "indexed"]
    finally:
        panel.timer.stop()
        server.stop()
    with library.session() as s:
        states = s.execute(select(Snapshot.title, Snapshot.state)).all()
    assert sorted(t for t, state in states if state == "complete") == ["Back again"] * 2


def test_add_drive_suggests_the_folders_name_as_its_label(
    qtbot: QtBot,
    main_window: MainWindow,
    library: Library,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from PySide6.QtWidgets import QFileDialog, QInputDialog

    folder = tmp_path / "BLUE-2TB"
    folder.mkdir()
    asked: list[str] = []

    def answer(*_a: object, text: str = "", **_k: object) -> tuple[str, bool]:
        asked.append(text)
        return text, True

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_a, **_k: str(folder))
    monkeypatch.setattr(QInputDialog, "getText", answer)
    main_window.drives.add_drive()
    assert asked == ["BLUE-2TB"]
    qtbot.waitUntil(lambda: [d.label for d in library.drives.list(scan=False)] == ["BLUE-2TB"])


def test_jobs_panel_follows_the_jobs_again_once_the_database_answers_again(
    qtbot: QtBot, library: Library, op_runner: OpRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After one failed read (a shared library's database server stopped a moment) the
    panel stopped its timer for good: jobs made later never showed, F5 or not. It goes on
    reading; the outage is told to ``lib.outages`` (said once each way, and by the window's
    status bar while it lasts), not in a box of the panel's."""
    from archiver_app.store.connection_loss import DatabaseUnreachableError

    rows = type(library.jobs).rows
    down = [True]

    def read(manager: object, **kwargs: object) -> object:
        if down[0]:
            raise DatabaseUnreachableError("connection refused")
        return rows(manager, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(type(library.jobs), "rows", read)
    panel = JobsPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitUntil(lambda: library.outages.current is not None, timeout=5000)
    qtbot.wait(2500)  # the timer reads twice more meanwhile: still failing, said once
    assert [b for b in panel.findChildren(QMessageBox) if b.isVisible()] == []
    down[0] = False
    library.jobs.capture(["https://harbour.example/"])  # made while the panel looked away
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=5000)
    assert library.outages.current is None
    panel.timer.stop()


def test_the_summary_counts_this_computer_s_files_and_those_offloaded() -> None:
    one = LaptopStatus(present=1, corrupted=0, offloaded=0, last_verified_at=None, scrub_due=False)
    assert laptop_summary(one) == "This computer: 1 file, last verified never."
    freed = LaptopStatus(
        present=28, corrupted=0, offloaded=57, last_verified_at=None, scrub_due=False
    )
    assert laptop_summary(freed) == (
        "This computer: 28 files, 57 offloaded (their copies are on drives), last verified never."
    )
