"""The Jobs panel shows a crawl's real rules and Apply changes only what was edited
(a profile crawl's log-out pattern and its concurrency survived no Apply before)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from archiver_app.capture.login_check import LOGOUT_IGNORE
from archiver_app.crawl.api import job_detail
from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.rules import Rules
from archiver_app.gui.jobs_panel import JobsPanel
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
from tests.helpers.gui_fixtures import answer_next_box


def _panel_on_profile_crawl(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> tuple[JobsPanel, int]:
    library.profiles.create("site")
    job = create_job(
        library,
        ["http://127.0.0.1:8765/"],
        rules=Rules(ignore=("/private/", r"\?replytocom="), concurrency=1),
        profile="site",
    )
    panel = JobsPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1)
    panel.table.selectRow(0)
    qtbot.waitUntil(panel.apply_button.isEnabled, timeout=5000)
    return panel, job


def _lines(panel: JobsPanel) -> list[str]:
    return panel.ignore_edit.toPlainText().splitlines()


def test_the_panel_shows_the_jobs_rules_and_apply_unedited_changes_nothing(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    panel, job = _panel_on_profile_crawl(qtbot, library, op_runner)
    before = library.jobs.rules(job)
    assert before.ignore == ("/private/", r"\?replytocom=", LOGOUT_IGNORE)
    assert before.guards == (LOGOUT_IGNORE,) and before.concurrency == 1
    shown = job_detail(library, job)  # what `archiver job show` prints
    assert (shown.summary.ruleset_version, shown.rules.ignore, shown.rules.concurrency) == (
        before.version,
        before.ignore,
        before.concurrency,
    )
    assert _lines(panel) == list(before.ignore)  # not an empty box
    assert panel.concurrency_edit.value() == 1  # not 2
    assert panel.rules_box.guard_note.isVisible()

    assert panel.rules_box.apply() is None  # nothing edited: nothing written
    panel.apply_button.click()
    panel.refresh()
    qtbot.wait(200)
    assert library.jobs.rules(job) == before

    panel.concurrency_edit.setValue(3)  # one field edited: only it changes
    op = panel.rules_box.apply()
    assert op is not None
    qtbot.waitUntil(lambda: library.jobs.rules(job).version == before.version + 1, timeout=5000)
    after = library.jobs.rules(job)
    assert after.concurrency == 3 and after.ignore == before.ignore
    panel.refresh()
    qtbot.waitUntil(lambda: panel.rules_box.shown == after, timeout=5000)
    assert panel.concurrency_edit.value() == 3 and _lines(panel) == list(after.ignore)

    panel.ignore_edit.setPlainText("\n".join([*after.ignore, "/calendar/"]))  # one added
    assert panel.rules_box.apply() is not None
    qtbot.waitUntil(lambda: library.jobs.rules(job).version == after.version + 1, timeout=5000)
    assert library.jobs.rules(job).ignore == (*after.ignore, "/calendar/")
    assert library.jobs.rules(job).concurrency == 3
    panel.timer.stop()


def test_dropping_the_log_out_pattern_is_asked_about_first(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    panel, job = _panel_on_profile_crawl(qtbot, library, op_runner)
    before = library.jobs.rules(job)
    panel.ignore_edit.setPlainText("/private/")  # the replytocom and log-out lines deleted
    seen: list[QMessageBox] = []
    answer_next_box(lambda box: QTest.keyClick(box, Qt.Key.Key_Escape), seen)
    assert panel.rules_box.apply() is None  # Esc: nothing changes
    [box] = seen
    assert "log-out" in box.text()
    assert library.jobs.rules(job) == before

    answer_next_box(lambda box: box.button(QMessageBox.StandardButton.Yes).click(), seen)
    assert panel.rules_box.apply() is not None  # removing it on purpose still works
    qtbot.waitUntil(lambda: library.jobs.rules(job).version == before.version + 1, timeout=5000)
    assert library.jobs.rules(job).ignore == ("/private/",)
    assert library.jobs.rules(job).concurrency == 1
    panel.timer.stop()
