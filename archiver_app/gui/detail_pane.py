"""The detail pane: one capture's screenshot, facts, tags, notes, files, timeline and copies.

Loading runs through :class:`~archiver_app.gui.ops.BackgroundOp` (a handful of indexed
queries, but a drive's copies table can be large); edits go through ``lib.tags`` and
``lib.snapshots`` and emit :attr:`DetailPane.edited`, from which the window refreshes what
changed (these details among them).

Notes are saved when the user leaves them (the field, the capture, the window) or presses
*Save notes*, never by a reload: reloading the capture shown keeps what is being typed. One
save runs at a time, and a (capture, text) pair is handed to ``set_notes`` once unless the
user asks again; a save's answer cannot start another save of the same text.

Another window or machine may edit the same capture meanwhile. Each save carries the note
the text was typed over (``expected``): a note changed elsewhere since is not written over
but answered with a question (:mod:`.notes_conflict`: keep mine, take theirs, keep both).
Tags are saved as what was added and removed against the tags shown, so tags given
elsewhere meanwhile stay; the field then shows the tags as stored.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import NamedTuple

from PySide6.QtCore import QEvent, QObject, QStringListModel, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QCompleter,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from archiver_app.api import Changes
from archiver_app.api.labels import parse_tags
from archiver_app.api.profiles import privacy_note
from archiver_app.api.snapshots import NotesChangedElsewhere, SnapshotDetail, both_notes
from archiver_app.gui import notes_conflict
from archiver_app.gui.errors import show_error
from archiver_app.gui.notes_conflict import NotesChoice
from archiver_app.gui.ops import BackgroundOp, OpFailure, OpRunner
from archiver_app.gui.snapshot_model import human_size
from archiver_app.gui.thumbnails import ThumbnailCache
from archiver_app.library import Library
from archiver_app.units import capture_times

COPY_SYMBOL = {
    "present": "✔",
    "missing": "✖",
    "corrupted": "⚠",
    "ongoing": "…",
    "offloaded": "↗",
    "retired": "–",
}

log = logging.getLogger(__name__)


def breakable(url: str) -> str:
    """``url`` with zero-width spaces after separators, so a narrow pane can wrap it."""
    out = []
    for ch in url:
        out.append(ch)
        if ch in "/?&=-._":
            out.append("\u200b")
    return "".join(out)


#: What the Size row counts, and why one capture is smaller imported than captured.
SIZE_TIP = (
    "A capture's size is its files: its WARC, and beside it the screenshot, DOM and text it "
    "also keeps as records in the WARC, and its index.json. An imported page's size is its "
    "records in the imported WARC (its screenshot, DOM and text among them), so the same "
    "capture is smaller imported."
)


class NoteSave(NamedTuple):
    """One save of a capture's notes: ``text`` typed over the stored note ``expected``."""

    sid: int
    text: str
    expected: str


def _folded(names: list[str]) -> set[str]:
    return {n.casefold() for n in names}


class TagCompleter(QCompleter):
    """Completes the tag being typed after the last comma."""

    def splitPath(self, path: str) -> list[str]:
        return [path.rsplit(",", maxsplit=1)[-1].strip()]

    def pathFromIndex(self, index: object) -> str:
        chosen = str(super().pathFromIndex(index))  # type: ignore[arg-type]
        widget = self.widget()
        typed = widget.text() if isinstance(widget, QLineEdit) else ""
        head = typed.rsplit(",", 1)[0] + ", " if "," in typed else ""
        return head + chosen


class DetailPane(QScrollArea):
    """Shows :attr:`detail`; emits :attr:`open_capture` (id) and :attr:`edited` (``Changes``)."""

    open_capture = Signal(int)
    edited = Signal(object)  # Changes
    loaded = Signal(int)

    # Long: a Qt form laid out top to bottom, one widget after another, reads best whole.
    def __init__(
        self,
        library: Library,
        runner: OpRunner,
        thumbnails: ThumbnailCache,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("detail_pane")
        self.library, self.runner, self.thumbnails = library, runner, thumbnails
        self.detail: SnapshotDetail | None = None
        self.wanted: int | None = None
        self._loads = 0  # show_snapshot calls: only the newest one's answer is shown
        self._notes_base = ""  # the stored note the field's text was typed over
        self._tags_base: list[str] = []  # the stored tags the field's text was typed over
        self._notes_sent: NoteSave | None = None  # the last save handed to set_notes
        self._notes_outcome = ""  # of it: "running", "saved", "refused" or "conflict"
        self._notes_next: NoteSave | None = None  # asked for while a save ran
        self._conflict: tuple[NoteSave, str] | None = None  # asked about: (mine, stored)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget(self)
        col = QVBoxLayout(body)
        self.placeholder = QLabel("Select a capture to see its details.", body)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        col.addWidget(self.placeholder)

        self.content = QWidget(body)
        inner = QVBoxLayout(self.content)
        inner.setContentsMargins(0, 0, 0, 0)
        self.screenshot = QLabel(self.content)
        self.screenshot.setObjectName("screenshot")
        self.screenshot.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.screenshot.setMinimumHeight(120)
        self.screenshot.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.screenshot.setFrameShape(QFrame.Shape.StyledPanel)
        inner.addWidget(self.screenshot)
        self.title = QLabel(self.content)
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        inner.addWidget(self.title)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.url = self._value()
        self.when = self._value()
        self.status = self._value()
        self.size_label = self._value()
        self.size_label.setToolTip(SIZE_TIP)
        self.fidelity = self._value()
        self.collection = self._value()
        self.authors = self._value()  # these two only for a page that says (its citation's)
        self.authors.setObjectName("authors")
        self.published = self._value()
        self.published.setObjectName("published")
        form.addRow("Address", self.url)
        form.addRow("By", self.authors)
        form.addRow("Published", self.published)
        form.addRow("Captured", self.when)
        form.addRow("Status", self.status)
        form.addRow("Size", self.size_label)
        form.addRow("Fidelity", self.fidelity)
        form.addRow("Collection", self.collection)
        self.integrity = self._value()  # lib.integrity: where the last verify left it
        self.integrity.setObjectName("integrity")
        form.addRow("Integrity", self.integrity)
        self.watched = self._value()  # shown only for an address that is watched
        self.watched.setObjectName("watched")
        form.addRow("Watched", self.watched)
        self.facts = form
        self.tags = QLineEdit(self.content)
        self.tags.setObjectName("tags")
        self.tags.setPlaceholderText("tags, separated by commas")
        self._tag_names = QStringListModel(self)
        completer = TagCompleter(self._tag_names, self.tags)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.tags.setCompleter(completer)
        self.tags.editingFinished.connect(self.save_tags)
        form.addRow("Tags", self.tags)
        inner.addLayout(form)

        inner.addWidget(self._heading("Notes"))
        self.notes = QPlainTextEdit(self.content)
        self.notes.setObjectName("notes")
        self.notes.setPlaceholderText("Your notes about this capture")
        self.notes.setMaximumHeight(90)
        # Tab moves on, as from every field: typed into the notes it kept the keyboard there
        self.notes.setTabChangesFocus(True)
        self.notes.installEventFilter(self)  # notes are saved when the editor loses focus
        inner.addWidget(self.notes)
        save_row = QHBoxLayout()
        save_row.addStretch(1)
        self.save_notes_button = QPushButton("Save notes", self.content)
        self.save_notes_button.clicked.connect(self.save_notes)
        save_row.addWidget(self.save_notes_button)
        inner.addLayout(save_row)

        inner.addWidget(self._heading("Copies"))
        self.copies = QLabel(self.content)
        self.copies.setObjectName("copies")
        self.copies.setTextFormat(Qt.TextFormat.RichText)
        self.copies.setWordWrap(True)
        inner.addWidget(self.copies)
        inner.addWidget(self._heading("Other captures of this address"))
        self.others = QListWidget(self.content)
        self.others.setObjectName("other_captures")
        self.others.setMaximumHeight(110)
        self.others.itemActivated.connect(self._other_activated)
        inner.addWidget(self.others)
        inner.addWidget(self._heading("Files"))
        self.files = QListWidget(self.content)
        self.files.setObjectName("files")
        self.files.setMaximumHeight(110)
        inner.addWidget(self.files)
        inner.addStretch(1)
        col.addWidget(self.content)
        self.content.hide()
        self.setWidget(body)
        thumbnails.ready.connect(self._thumbnail_ready)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        body = self.widget()
        if body is not None:  # never wider than the pane: long text wraps instead
            body.setMaximumWidth(self.viewport().width())

    def _value(self) -> QLabel:
        label = QLabel(self.content)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    def _heading(self, text: str) -> QLabel:
        label = QLabel(text, self.content)
        font = label.font()
        font.setBold(True)
        label.setFont(font)
        return label

    # ------------------------------------------------------------------ loading

    def show_snapshot(self, snapshot_id: int | None) -> None:
        """Load ``snapshot_id`` in the background (None clears the pane). Leaving a capture
        saves the notes typed for it; reloading the one shown keeps them in the field."""
        if self.detail is None or self.detail.id != snapshot_id:
            self.flush_notes(leaving=True)
        self.wanted = snapshot_id
        if snapshot_id is None:
            self.detail = None
            self.content.hide()
            self.placeholder.show()
            return
        library = self.library
        self._loads += 1  # an earlier load of the same capture may answer later, with less
        load = self._loads

        def work(_progress: object, _cancel: object) -> tuple[object, list[str], object]:
            state = library.integrity.snapshot_state(snapshot_id)
            return library.snapshots.detail(snapshot_id), library.tags.names(), state

        BackgroundOp(self.runner, work, label="details", blocks_quit=False).success(
            lambda result: self._loaded(snapshot_id, result) if load == self._loads else None
        ).failure(
            lambda f: show_error(self, f, "loading the capture's details")
        ).run_in_background()

    def _loaded(self, snapshot_id: int, result: tuple[object, list[str], object]) -> None:
        if snapshot_id != self.wanted:
            return  # the user moved on
        detail, names, integrity = result
        if not isinstance(detail, SnapshotDetail):
            self.show_snapshot(None)
            return
        self._tag_names.setStringList(names)
        shown = self.detail if self.detail is not None and self.detail.id == detail.id else None
        # reloaded (F5, an edit's refresh): what is being typed stays, to be saved on leaving
        # against what it was typed over (the note and tags stored then, not now)
        typing_notes = shown is not None and self.notes.toPlainText() != self._notes_base
        typing_tags = shown is not None and (
            _folded(parse_tags(self.tags.text())) != _folded(self._tags_base)
        )
        self.detail = detail
        self.placeholder.hide()
        self.content.show()
        self.title.setText(detail.title or detail.shown_url)
        self.url.setText(breakable(detail.shown_url))
        self.url.setToolTip(detail.shown_url)
        self.when.setText(f"{detail.captured_at:%Y-%m-%d %H:%M:%S} UTC")
        for row, text in ((self.authors, detail.authors), (self.published, detail.published)):
            row.setText(text)
            self.facts.setRowVisible(row, bool(text))
        code = f" (HTTP {detail.http_status})" if detail.http_status else ""
        self.status.setText(f"{detail.state}{code}  {detail.mime}".strip())
        if detail.profile:  # a logged-in capture: say so before anyone shares it
            self.status.setText(f"{self.status.text()}\n{privacy_note(detail.profile)}")
        note = f" ({detail.size_note})" if detail.size_note else ""
        self.size_label.setText(f"{human_size(detail.size_bytes)}{note}")
        reason = f" — {detail.fidelity_reason}" if detail.fidelity_reason else ""
        if str(detail.state) == "failed" and reason:  # why it failed, where its state is
            self.status.setText(f"failed{reason}")
            reason = ""
        self.fidelity.setText(f"{detail.fidelity or 'unknown'}{reason}")
        self.collection.setText(detail.collection)
        self.integrity.setText(getattr(integrity, "message", ""))
        self.watched.setText(detail.watched or "")
        self.facts.setRowVisible(self.watched, detail.watched is not None)
        if not typing_tags:
            self.tags.setText(", ".join(detail.tags))
            self._tags_base = list(detail.tags)
        if not typing_notes:
            self._notes_base = detail.notes
            if self.notes.toPlainText() != detail.notes:  # (the same: the cursor stays put)
                self.notes.setPlainText(detail.notes)
        self._show_copies(detail)
        self.others.clear()
        # to the second where two of them (this capture among them) share a minute
        times = capture_times([detail.captured_at] + [o[1] for o in detail.other_captures])
        for (oid, _, state), label in zip(detail.other_captures, times[1:], strict=True):
            item = QListWidgetItem(f"{label}  {state}")
            item.setData(Qt.ItemDataRole.UserRole, oid)
            self.others.addItem(item)
        if not detail.other_captures:
            self.others.addItem("No other captures")
        self.files.clear()
        for kind, path, size in detail.files:
            self.files.addItem(f"{kind}: {path.rsplit('/', 1)[-1]} ({human_size(size)})")
        if not detail.files:
            self.files.addItem("No files recorded")
        self._show_screenshot()
        self.loaded.emit(detail.id)

    def _show_copies(self, detail: SnapshotDetail) -> None:
        if not detail.copies:
            self.copies.setText("No files to copy yet.")
            return
        n = detail.whole_copies
        lines = [f"<b>{n} {'copy' if n == 1 else 'copies'}</b>"]
        for c in detail.copies:
            verified = (
                f", verified {c.verified_at:%Y-%m-%d}"
                if c.verified_at and c.state == "present"
                else ""
            )
            lines.append(f"{COPY_SYMBOL.get(c.state, '?')} {c.where}: {c.state}{verified}")
        self.copies.setText("<br>".join(lines))

    def _show_screenshot(self) -> None:
        if self.detail is None:
            return
        pixmap = self.thumbnails.large(self.detail.id, self.detail.folder)
        if pixmap is None:
            loading = self.detail.folder and not self.thumbnails.has(self.detail.id, large=True)
            self.screenshot.clear()
            self.screenshot.setText("Loading screenshot…" if loading else "No screenshot")
        else:
            width = max(120, self.viewport().width() - 24)
            self.screenshot.setPixmap(
                pixmap.scaledToWidth(
                    min(width, pixmap.width()), Qt.TransformationMode.SmoothTransformation
                )
            )

    def _thumbnail_ready(self, snapshot_id: int) -> None:
        if self.detail is not None and self.detail.id == snapshot_id:
            self._show_screenshot()

    def _other_activated(self, item: QListWidgetItem) -> None:
        oid = item.data(Qt.ItemDataRole.UserRole)
        if isinstance(oid, int):
            self.open_capture.emit(oid)

    # ------------------------------------------------------------------ edits

    def save_tags(self) -> None:
        """Save the tags added to and removed from those shown; the others the capture has
        now (given elsewhere meanwhile) stay, and the field then shows them all."""
        if self.detail is None:
            return
        names, shown = parse_tags(self.tags.text()), self._tags_base
        added = [n for n in names if n.casefold() not in _folded(shown)]
        removed = [n for n in shown if n.casefold() not in _folded(names)]
        if not added and not removed:
            return
        sid = self.detail.id
        library = self.library

        def work(_p: object, _c: object) -> Changes:
            return library.tags.change([sid], add=added, remove=removed)

        def saved(changes: Changes) -> None:
            if self.detail is not None and self.detail.id == sid:
                self._tags_base = names  # not typing: the reload shows the tags stored
            self._after_edit(changes)

        tags = ", ".join(names) or "none"
        BackgroundOp(self.runner, work, label="saving tags").success(saved).failure(
            lambda failure: self._edit_failed(failure, f"saving the tags of #{sid} ({tags})")
        ).run_in_background()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.notes and event.type() == QEvent.Type.FocusOut:
            self.flush_notes()
        return super().eventFilter(watched, event)

    def flush_notes(self, *, now: bool = False, leaving: bool = False) -> None:
        """Save the notes if they differ from the capture's (typed, not yet saved) and were
        not handed to a save already. A refused text is tried again only on ``leaving``
        the capture (else its error box, taking the focus, would ask again) or ``now``:
        here and at once (the window is closing: no background work will finish)."""
        if now and self._conflict is not None:  # closing, the question open: both kept
            (mine, stored), self._conflict = self._conflict, None
            self._notes_outcome = "saved"
            self._save_notes_now(mine._replace(text=both_notes(stored, mine.text)))
            if self._shown(mine.sid) is not None:
                return  # the field holds what was asked about
        if self.detail is None:
            return
        key = NoteSave(self.detail.id, self.notes.toPlainText(), self._notes_base)
        if key.text == key.expected:
            return
        again = self._notes_outcome == "refused" and (leaving or now)
        if key == self._notes_sent and not again:
            return  # saved or being saved; or refused, and said already
        if now:
            self._save_notes_now(key)
        else:
            self._save_notes(key, asked=leaving)

    def _save_notes_now(self, key: NoteSave) -> None:
        """Closing: save ``key`` here; over a note changed elsewhere, with it (no one is
        left to ask, and neither text may be lost)."""
        notes = self.library.snapshots
        try:
            try:
                notes.set_notes(key.sid, key.text, expected=key.expected)
            except NotesChangedElsewhere as changed:
                both = both_notes(changed.stored, key.text)
                notes.set_notes(key.sid, both, expected=changed.stored)
        except Exception:  # closing: log it, the window must still close
            log.exception("could not save the notes of capture %s", key.sid)

    def save_notes(self) -> None:
        """*Save notes*: save the text in the field (again, if its last save was refused)."""
        if self.detail is not None and self.notes.toPlainText() != self._notes_base:
            key = NoteSave(self.detail.id, self.notes.toPlainText(), self._notes_base)
            self._save_notes(key, asked=True)

    def _save_notes(self, key: NoteSave, *, asked: bool) -> None:
        """Hand ``key`` to ``set_notes``: after the save running (or the question about
        it), if one runs (two at once could land in either order); never twice, unless
        ``asked`` again after a refusal."""
        if self._notes_outcome in ("running", "conflict"):
            self._notes_next = key if key != self._notes_sent else None
            return
        if key == self._notes_sent and not (asked and self._notes_outcome == "refused"):
            return
        self._send_notes(key)

    def _send_notes(self, key: NoteSave) -> None:
        self._notes_sent, self._notes_outcome = key, "running"
        library = self.library

        def work(_p: object, _c: object) -> Changes:
            return library.snapshots.set_notes(key.sid, key.text, expected=key.expected)

        BackgroundOp(self.runner, work, label="saving notes").success(
            lambda changes: self._notes_done(key, changes)
        ).failure(lambda failure: self._notes_done(key, failure)).run_in_background()

    def _notes_done(self, key: NoteSave, outcome: Changes | OpFailure) -> None:
        """A save answered: the capture's notes are now its text (no second save of it);
        or the note was changed elsewhere, and the user is asked what to keep; or the
        refusal is said and the text stays in the field to copy or save again."""
        waiting, self._notes_next = self._notes_next, None
        if isinstance(outcome, Changes):
            self._notes_outcome = "saved"
            if (shown := self._shown(key.sid)) is not None:
                self.detail = replace(shown, notes=key.text)
                self._notes_base = key.text
            if waiting is not None and (waiting.sid, waiting.expected) == (key.sid, key.expected):
                waiting = waiting._replace(expected=key.text)  # typed on over this save
            self._after_edit(outcome)
        elif isinstance(outcome.exception, NotesChangedElsewhere):
            self._notes_outcome = "conflict"
            if waiting is not None and waiting.sid == key.sid:
                key, waiting = key._replace(text=waiting.text), None  # the newer text
            self._notes_next = waiting
            self._ask_notes_conflict(key, outcome.exception.stored)
            return
        else:
            self._notes_outcome = "refused"
            self._edit_failed(outcome, f"saving the notes of #{key.sid}")
        if waiting is not None:
            self._save_notes(waiting, asked=False)

    def _shown(self, sid: int) -> SnapshotDetail | None:
        """The details of capture ``sid`` if the pane shows them."""
        return self.detail if self.detail is not None and self.detail.id == sid else None

    def _ask_notes_conflict(self, key: NoteSave, stored: str) -> None:
        """Ask what to keep of ``key``'s text and the note ``stored`` elsewhere meanwhile."""
        shown = self._shown(key.sid)
        typed = self.notes.toPlainText()
        if shown is not None and typed != self._notes_base:  # typed on since the save
            key = key._replace(text=typed)
        title = shown.title if shown is not None else ""
        capture = f"capture #{key.sid}" + (f" ({title})" if title else "")
        self._conflict = (key._replace(expected=stored), stored)
        notes_conflict.ask_notes_conflict(
            self, capture, stored, key.text, lambda c: self._conflict_answered(key, stored, c)
        )

    def _conflict_answered(self, key: NoteSave, stored: str, choice: NotesChoice) -> None:
        """Act on the answer: write mine or both over ``stored`` (asked again if it changed
        once more), or show ``stored`` in the field and write nothing."""
        if self._conflict is None:
            return  # answered already, at closing
        self._conflict = None
        shown = self._shown(key.sid)
        if choice is NotesChoice.TAKE_STORED:
            self._notes_outcome = "saved"
            if shown is not None:
                self.detail = replace(shown, notes=stored)
                self._notes_base = stored
                self.notes.setPlainText(stored)
            waiting, self._notes_next = self._notes_next, None
            if waiting is not None:
                self._save_notes(waiting, asked=False)
            return
        text = key.text if choice is NotesChoice.KEEP_MINE else both_notes(stored, key.text)
        if shown is not None:
            self._notes_base = stored  # typed over the stored note now
            if self.notes.toPlainText() != text:
                self.notes.setPlainText(text)
        self._send_notes(NoteSave(key.sid, text, stored))

    def _after_edit(self, changes: Changes) -> None:
        self.edited.emit(changes)  # the window refreshes what changed, these details too

    def _edit_failed(self, failure: OpFailure, doing: str) -> None:
        show_error(self, failure, doing)
