"""An edition's coverage, as a view the user acts on.

Counts per state, overall and per domain; the gaps (failed, missing, pending) each with a
reason the user types in place; and the three actions of a review: **Capture N missing
URLs** (one capture job, run in a child process like every capture), **Accept…** (refused
with the reason shown above the table, the unexplained gaps picked out) and **Export
release…** (an export job, signed and timestamped when the boxes beside it say so). An
accepted edition is frozen: reasons are read-only and a **Reopen…** button replaces Accept
(**Review flag…** when verify flagged it). Accept freezes the members shown (refused when
they changed since); Reopen names the members it would change before asking.

Everything goes through ``lib.editions`` and the job runtime; long work runs on the op
runner, never on the GUI thread. :func:`open_edition` is the main window's hook; it
subscribes the view to the window's job-finished signal, so an open view re-reads the
edition whenever a job ends (a capture, crawl or import may have changed it), and a state
that changed while reading is passed on as ``changed`` (the sidebar shows it).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from archiver_app.api.changes import Changes
from archiver_app.api.editions import (
    CaptureQueued,
    Counts,
    Coverage,
    EditionState,
    EditionSummary,
    EditResult,
    MemberChange,
    ReleaseView,
    StateChange,
)
from archiver_app.editions.states import TransitionCode
from archiver_app.gui.edition_release import ReleasesBox, release_output, release_written
from archiver_app.gui.errors import show_error
from archiver_app.gui.export_signing import SigningChoice
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner
from archiver_app.gui.tables import leave_on_tab
from archiver_app.library import Library
from archiver_app.units import counted

if TYPE_CHECKING:
    from PySide6.QtWidgets import QTabWidget

T = TypeVar("T")
#: What the view reads: the edition, its coverage, whether its state moved, its releases.
_Read = tuple[EditionSummary, Coverage, bool, tuple[ReleaseView, ...]]

STATE_TEXT = {
    EditionState.PLANNED: "Planned: nothing captured yet",
    EditionState.IN_PROGRESS: "In progress: captures queued or not yet searchable",
    EditionState.SEARCH_READY: "Search ready: review the gaps, then accept",
    EditionState.RESEARCH_READY: "Research ready: accepted and frozen",
    EditionState.NEEDS_REVIEW: "Needs review",
}
STATE_COLOURS = {
    EditionState.RESEARCH_READY: "#1b7f3b",
    EditionState.NEEDS_REVIEW: "#b3261e",
    EditionState.SEARCH_READY: "#1f5fbf",
}
COUNT_COLUMNS = ("Domain", "Intended", "Captured", "Failed", "Missing", "Excluded")
GAP_COLUMNS = ("URL", "State", "What happened", "Reason (required to accept)")
MEMBER_COLUMNS = ("URL", "Captured", "Answer", "Chosen")
REASON_COLUMN = 3
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def _counts_row(label: str, c: Counts) -> list[str]:
    return [label, str(c.intended), str(c.captured), str(c.failed),
            str(c.missing + c.pending), str(c.excluded)]  # fmt: skip


class EditionView(QWidget):
    """One edition. ``changed`` carries what an action changed (the sidebar's states)."""

    changed = Signal(object)  # Changes
    loaded = Signal()  # the edition was (re)read and is shown
    open_capture = Signal(int)  # a member was double-clicked: replay it

    def __init__(
        self,
        library: Library,
        name: str,
        runner: OpRunner,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("edition-view")
        self.library, self.name, self.runner = library, name, runner
        self.summary: EditionSummary | None = None
        self.coverage: Coverage | None = None
        self._filling = False
        self._highlight: set[str] = set()  # gaps to select once shown (a refused accept)
        self._running = 0  # capture or release jobs running
        self._member_ids: list[int | None] = []  # the members table's captures, by row
        self.releases: tuple[ReleaseView, ...] = ()  # as last read, newest first
        #: the release written here that the notice is about (its path, result, signed):
        #: said again from the releases on each read (the one cited may change elsewhere)
        self._written: tuple[Path, object, bool] | None = None

        self.title = QLabel(self)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        self.title.setFont(font)
        self.state = QLabel(self)
        self.state.setWordWrap(True)
        self.notice = QLabel(self)  # refusals and results, in words
        self.notice.setWordWrap(True)
        self.notice.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notice.hide()

        self.counts = self._table(COUNT_COLUMNS)
        self.gaps = self._table(GAP_COLUMNS)
        self.gaps.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
        )
        self.gaps.itemChanged.connect(self._reason_edited)
        gaps_header = self.gaps.horizontalHeader()
        gaps_header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        gaps_header.setSectionResizeMode(REASON_COLUMN, QHeaderView.ResizeMode.Stretch)
        self.gaps_label = QLabel(self)
        self.members = self._table(MEMBER_COLUMNS)  # the capture that stands for each URL
        self.members.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.members.cellDoubleClicked.connect(self._member_opened)
        self.members_label = QLabel(self)

        self.capture_button = QPushButton(self)
        self.capture_button.clicked.connect(self.capture_missing)
        self.accept_button = QPushButton("Accept…", self)
        self.accept_button.clicked.connect(self.accept_or_reopen)
        self.export_button = QPushButton("Export release…", self)
        self.export_button.clicked.connect(self.export_release)
        self.signing = SigningChoice(library, self)  # the release's: Sign, Timestamp with …

        self.counts.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.release_box = ReleasesBox(self)  # the releases on record; the one cited
        self.excluded = QLabel(self)  # the rules that excluded URLs, with their counts
        self.excluded.setWordWrap(True)
        self.excluded.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._lay_out()
        self.reload()

    def _lay_out(self) -> None:
        buttons = QHBoxLayout()
        for b in (self.capture_button, self.accept_button, self.export_button):
            buttons.addWidget(b, 0, Qt.AlignmentFlag.AlignTop)
        buttons.addWidget(self.signing)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        for w in (self.title, self.state, self.notice):
            layout.addWidget(w)
        layout.addLayout(buttons)
        layout.addWidget(self.counts)
        layout.addWidget(self.excluded)
        layout.addWidget(self.release_box)
        layout.addSpacing(6)
        layout.addWidget(self.gaps_label)
        layout.addWidget(self.gaps, 1)
        layout.addWidget(self.members_label)
        layout.addWidget(self.members, 1)

    def _table(self, columns: tuple[str, ...]) -> QTableWidget:
        table = QTableWidget(0, len(columns), self)
        table.setHorizontalHeaderLabels(list(columns))
        table.verticalHeader().hide()
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        leave_on_tab(table)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setAlternatingRowColors(True)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        return table

    # ------------------------------------------------------------------ reading

    def _background(
        self,
        work: Callable[[Any, Any], T],
        done: Callable[[T], object],
        label: str,
        on_failure: Callable[[OpFailure], object] | None = None,
    ) -> None:
        """Run ``work(progress, cancel)`` on the op runner (which keeps the op until it
        ends); ``done`` gets its result on the GUI thread, unless the view was closed
        meanwhile. ``work`` must hold no widget: it may be released on the worker thread."""
        failed = on_failure or self._failed
        BackgroundOp(self.runner, work, label=label, blocks_quit=False).success(
            lambda result: done(result) if isValid(self) else None
        ).failure(lambda failure: failed(failure) if isValid(self) else None).run_in_background()

    def reload(self) -> None:
        """Re-read the edition (its ledger refreshed first, unless frozen) in the background;
        ``loaded`` tells when it is shown."""
        eds, name = self.library.editions, self.name

        def read(_progress: Any, _cancel: Any) -> _Read:
            moved = eds.refresh(name).transition.code is TransitionCode.MOVED
            return eds.get(name), eds.coverage(name), moved, eds.releases(name)

        self._background(read, self._show, f"reading edition {name}")

    def job_finished(self, _job_id: int = 0, _status: str = "") -> None:
        """A job ended somewhere in the app: re-read (its outcome may be in the edition)."""
        if isValid(self):
            self.reload()

    def _show(self, data: _Read) -> None:
        s, cov, moved, self.releases = data
        self.summary, self.coverage = s, cov
        if moved:  # the sidebar's state for it is stale
            self.changed.emit(Changes(collections=True))
        self.title.setText(f"Edition {s.name}")
        colour = STATE_COLOURS.get(s.state, "palette(text)")
        note = f" — {html.escape(s.review_note, quote=False)}" if s.review_note else ""
        if s.frozen and s.accepted_at is not None:
            note = f" on {s.accepted_at:%-d %B %Y}"
        if s.flagged:
            flag = html.escape(s.review_note or "", quote=False)
            note += f" — <b style='color:#b3261e'>flagged for review</b>: {flag}"
        self.state.setText(
            f"Collection <b>{html.escape(s.collection_name, quote=False)}</b>, {s.period_label} · "
            f"<b style='color:{colour}'>{STATE_TEXT[s.state]}</b>{note}"
        )
        self._fill_counts(cov)
        rules = [f"<code>{html.escape(rule or '?', quote=False)}</code> ({n})"
                 for rule, n in cov.excluded_by_rule.items()]  # fmt: skip
        self.excluded.setText("Excluded by rule: " + ", ".join(rules) if rules else "")
        self.excluded.setVisible(bool(rules))
        self.release_box.show_releases(self.releases, accepted=s.frozen)
        if self._written is not None:  # the release written here, as the library says now
            self._say(release_written(*self._written, self.releases), written=self._written)
        self._fill_gaps(cov, frozen=s.frozen)
        self._fill_members(cov)
        if self._highlight:
            self._select_urls(self._highlight)
            self._highlight = set()
        self._update_buttons()
        self.loaded.emit()

    def _update_buttons(self) -> None:
        s, cov = self.summary, self.coverage
        if s is None or cov is None:
            return
        idle = not self._running
        fixable = cov.counts.failed + cov.counts.missing
        self.capture_button.setText(f"Capture {fixable} missing URL{'s' if fixable != 1 else ''}")
        self.capture_button.setEnabled(idle and fixable > 0 and not s.frozen)
        self.accept_button.setText(
            "Review flag…" if s.flagged else "Reopen…" if s.frozen else "Accept…"
        )
        self.accept_button.setEnabled(idle)
        self.export_button.setEnabled(idle and cov.counts.captured > 0)

    def _fill_counts(self, cov: Coverage) -> None:
        rows = [_counts_row("All domains", cov.counts)]
        rows += [_counts_row(d or "(no domain)", c) for d, c in cov.by_domain.items()]
        self.counts.setRowCount(len(rows))
        for r, values in enumerate(rows):
            for c, value in enumerate(values):
                item = QTableWidgetItem(value)
                if c:
                    item.setTextAlignment(RIGHT)
                if r == 0:
                    bold = QFont(item.font())
                    bold.setBold(True)
                    item.setFont(bold)
                self.counts.setItem(r, c, item)
        self.counts.setMaximumHeight(
            self.counts.horizontalHeader().height() + 8
            + sum(self.counts.rowHeight(r) for r in range(min(len(rows), 6)))
        )  # fmt: skip

    def _fill_gaps(self, cov: Coverage, *, frozen: bool) -> None:
        self._filling = True
        gaps = cov.gaps
        explained = sum(1 for g in gaps if g.gap_reason)
        self.gaps_label.setText(
            f"<b>Gaps: {len(gaps)}</b> ({explained} with a reason). "
            + ("Reopen the edition to change them." if frozen else
               "Double-click a reason to type it; every gap needs one before you accept.")
        )  # fmt: skip
        self.gaps.setRowCount(len(gaps))
        for r, g in enumerate(gaps):
            what = {
                "failed": f"failed after {counted(g.attempts, 'attempt')}: "
                f"{g.detail or 'no error'}",
                "pending": "queued for capture",
                "missing": "never captured",
            }[g.state.value]
            cells = [g.url, g.state.value, what, g.gap_reason or ""]  # fmt: skip
            for c, value in enumerate(cells):
                item = QTableWidgetItem(value)
                item.setToolTip(value)
                if c != REASON_COLUMN or frozen:
                    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                elif not value:
                    item.setBackground(QBrush(QColor(255, 236, 179)))
                self.gaps.setItem(r, c, item)
        self.gaps.resizeColumnToContents(0)
        self.gaps.setColumnWidth(0, min(self.gaps.columnWidth(0), 420))
        self._filling = False

    def _fill_members(self, cov: Coverage) -> None:
        rows = [t for t in cov.targets if t.snapshot_id is not None]
        rows.sort(key=lambda t: not t.error_answer)  # the error pages first, for review
        errors = sum(t.error_answer for t in rows)
        said = f" ({errors} of them an error page, listed first)" if errors else ""
        self.members_label.setText(
            f"<b>Members: {len(rows)}</b>{said}, the capture that stands for each URL "
            "(the last good one in the period unless chosen; "
            "<code>archiver edition choose</code> picks another). Double-click one to open it."
        )
        self.members.setRowCount(len(rows))
        self._member_ids = [t.snapshot_id for t in rows]
        for r, t in enumerate(rows):
            when = f"{t.captured_at:%Y-%m-%d %H:%M} UTC" if t.captured_at else ""
            chosen = "by you" if t.chosen_by == "user" else "last good capture"
            answer = "" if t.http_status is None else str(t.http_status)
            for c, value in enumerate((t.url, when, answer, chosen)):
                item = QTableWidgetItem(value)
                item.setToolTip(value)
                if c == 2 and t.error_answer:  # a capture of an error page, not of the page
                    item.setBackground(QBrush(QColor(255, 236, 179)))
                    item.setToolTip(f"The server answered {t.http_status}: this is its error page")
                self.members.setItem(r, c, item)

    def _member_opened(self, row: int, _column: int) -> None:
        if 0 <= row < len(self._member_ids):
            self.open_capture.emit(self._member_ids[row])

    def _say(
        self, text: str, *, error: bool = False, written: tuple[Path, object, bool] | None = None
    ) -> None:
        """Show ``text`` as the notice; ``written``: it is about that release written here
        (said again on each read), else it replaces such a notice."""
        self._written = written
        colour = "#b3261e" if error else "#1b7f3b"
        said = html.escape(text, quote=False).replace("\n", "<br>")
        self.notice.setText(f"<span style='color:{colour}'>{said}</span>")
        self.notice.show()

    # ------------------------------------------------------------------ actions

    def _after(self, changes: Changes) -> None:
        self.changed.emit(changes)
        self.reload()

    def _reason_edited(self, item: QTableWidgetItem) -> None:
        if self._filling or item.column() != REASON_COLUMN:
            return
        url_item = self.gaps.item(item.row(), 0)
        if url_item is None:
            return
        eds, name, url, reason = self.library.editions, self.name, url_item.text(), item.text()

        def done(result: EditResult) -> None:
            if result.refused:
                self._say(result.edit.message, error=True)
            self._after(result.changes)

        self._background(lambda _p, _c: eds.explain_gap(name, url, reason), done, "gap reason")

    def accept_or_reopen(self) -> None:
        eds, name = self.library.editions, self.name
        if self.summary is not None and self.summary.flagged:
            self._review_flag()
            return
        if self.summary is not None and self.summary.frozen:
            self._background(lambda _p, _c: eds.reopen_preview(name), self._ask_reopen,
                             "reopen preview")  # fmt: skip
            return
        # with a gap left unexplained the edition refuses: say why without asking first
        unexplained = self.coverage is not None and any(
            not g.gap_reason for g in self.coverage.gaps
        )
        if unexplained or self._confirm(
            "Accept this edition?",
            "Accepting freezes its membership: its captures cannot be deleted until you reopen it.",
        ):
            seen = {t.url: t.snapshot_id for t in self.coverage.targets} if self.coverage else None
            self._background(lambda _p, _c: eds.accept(name, seen), self._accepted, "accept")

    def _ask_reopen(self, changes: tuple[MemberChange, ...]) -> None:
        """Reopen once the user has read which members it would change; No by default."""
        eds, name = self.library.editions, self.name
        text = "Reopening unfreezes it: it will need review and acceptance again."
        if changes:
            text += (
                f"\n\nIts members follow the library again: {counted(len(changes), 'member')} "
                "would change (a URL captured again since is represented by its newest "
                "capture):\n" + _listed(changes)
            )
        if self._confirm("Reopen this edition?", text, default_no=True):
            self._background(lambda _p, _c: eds.reopen(name), self._reopened, "reopen")

    def _review_flag(self) -> None:
        """A flagged accepted edition: keep it accepted (the flag cleared) or reopen it."""
        eds, name = self.library.editions, self.name
        box = QMessageBox(QMessageBox.Icon.Warning, "Edition flagged for review",
                          f"{(self.summary and self.summary.review_note) or ''}.\n\nIt is "
                          "still accepted and frozen. Once you have looked, keep it accepted "
                          "(the flag is cleared) or reopen it to change its members.",
                          QMessageBox.StandardButton.Cancel, self)  # fmt: skip
        keep = box.addButton("Keep accepted", QMessageBox.ButtonRole.AcceptRole)
        reopen = box.addButton("Reopen", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        if box.clickedButton() is keep:
            self._background(lambda _p, _c: eds.accept(name), self._accepted, "accept")
        elif box.clickedButton() is reopen:
            self._background(lambda _p, _c: eds.reopen(name), self._reopened, "reopen")

    def _accepted(self, change: StateChange) -> None:
        t = change.transition
        if t.refused:
            extra = ""
            if t.unexplained:
                extra = " The gaps without a reason are selected below."
                self._highlight = set(t.unexplained)
            if t.changed:
                extra = " Nothing was frozen; the members are shown as they are now.\n"
                extra += _listed(t.changed)
            self._say(f"Not accepted: {t.message}.{extra}", error=True)
        elif t.code is TransitionCode.CLEARED:
            self._say("Reviewed: the flag is cleared; the edition stays accepted and frozen.")
        else:
            self._say("Accepted: the edition is research ready and frozen.")
        self._after(change.changes)

    def _reopened(self, change: StateChange) -> None:
        t = change.transition
        said = "Reopened: it needs review." if not t.refused else t.message
        if t.changed:
            said += f" {counted(len(t.changed), 'member')} changed:\n{_listed(t.changed)}"
        self._say(said, error=t.refused)
        self._after(change.changes)

    def _confirm(self, title: str, text: str, *, default_no: bool = False) -> bool:
        buttons = QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
        default = QMessageBox.StandardButton.No if default_no else QMessageBox.StandardButton.Yes
        answer = QMessageBox.question(self, title, text, buttons, default)
        return answer == QMessageBox.StandardButton.Yes

    def _select_urls(self, urls: set[str]) -> None:
        self.gaps.clearSelection()
        mode = self.gaps.selectionMode()
        self.gaps.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        for r in range(self.gaps.rowCount()):
            item = self.gaps.item(r, 0)
            if item is not None and item.text() in urls:
                self.gaps.selectRow(r)
        self.gaps.setSelectionMode(mode)

    def capture_missing(self) -> None:
        eds, name = self.library.editions, self.name
        self._background(lambda _p, _c: eds.capture_missing(name), self._queued, "queue capture")

    def _queued(self, queued: CaptureQueued) -> None:
        self._after(queued.changes)
        if queued.job_id is None:
            self._say(queued.message, error=True)
            return
        job_id = queued.job_id
        self._say(f"Capturing {counted(queued.urls, 'URL')} as job {job_id}…")
        self._run_job(job_id, f"capture for edition {self.name}",
                      f"Capture job {job_id} finished.")  # fmt: skip

    def export_release(self) -> None:
        chosen = release_output(self, self.library.editions, self.name)
        if chosen is None:
            return
        out, overwrite = chosen
        sign, stamp = self.signing.sign(), self.signing.timestamp()
        job_id = self.library.editions.queue_release(
            self.name, out, overwrite=overwrite, sign=sign, timestamp=stamp
        )
        self._say(f"Writing the release to {out}…")
        self._run_job(job_id, f"release of edition {self.name}",
                      lambda result: release_written(out, result, sign, self.releases),
                      written=lambda result: (out, result, sign))  # fmt: skip

    def _run_job(
        self,
        job_id: int,
        label: str,
        message: str | Callable[[object], str],
        *,
        written: Callable[[object], tuple[Path, object, bool]] | None = None,
    ) -> None:
        """Run a queued job in a child process, as the app runs every job; ``message`` says
        how it went (or makes that out of the job's result); ``written``: the release it
        wrote, which the notice is about."""
        self._running += 1
        self._update_buttons()

        def done(result: object) -> None:
            self._running -= 1
            text = message if isinstance(message, str) else message(result)
            self._say(text, written=written(result) if written is not None else None)
            self._after(Changes(collections=True, jobs=True))

        library = self.library

        def work(progress: Any, cancel: Any) -> object:
            return library.jobs.run(job_id, progress=progress, cancel=cancel)

        self._background(work, done, label, self._job_failed)

    def _job_failed(self, failure: OpFailure) -> None:
        self._running -= 1
        self._failed(failure)

    def _failed(self, failure: OpFailure) -> None:
        self.reload()
        if not failure.cancelled:
            show_error(self, failure, f"working on edition {self.name}")


def _listed(changes: tuple[MemberChange, ...], most: int = 8) -> str:
    lines = [str(c) for c in changes[:most]]
    if len(changes) > most:
        lines.append(f"and {len(changes) - most} more")
    return "\n".join(lines)


def open_edition(tabs: QTabWidget, library: Library, name: str, runner: OpRunner,
                 on_changed: Any, *, job_finished: SignalInstance | None = None,
                 open_capture: Callable[[int], object] | None = None,
                 ) -> EditionView:  # fmt: skip
    """Show edition ``name`` in a tab of ``tabs`` (the open one when there is one);
    ``job_finished`` (job id, status): the window's signal that a job ended;
    ``open_capture``: replays a member the user double-clicks."""
    for i in range(tabs.count()):
        widget = tabs.widget(i)
        if isinstance(widget, EditionView) and widget.name == name:
            widget.reload()
            tabs.setCurrentIndex(i)
            return widget
    view = EditionView(library, name, runner)
    view.changed.connect(on_changed)
    if open_capture is not None:
        view.open_capture.connect(open_capture)
    if job_finished is not None:
        job_finished.connect(view.job_finished)
    index = tabs.addTab(view, f"Edition {name}")
    tabs.setCurrentIndex(index)
    return view
