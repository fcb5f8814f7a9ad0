"""The Jobs panel's editor of a crawl's live rules: its ignore patterns and concurrency.

The box shows the rules the job runs under now, read through ``lib.jobs.rules`` (a job's
rules live in its versioned rules, not in its config), and Apply sends only what was
edited against what was shown — patterns added or removed, the concurrency if changed —
as ``archiver job rules --ignore/--unignore`` does. Apply with nothing edited writes
nothing. Removing the pattern that keeps a browser profile logged in (its log-out links)
is asked about first: without it the crawl may follow a log-out link and end the session.

Threading: a widget of the GUI thread; reads and writes run as background operations.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QFormLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from archiver_app.api.jobs import JobRules
from archiver_app.errors import InputError
from archiver_app.gui.capture_input import parse_ignore_patterns
from archiver_app.gui.errors import question_box, show_error
from archiver_app.gui.ops import BackgroundOp, OpRunner
from archiver_app.library import Library

#: The highest concurrency a crawl accepts (``crawl.rules.MAX_CONCURRENCY``).
MAX_CONCURRENCY = 16


class JobRulesBox(QWidget):
    """The selected crawl's rules: :meth:`show_job` on every refresh of the panel."""

    def __init__(self, library: Library, runner: OpRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library, self.runner = library, runner
        #: The rules the fields were filled from (None until the selected job's are read).
        self.shown: JobRules | None = None
        self._asked: tuple[int, int] | None = None  # (job, version) last asked for
        self._active = False
        live = QFormLayout(self)
        live.setContentsMargins(0, 0, 0, 0)
        self.ignore_edit = QPlainTextEdit(self)
        self.ignore_edit.setTabChangesFocus(True)  # Tab moves on: a list has no tabs
        self.ignore_edit.setObjectName("job_ignore")
        self.ignore_edit.setMaximumHeight(60)
        self.concurrency_edit = QSpinBox(self)
        self.concurrency_edit.setObjectName("job_concurrency")
        self.concurrency_edit.setRange(1, MAX_CONCURRENCY)
        self.guard_note = QLabel(
            "The log-out pattern keeps this job's browser profile logged in.", self
        )
        self.guard_note.setObjectName("job_guard_note")
        self.guard_note.setWordWrap(True)
        self.guard_note.hide()
        self.apply_button = QPushButton("Apply to running job", self)
        self.apply_button.setEnabled(False)
        live.addRow("Ignore patterns", self.ignore_edit)
        live.addRow("", self.guard_note)
        live.addRow("Concurrency", self.concurrency_edit)
        live.addRow("", self.apply_button)
        self.apply_button.clicked.connect(self.apply)

    # ------------------------------------------------------------------ showing

    def show_job(self, job_id: int | None, version: int, *, active: bool) -> None:
        """The panel's selected crawl (None: none) at its rules ``version``: read its rules
        when they are not the ones shown; Apply only once they are, while it is active."""
        if job_id is None:
            self.shown, self._asked = None, None
            self.apply_button.setEnabled(False)
            return
        if self.shown is not None and self.shown.job_id != job_id:
            self.shown = None  # another job: its rules, not the last one's, once read
            self.ignore_edit.setPlainText("")
            self.guard_note.hide()
        self._active = active
        self.apply_button.setEnabled(active and self.shown is not None)
        have = None if self.shown is None else (self.shown.job_id, self.shown.version)
        if have != (job_id, version) and self._asked != (job_id, version):
            self._asked = (job_id, version)
            jobs = self.library.jobs
            BackgroundOp(
                self.runner, lambda _p, _c: jobs.rules(job_id), label="reading the job's rules"
            ).success(self._read).failure(
                lambda f: show_error(self, f, "reading the job's rules")
            ).run_in_background()

    def _read(self, rules: JobRules) -> None:
        if self._asked is None or self._asked[0] != rules.job_id:
            return  # another job was selected meanwhile
        if self.shown is not None and self.shown.job_id == rules.job_id and self.edited():
            # Edits in progress stay; Apply merges them into these newer rules.
            self._asked = (rules.job_id, rules.version)
            return
        self.shown = rules
        self.ignore_edit.setPlainText("\n".join(rules.ignore))
        self.concurrency_edit.setValue(rules.concurrency)
        self.guard_note.setVisible(bool(rules.guards))
        self.apply_button.setEnabled(self._active)

    def edited(self) -> bool:
        """Whether the fields differ from the rules they were filled from."""
        if self.shown is None:
            return False
        lines = [x.strip() for x in self.ignore_edit.toPlainText().splitlines() if x.strip()]
        return (
            tuple(lines) != self.shown.ignore
            or self.concurrency_edit.value() != self.shown.concurrency
        )

    # ------------------------------------------------------------------ applying

    def apply(self) -> BackgroundOp[int] | None:
        """Send what was edited; nothing when nothing was (returns the operation)."""
        shown = self.shown
        if shown is None:
            return None
        try:
            patterns = parse_ignore_patterns(self.ignore_edit.toPlainText())
        except InputError as exc:
            show_error(self, exc, "changing the job's rules")
            return None
        add = [p for p in patterns if p not in shown.ignore]
        remove = [p for p in shown.ignore if p not in patterns]
        concurrency = self.concurrency_edit.value()
        if concurrency == shown.concurrency and not add and not remove:
            return None
        if any(g in remove for g in shown.guards) and not self.confirm_unguard():
            return None
        jobs, job = self.library.jobs, shown.job_id

        def saved(_version: int) -> None:
            self.shown, self._asked = None, None  # the fields take the new rules when read

        return (
            BackgroundOp(
                self.runner,
                lambda _p, _c: jobs.update_rules(
                    job,
                    add_ignore=add,
                    remove_ignore=remove,
                    concurrency=None if concurrency == shown.concurrency else concurrency,
                ),
                label="update rules",
            )
            .success(saved)
            .failure(lambda f: show_error(self, f, "changing the job's rules"))
            .run_in_background()
        )

    def confirm_unguard(self) -> bool:
        """Ask before the log-out pattern goes; *Cancel* (Return, Esc) keeps everything."""
        box = question_box(
            self,
            QMessageBox.Icon.Warning,
            "Remove the log-out pattern",
            "This job captures in a logged-in browser profile. Without the log-out pattern "
            "it may follow a log-out link and end that session. Remove it?",
            "Remove",
        )
        return box.exec() == QMessageBox.StandardButton.Yes
