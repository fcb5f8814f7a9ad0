"""The Jobs panel on mirror and verify jobs that fell short, and on one a terminal left."""

from __future__ import annotations

import os
from pathlib import Path

from pytestqt.qtbot import QtBot

from archiver_app.gui.jobs_panel import JobsPanel
from archiver_app.gui.ops import OpRunner
from archiver_app.jobs import JobKind, default_registry, run_foreground
from archiver_app.jobs.operations import mirror_config, verify_config
from archiver_app.library import Library
from archiver_app.mirror import add_destination, run_mirror
from tests.helpers.mirror_data import make_snapshot

#: Set to a folder to keep the panels' pictures (to look at them).
SHOTS = os.environ.get("ARCHIVER_TEST_SHOTS")


def _cells(panel: JobsPanel, job_id: int) -> list[str]:
    [row] = [i for i, r in enumerate(panel.model.rows) if r.id == job_id]
    return [panel.model.data(panel.model.index(row, c), 0) for c in range(6)]


def _short_mirror(library: Library, tmp_path: Path) -> int:
    """A mirror job whose drive was pulled once its plan was made: 0 of 4 copied."""
    make_snapshot(library, [1000, 2000, 3000, 4000], seed=51)
    mount = tmp_path / "usb"
    mount.mkdir()
    add_destination(library, mount, "usb")

    def pull(_plan: object) -> None:
        mount.rename(tmp_path / "pulled")

    run = run_foreground(
        library, JobKind.MIRROR, mirror_config(), default_registry(), name="Mirror", emit=pull
    )
    (tmp_path / "pulled").rename(mount)  # plugged back in
    return run.job_id


def _verify_finding_a_missing_copy(library: Library, tmp_path: Path) -> int:
    make_snapshot(library, [100, 200, 300], seed=52)
    mount = tmp_path / "red"
    mount.mkdir()
    add_destination(library, mount, "red")
    (tmp_path / "usb").rename(tmp_path / "away")  # the mirror's drive is put away
    run_mirror(library)  # every file, the mirror's 4 and these 3, goes to red
    copies = sorted(p for p in (mount / "Archiver" / library.id / "collections").rglob("*.bin"))
    copies[0].unlink()
    run = run_foreground(
        library,
        JobKind.VERIFY,
        verify_config("red", repair=False),
        default_registry(),
        name="Verify red",
    )
    return run.job_id


def test_a_mirror_that_stopped_short_and_a_verify_with_errors_read_so(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    """Both read "completed", the mirror "0 | 0" with its bar full, the verify with an empty
    Failed column though a copy was missing."""
    mirror = _short_mirror(library, tmp_path)
    verify = _verify_finding_a_missing_copy(library, tmp_path)
    panel = JobsPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.resize(1300, 500)
    panel.show()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2)
    assert _cells(panel, mirror)[1:] == ["mirror", "incomplete", "4", "0", ""]
    assert _cells(panel, verify)[1:] == ["verify", "with errors", "7", "7", "1"]
    panel.select_job(mirror)
    qtbot.waitUntil(lambda: "incomplete" in panel.summary.text())
    assert (panel.progress.value(), panel.progress.maximum()) == (0, 4)
    assert "0 of 4: mirror: 0 of 4 files" in panel.summary.text()
    assert "the retention policy is not met" in panel.summary.text()
    qtbot.waitUntil(lambda: "completed" in panel.log.toPlainText())
    if SHOTS:
        qtbot.wait(200)  # the summary's new lines laid out
        panel.grab().save(str(Path(SHOTS) / "jobs-short-mirror.png"))
    panel.select_job(verify)
    qtbot.waitUntil(lambda: "with errors" in panel.summary.text())
    assert (panel.progress.value(), panel.progress.maximum()) == (7, 7)
    assert "1 failed; red: 1 copy not repaired" in panel.summary.text()
    assert panel.retry_button.isEnabled()
    panel.timer.stop()


def test_retry_runs_a_short_mirror_again_as_a_new_job(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    """Retry was disabled on every job but a crawl."""
    mirror = _short_mirror(library, tmp_path)
    panel = JobsPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1)
    panel.select_job(mirror)
    qtbot.waitUntil(panel.retry_button.isEnabled)
    with qtbot.waitSignal(panel.job_finished, timeout=60_000) as ran:
        panel.retry_button.click()
    again = ran.args[0]
    assert again != mirror and ran.args[1] == "completed"
    assert _cells(panel, again)[1:] == ["mirror", "completed", "4", "4", ""]
    assert _cells(panel, mirror)[2] == "incomplete"  # its own record stays
    panel.timer.stop()


def test_a_terminals_mirror_killed_while_the_panel_is_open_can_be_run_here(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    """It showed "queued 0/4" with Resume disabled and no Run (only Cancel), though
    `archiver job show` and docs/gui.md said the app runs it (Run)."""
    from archiver_app.jobs import enqueue
    from tests.unit.jobs.test_interrupted import HERE, _killed_child, _running

    make_snapshot(library, [1000, 2000, 3000, 4000], seed=53)
    mount = tmp_path / "usb"
    mount.mkdir()
    add_destination(library, mount, "usb")
    job_id = enqueue(library, JobKind.MIRROR, mirror_config(), name="mirror")
    _running(library, job_id, f"{HERE}:{_killed_child()}:x", lease=60)  # kill -9 mid-run
    panel = JobsPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.recover = True  # the window's start-up look is done: the panel looks as it reads
    panel.show()
    qtbot.waitUntil(lambda: _cells(panel, job_id)[2:3] == ["queued"] if panel.model.rows else False)
    panel.select_job(job_id)
    qtbot.waitUntil(panel.resume_button.isEnabled)
    assert panel.resume_button.text() == "Run"
    with qtbot.waitSignal(panel.job_finished, timeout=60_000) as ran:
        panel.resume_button.click()
    assert ran.args == [job_id, "completed"]
    assert _cells(panel, job_id)[1:] == ["mirror", "completed", "4", "4", ""]
    panel.timer.stop()


def test_the_drives_panel_says_busy_as_the_cli_does_as_soon_as_a_terminal_mirror_runs(
    qtbot: QtBot, library: Library, op_runner: OpRunner, gui_settings: object, tmp_path: Path
) -> None:
    """It said "plugged in, safe to unplug" while `archiver drives` said "busy (not safe to
    unplug)" (read every 3 s), then "copying…" for every plugged-in drive."""
    import signal
    import subprocess
    import sys

    from archiver_app.gui.main_window import MainWindow
    from archiver_app.jobs import enqueue
    from archiver_app.mirror.locking import destination_lock
    from tests.unit.jobs.test_interrupted import HERE, _running

    make_snapshot(library, [1000], seed=54)
    for name in ("blue", "red"):
        (tmp_path / name).mkdir()
        add_destination(library, tmp_path / name, name)
    window = MainWindow(library, runner=op_runner, settings=gui_settings)  # type: ignore[arg-type]
    qtbot.addWidget(window)
    window.resize(1300, 700)
    window.show()
    drives = window.drives
    drives.auto_mirror = False

    def states() -> dict[str, str]:
        model = drives.model
        return {r.label: model.data(model.index(i, 1), 0) for i, r in enumerate(model.rows)}

    safe = "plugged in, safe to unplug"
    qtbot.waitUntil(lambda: states() == {"blue": safe, "red": safe})
    drives.timer.stop()  # from now on only the news of a job refreshes it
    terminal = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        job = enqueue(library, JobKind.MIRROR, mirror_config(), name="mirror")
        with destination_lock(tmp_path / "blue", label="blue"):  # the terminal writes to blue
            _running(library, job, f"{HERE}:{terminal.pid}:x", lease=60)
            busy = "plugged in, busy, not safe to unplug"
            qtbot.waitUntil(lambda: states() == {"blue": busy, "red": safe}, timeout=5000)
            if SHOTS:
                window.drives_dock.show()
                window.drives_dock.raise_()
                qtbot.wait(300)
                drives.grab().save(str(Path(SHOTS) / "drives-busy.png"))
        library.jobs.cancel(job)  # its run ends (cancelling, then aborted)
        with library.write() as s:
            from archiver_app.store.models import Job

            row = s.get(Job, job)
            assert row is not None
            row.status = "aborted"
        qtbot.waitUntil(lambda: states() == {"blue": safe, "red": safe}, timeout=5000)
    finally:
        terminal.send_signal(signal.SIGKILL)
        terminal.wait()
    window.jobs.timer.stop()
