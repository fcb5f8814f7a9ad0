"""The Changes view: the watched pages, and the latest captures that differ from the
capture before them.

Above, every watch (:meth:`archiver_app.api.jobs.JobsManager.watches`): its pages, schedule
and next capture, with Watch a Page…, Capture Now and Stop Watching. Below, one row per
compared capture (newest first): when, the page, and how much of its text and look
changed. Activating a row asks for the two captures to be compared
(:attr:`ChangesPanel.compareRequested`); the main window opens the Compare view. Both lists
are read on the op runner and refreshed after each watch run and each change of a watch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from archiver_app.compare.changes import ChangeRow, recent_changes
from archiver_app.compare.snapshots import ChangeSummary
from archiver_app.gui.errors import question_box, show_error
from archiver_app.gui.fitting import NoteLine
from archiver_app.gui.ops import BackgroundOp, OpRunner
from archiver_app.gui.tables import RowsModel, list_table
from archiver_app.library import Library
from archiver_app.units import capture_times, counted, share_text
from archiver_app.watch.runner import DueNow, WatchRow
from archiver_app.watch.schedule import describe_schedule

if TYPE_CHECKING:
    from archiver_app.gui.watch_dialog import WatchDialog

HEADERS = ("Page", "What changed", "Captured", "Before", "Text", "Look", "Resources")
#: What each column means, shown over its header.
HEADER_TIPS = (
    "The page's address (its title in the tooltip)",
    "Why the capture is listed: its HTTP status, its title, resources that now answer an"
    " error, else which of text, look and resources differ",
    "When the capture that changed was made",
    "When the capture it is compared with was made",
    "Share of the page's text lines that differ",
    "Share of the screenshot's pixels that differ",
    "Resources (images, scripts, styles …): +added −removed ~changed",
)
WATCH_HEADERS = ("Watched", "Captured again", "Next capture", "Ignored in comparisons")
#: Whether a note is still true of the watches and changes as read again.
NoteHolds = Callable[[list[WatchRow], list[ChangeRow]], bool]


def watch_cells(row: WatchRow) -> tuple[str, str, str, str]:
    """A watch as its row shows it."""
    pages = row.seeds[0] if row.seeds else row.name
    if len(row.seeds) > 1:
        pages += f" (+{len(row.seeds) - 1} more)"
    if row.profile:  # two watches of one page in two profiles differ by it alone
        pages += f" (profile {row.profile})"
    if row.first_capture_due:
        when = "now (first capture)"
    elif row.paused:
        when = "paused"
    else:
        when = f"{row.next_run_at:%Y-%m-%d %H:%M} UTC" if row.next_run_at else "–"
    return pages, describe_schedule(row.schedule), when, ", ".join(row.ignore) or "–"


class WatchesModel(RowsModel[WatchRow]):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(WATCH_HEADERS, parent=parent)

    def cell(self, row: WatchRow, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole:
            return "\n".join((row.name, *row.seeds))
        if role == Qt.ItemDataRole.DisplayRole:
            return watch_cells(row)[column]
        return None


def _share(value: float | None) -> str:
    return "–" if value is None else share_text(value)


def what_changed(s: ChangeSummary) -> str:
    """Why a change is listed, in a few words: the HTTP status and the title first (a
    page now answering 404 shows 0% everywhere else), then the other parts that differ."""
    parts = [s.redirect] if s.redirect else []  # the page moved: first, as on `watch run`
    if s.status_changed:
        parts.append(
            f"HTTP {s.old_status} → {s.new_status}" + (" (an error)" if s.now_error else "")
        )
    if s.title_changed:
        parts.append(f"title “{_flat(s.old_title)}” → “{_flat(s.new_title)}”")
    if s.resources_now_error:
        verb = "answers" if s.resources_now_error == 1 else "answer"
        parts.append(f"{counted(s.resources_now_error, 'resource')} now {verb} an error")
    if s.text_share:
        parts.append("text")
    if s.pixel_share:
        parts.append("look")
    if s.resources_added or s.resources_removed or s.resources_changed > s.resources_now_error:
        parts.append("resources")
    return ", ".join(parts) or "–"


def _flat(title: str | None) -> str:
    return " ".join((title or "").split()) or "no title"


class ChangesModel(RowsModel[ChangeRow]):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(HEADERS, HEADER_TIPS, parent)

    def cell(self, row: ChangeRow, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole:
            retitled = row.summary.title_changed
            was = f"\n(title before: {row.summary.old_title or 'none'})" if retitled else ""
            return f"{row.title}\n{row.url}{was}"
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        s = row.summary
        if column == 0:  # the address: error pages share titles ("Server error")
            return row.url
        if column == 1:
            return what_changed(s)
        if column in (2, 3):  # to the second where the two share a minute
            if row.previous_at is None:
                return f"{row.captured_at:%Y-%m-%d %H:%M}" if column == 2 else "–"
            return capture_times([row.captured_at, row.previous_at])[column - 2]
        if column == 4:
            return _share(s.text_share)
        if column == 5:
            return _share(s.pixel_share)
        return f"+{s.resources_added} −{s.resources_removed} ~{s.resources_changed}"


class ChangesPanel(QWidget):
    """The watched pages, and recent changes across the library; activate a change to
    compare it with the capture before it."""

    compareRequested = Signal(int, int)  # older capture id, newer capture id
    watchRequested = Signal()  # Watch a Page…: the window opens the capture dialog
    captureNowRequested = Signal()  # watches made due: the window's scheduler runs them
    watchesChanged = Signal()

    def __init__(self, library: Library, runner: OpRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("changes_panel")
        self.library, self.runner = library, runner
        self.watches = WatchesModel(self)
        self.watch_table = list_table(self, self.watches, "watches_table")
        self.watch_table.setMaximumHeight(150)
        self.watch_table.activated.connect(lambda _index: self.change_selected())
        self.watch_table.selectionModel().selectionChanged.connect(self._selection_changed)
        self.no_watches = QLabel(
            "Nothing is watched yet. Watch a Page… captures a page now and again on a"
            " schedule, while the app is open (or from a system timer: `archiver watch run`,"
            " docs/watch.md), and compares each new capture with the one before. You can also"
            " watch the selected captures' pages with Capture > Watch Pages…",
            self,
        )
        self.no_watches.setWordWrap(True)
        self.model = ChangesModel(self)
        self.table = list_table(self, self.model, "changes_table")
        self.table.activated.connect(self._activated)
        self.empty = QLabel(self)
        self.empty.setWordWrap(True)
        self.hint = QLabel(
            "Double-click a change (or select it and press Return) to compare the two"
            " captures side by side.",
            self,
        )
        self.hint.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._watch_bar())
        # whether what the note says is still true of the lists as read again (None: it is)
        self._note_holds: NoteHolds | None = None
        # Its room is kept while it is empty: a note coming after Resume pushed the rows
        # down under the pointer, and the next click paused another watch. A long note is
        # cut with "…" (whole in its tooltip); it never widens the window.
        self.note = NoteLine(self)
        self.note.setObjectName("watch_note")
        self.note.hide()
        layout.addWidget(self.note)
        layout.addWidget(self.no_watches)
        layout.addWidget(self.watch_table)
        layout.addWidget(self._heading("Changes"))
        layout.addWidget(self.empty)
        layout.addWidget(self.hint)
        layout.addWidget(self.table, 1)
        for label in (self.no_watches, self.empty, self.hint):
            label.setContentsMargins(6, 4, 6, 4)  # the panel has no margins of its own
        self.stop_box: QMessageBox | None = None
        self.watch_dialog: WatchDialog | None = None
        self.loaded = False
        self.refresh()

    def say(self, text: str, holds: NoteHolds | None = None) -> None:
        """A line under the watched pages' buttons (empty: none); ``holds`` tells whether
        it is still true of the lists read again (a watch paused from a terminal after
        Resume here): once it is not, the line goes."""
        self._note_holds = holds if text else None
        self.note.setText(text)
        self.note.setVisible(bool(text))

    def _heading(self, text: str) -> QLabel:
        label = QLabel(f"<b>{text}</b>", self)
        label.setContentsMargins(6, 8, 6, 0)
        return label

    def _watch_bar(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        bar.addWidget(self._heading("Watched pages"), 1)
        self.watch_button = QPushButton("Watch a Page…", self)
        self.watch_button.clicked.connect(self.watchRequested)
        self.capture_now = QPushButton("Capture Now", self)
        self.capture_now.setToolTip(
            "Capture the selected watch's pages now and compare (a paused watch too, once:"
            " it stays paused)"
        )
        self.capture_now.clicked.connect(self.capture_selected_now)
        self.change_button = QPushButton("Change…", self)
        self.change_button.setToolTip("The selected watch's schedule and ignored text")
        self.change_button.clicked.connect(self.change_selected)
        self.pause_button = QPushButton("Pause", self)
        self.pause_button.setToolTip(
            "No capture of the selected watch until it is resumed (Capture Now still captures it)"
        )
        self.pause_button.clicked.connect(self.pause_selected)
        self.stop_button = QPushButton("Stop Watching…", self)
        self.stop_button.setToolTip("The selected watch ends; its captures are kept")
        self.stop_button.clicked.connect(self.ask_stop)
        buttons = (self.watch_button, self.capture_now, self.change_button, self.pause_button)
        for button in (*buttons, self.stop_button):
            bar.addWidget(button)
        return bar

    def refresh(self) -> None:
        library = self.library

        def read() -> tuple[list[WatchRow], list[ChangeRow]]:
            return library.jobs.watches(), recent_changes(library)

        BackgroundOp(
            self.runner,
            lambda _p, _c: library.outages.attempt("reading the watches and changes", read),
            label="changes",
            blocks_quit=False,
        ).success(self._show).failure(lambda _f: None).run_in_background()  # (said by it)

    def _show(self, lists: tuple[list[WatchRow], list[ChangeRow]]) -> None:
        watches, rows = lists
        kept = self.selected_watch()
        self.watches.set_rows(watches)
        for i, w in enumerate(watches):  # the selection outlives a refresh
            if kept is not None and w.job_id == kept.job_id:
                self.watch_table.selectRow(i)
        self.no_watches.setVisible(not watches)
        self.watch_table.setVisible(bool(watches))
        self._selection_changed()
        self.empty.setText(
            "No changes yet: every capture of a watched page so far is the same as the one before."
            if watches
            else "No changes yet."
        )
        self.model.set_rows(rows)
        self.empty.setVisible(not rows)
        self.hint.setVisible(bool(rows))
        self.table.setVisible(bool(rows))
        self.loaded = True
        if self._note_holds is not None and not self._note_holds(watches, rows):
            self.say("")  # no longer true: a watch changed elsewhere, a change deleted

    def _activated(self, index: QModelIndex) -> None:
        row = self.model.rows[index.row()]
        if row.previous_id is not None:
            self.say("")
            self.compareRequested.emit(row.previous_id, row.snapshot_id)
        else:  # its Before is "–": say why nothing opens, while a row listed says so
            told = row.snapshot_id
            self.say(
                "The earlier capture this one was compared with has been deleted since: to"
                " compare it with the capture now before it, select it in the Library tab and"
                " choose Capture > Compare Captures.",
                lambda _w, rows: any(r.snapshot_id == told and r.previous_id is None for r in rows),
            )

    # ------------------------------------------------------------------ capture now

    def capture_selected_now(self) -> BackgroundOp[DueNow] | None:
        """Make the selected watch due, then ask for a run (with none selected the button
        is disabled). A paused watch is captured once and stays paused, which the note
        says; one stopped elsewhere meanwhile is said to be so (and the lists read again);
        "being captured already" only of a watch whose capture is queued or runs."""
        watch = self.selected_watch()
        if watch is None:
            self.say("Select a watched page first.")
            return None
        ids, jobs = [watch.job_id], self.library.jobs

        def made_due(due: DueNow) -> None:
            def names(job_ids: tuple[int, ...]) -> str:
                rows = self.watches.rows
                return ", ".join(watch_cells(w)[0] for w in rows if w.job_id in job_ids)

            said = []
            if due.not_watches:
                said.append(f"No longer watched (stopped elsewhere): {names(due.not_watches)}.")
            if due.busy or due.queued:
                said.append(f"Being captured already: {names(due.busy + due.queued)}.")
            paused = watch.paused and bool(due.made)  # (then nothing else is said)
            if paused:
                said.append(f"{names(due.made)} is captured now, once: it stays paused.")

            def still_paused(rows: list[WatchRow], _changes: object) -> bool:
                return any(w.job_id == watch.job_id and w.paused for w in rows)

            self.say(" ".join(said), still_paused if paused else None)
            if due.not_watches:
                self.refresh()
            if due.made:
                self.captureNowRequested.emit()

        return (
            BackgroundOp(self.runner, lambda _p, _c: jobs.watch_now(ids), label="capture now")
            .success(made_due)
            .failure(lambda failure: show_error(self, failure, "capturing the watched pages"))
            .run_in_background()
        )

    # ------------------------------------------------------------------ change

    def change_selected(self) -> WatchDialog | None:
        """The selected watch's schedule and ignored text, in a dialog; saved on Save."""
        from archiver_app.gui.watch_dialog import WatchDialog

        watch = self.selected_watch()
        if watch is None:
            self.say("Select a watched page first.")
            return None
        self.say("")
        dialog = WatchDialog(watch, self)
        dialog.accepted.connect(lambda: self._save(watch.job_id, dialog))
        self.watch_dialog = dialog
        dialog.open()
        return dialog

    def _save(self, job_id: int, dialog: WatchDialog) -> BackgroundOp[None]:
        jobs, schedule, ignore = self.library.jobs, dialog.schedule_value, dialog.ignore

        def done(_: None) -> None:
            self.watchesChanged.emit()
            self.refresh()

        return (
            BackgroundOp(
                self.runner,
                lambda _p, _c: jobs.set_schedule(job_id, schedule, ignore=ignore),
                label="changing a watch",
            )
            .success(done)
            .failure(lambda failure: show_error(self, failure, "changing the watch"))
            .run_in_background()
        )

    # ------------------------------------------------------------------ pause

    def _selection_changed(self, *_args: object) -> None:
        watch = self.selected_watch()
        for button in (self.capture_now, self.change_button, self.pause_button, self.stop_button):
            button.setEnabled(watch is not None)
        self.pause_button.setText("Resume" if watch is not None and watch.paused else "Pause")

    def pause_selected(self) -> BackgroundOp[None] | None:
        """Pause the selected watch, or resume it if it is paused."""
        watch = self.selected_watch()
        if watch is None:
            self.say("Select a watched page first.")
            return None
        jobs, pause, name = self.library.jobs, not watch.paused, watch_cells(watch)[0]

        def done(_: None) -> None:
            self.say(
                f"{name} is paused: it is not captured again until you resume it."
                if pause
                else f"{name} is watched again from its next capture.",
                # paused or resumed from a terminal since, or stopped: the line would lie
                lambda rows, _c: any(w.job_id == watch.job_id and w.paused == pause for w in rows),
            )
            self.watchesChanged.emit()
            self.refresh()

        def work(_progress: object, _cancel: object) -> None:
            jobs.pause_watching(watch.job_id, pause)

        return (
            BackgroundOp(
                self.runner, work, label="pausing a watch" if pause else "resuming a watch"
            )
            .success(done)
            .failure(lambda failure: show_error(self, failure, "pausing the watch"))
            .run_in_background()
        )

    # ------------------------------------------------------------------ stop watching

    def selected_watch(self) -> WatchRow | None:
        rows = self.watch_table.selectionModel().selectedRows()
        return self.watches.rows[rows[0].row()] if rows else None

    def ask_stop(self) -> None:
        """Ask before the selected watch ends (*Cancel* is the default); its captures stay."""
        watch = self.selected_watch()
        if watch is None:
            self.say("Select a watched page first.")
            return
        self.say("")
        box = question_box(
            self,
            QMessageBox.Icon.Question,
            "Stop watching",
            f"Stop watching {watch_cells(watch)[0]}? It is no longer captured again; "
            "its captures and the changes found so far are kept.",
            "Stop Watching",
        )
        yes = QMessageBox.StandardButton.Yes
        box.finished.connect(lambda answer: answer == yes and self.stop(watch.job_id))
        self.stop_box = box
        box.open()

    def stop(self, job_id: int) -> BackgroundOp[None]:
        jobs = self.library.jobs

        def done(_: None) -> None:
            self.watchesChanged.emit()
            self.refresh()

        return (
            BackgroundOp(
                self.runner, lambda _p, _c: jobs.set_schedule(job_id, None), label="stop watching"
            )
            .success(done)
            .failure(lambda failure: show_error(self, failure, "stopping the watch"))
            .run_in_background()
        )
