"""The captures table's model: a million rows without loading a million rows.

How it stays fluid:

* The ordered list of matching ids is streamed by a worker thread (``lib.table``'s
  :class:`~archiver_app.api.table.TableReader`: one query read in chunks on a connection
  of the thread's own) into an ``array('q')``: the first chunk is small so
  the table paints at once, later chunks are appended with ``beginInsertRows`` (cheap:
  the view has uniform row heights). A new query bumps the *generation*; chunks of an older
  generation are dropped, and its cancel token stops the reader.
* ``data()`` only touches the rows on screen: the page (:data:`PAGE` rows) holding a row is
  fetched by primary key on first paint (a few hundred microseconds), kept in a small LRU.
* Thumbnails come from :class:`~archiver_app.gui.thumbnails.ThumbnailCache` (decoded off
  the GUI thread); the row repaints when its image is ready.

Threading contract: all public methods run on the GUI thread; the worker only reads the
database and hands chunks back through a queued signal.
"""

from __future__ import annotations

import contextlib
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QModelRoleData,
    QModelRoleDataSpan,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QStyle

from archiver_app.api.profiles import privacy_note
from archiver_app.api.table import (
    RowData,
    SnapshotQuery,
    SortKey,
    TableReader,
    fetch_rows_with,
)
from archiver_app.gui.ops import BackgroundOp, OpRunner
from archiver_app.gui.thumbnails import ThumbnailCache
from archiver_app.library import Library
from archiver_app.outages import OutageKind
from archiver_app.tasks import CancelToken
from archiver_app.units import human_bytes

#: Rows fetched together for display.
PAGE = 128
READING_ROWS = "reading the table's rows"
#: Pages of row data kept in memory.
CACHED_PAGES = 64
#: Ids handed to the GUI thread in the first chunk (paints at once) and in later chunks.
FIRST_CHUNK = 512
CHUNK = 262_144
#: Seconds a search's quick window stays before the complete result is collected.
FULL_RESULT_DELAY = 0.3

#: Roles as plain ints: ``data()`` receives ints, and comparing them with the enum
#: members goes through Python's enum machinery, for every cell of every paint.
DISPLAY = int(Qt.ItemDataRole.DisplayRole)
TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
DECORATION = int(Qt.ItemDataRole.DecorationRole)
ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
USER = int(Qt.ItemDataRole.UserRole)
ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

SnapshotIdRole = Qt.ItemDataRole.UserRole + 1
SnippetRole = Qt.ItemDataRole.UserRole + 2
RowDataRole = Qt.ItemDataRole.UserRole + 3

COLUMNS: list[tuple[str, SortKey | None]] = [
    ("Captured", SortKey.TIME),
    ("Title", SortKey.TITLE),
    ("Domain", SortKey.DOMAIN),
    ("Size", SortKey.SIZE),
    ("Status", SortKey.STATUS),
    ("Match", None),
]
COL_TIME, COL_TITLE, COL_DOMAIN, COL_SIZE, COL_STATUS, COL_MATCH = range(len(COLUMNS))

Index = QModelIndex | QPersistentModelIndex


def answer_roles(
    data: Callable[[Index, int], Any],
    index: Index,
    roles: QModelRoleDataSpan | QModelRoleData,
) -> None:
    """``multiData``: every role a delegate asks for one cell, in one call from Qt.

    A view paints a cell with seven roles (text, icon, font, colours, alignment …).
    Answered one by one through ``data()``, that is seven calls from C++ into Python per
    cell, and each must take the GIL back from whatever worker thread holds it: with a
    worker busy in Python, a repaint of the table waited hundreds of milliseconds. Models
    shown in big or often repainted views answer through this instead (and keep Qt's own
    ``flags()`` rather than one more call per cell).
    """
    span: Any = [roles] if isinstance(roles, QModelRoleData) else roles
    for i in range(len(span)):  # the span is indexable, not iterable, in PySide6
        slot = span[i]
        value = data(index, slot.role())
        if value is None:
            slot.clearData()
        else:
            slot.setData(value)


def human_size(n: int) -> str:
    """A size as the CLI prints it (decimal units: 1 KB is 1,000 bytes)."""
    return human_bytes(n)


class _ChunkRelay(QObject):
    # generation, array('q'), rows of the first page ({} but for a first chunk), first, last
    chunk = Signal(int, object, object, bool, bool)
    failed = Signal(int, str)


def _stream_ids(
    cur: Any,
    *,
    reader: TableReader,
    query: SnapshotQuery,
    generation: int,
    relay: _ChunkRelay,
    cancel: CancelToken,
    taken: threading.Event | None = None,
) -> None:
    """Hand the ids over in chunks: a small first one (paints at once), then big ones.

    At most one chunk waits in the GUI thread's queue (``taken`` is set when the model
    has added one): the next is read meanwhile, but only handed over once the previous is
    in. Queued chunks would otherwise be handled back to back, ahead of the paint of the
    first rows and of timers, freezing the window while a million ids arrive.
    """
    first = True
    for ids, last in reader.id_chunks(cur, query, FIRST_CHUNK, CHUNK):
        if cancel.cancelled:
            return
        if taken is not None and not _previous_taken(taken, cancel):
            return
        relay.chunk.emit(generation, ids, _first_page(cur, ids) if first else {}, first, last)
        first = False


def _first_page(cur: Any, ids: array[int]) -> dict[int, RowData]:
    """The rows of a new result's first page, read here rather than on the GUI thread,
    whose first paint of the result would otherwise wait for that query. A cursor of its
    own: ``cur`` may still be streaming ids."""
    return fetch_rows_with(cur.connection.cursor(), ids[:PAGE])


def _previous_taken(taken: threading.Event, cancel: CancelToken) -> bool:
    """Wait until the model has added the previous chunk; False if cancelled meanwhile."""
    while not taken.wait(0.05):
        if cancel.cancelled:
            return False
    taken.clear()
    return True


def _stream_search(
    cur: Any,
    *,
    reader: TableReader,
    query: SnapshotQuery,
    generation: int,
    relay: _ChunkRelay,
    cancel: CancelToken,
) -> None:
    """Search in two steps so every keystroke answers fast.

    1. The newest :data:`FIRST_CHUNK` matches (:meth:`TableReader.search_window`: off
       the newest pages for a common prefix, else straight off the full-text index) are
       shown sorted as asked. When that is every match (the usual case), we are done.
    2. Otherwise, once typing has paused for :data:`FULL_RESULT_DELAY`, all matches are
       collected and sorted (a common word in a million pages takes a second or two) and
       replace the first window; :attr:`partial` is True meanwhile so the window can say
       the list is still being completed. Starting that for every keystroke of a word
       only to interrupt it would take the processor from the next keystroke's window.
    """
    window, complete = reader.search_window(cur, query, FIRST_CHUNK)
    if cancel.cancelled:
        return
    relay.chunk.emit(generation, window, _first_page(cur, window), True, complete)
    if complete or cancel.wait(FULL_RESULT_DELAY):
        return  # complete, or the next keystroke came before the delay was over
    found = reader.all_ids(cur, query, cancel)
    relay.chunk.emit(generation, found, _first_page(cur, found), True, True)


class _Readers:
    """The table's reader threads: their pool, the SQLite connections they read with (by
    generation) and the current query's cancel token. Stopping them needs nothing of the
    model, so it also runs from the model's ``destroyed``: Qt emits it before it deletes
    the model's children, so the threads end while the relay they emit on still exists."""

    def __init__(self) -> None:
        # Its own threads: a keystroke's query never waits behind a mirror or a capture.
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="table")
        self.connections: dict[int, Any] = {}
        self.lock = threading.Lock()
        self.cancel = CancelToken()

    def interrupt(self) -> None:
        """Stop SQLite work for superseded queries (a sort of a million rows, a search)."""
        with self.lock:  # a connection is interrupted only while it reads for us
            for conn in self.connections.values():
                with contextlib.suppress(Exception):  # already closed
                    conn.interrupt()

    def stop(self) -> None:
        """Cancel, interrupt SQLite, and join the threads (none waits on the GUI thread)."""
        self.cancel.cancel()
        self.interrupt()
        self.pool.shutdown(wait=True, cancel_futures=True)


class SnapshotTableModel(QAbstractTableModel):
    """Rows of ``snapshots`` for a :class:`SnapshotQuery`, loaded lazily."""

    loading_changed = Signal(bool)  # True while ids are still streaming in
    first_chunk = Signal()  # the first rows of a new result are in (benchmarks, status)
    load_failed = Signal(str)

    def __init__(
        self,
        library: Library,
        runner: OpRunner,
        *,
        thumbnails: ThumbnailCache | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.library = library
        self.runner = runner
        self.reader = library.table
        self.thumbnails = thumbnails
        self.query = SnapshotQuery()
        self._ids = array("q")
        self._pages: OrderedDict[int, dict[int, RowData]] = OrderedDict()
        self._snippets: dict[int, str] = {}
        self._cells: dict[int, tuple[str, ...]] = {}  # display text per row on screen
        self._generation = 0
        self._shut_down = False
        self._taken = threading.Event()  # the current reader's last chunk is in the model
        self._loading = False
        self.last_load_seconds = 0.0
        self.first_chunk_seconds = 0.0
        self.partial = False  # showing the quick first window of a search; more to come
        self._load_started = 0.0
        readers = self._readers = _Readers()
        # Not shut down (a test, a window dropped without closing): the threads end here,
        # not later on a deleted relay (rule 11 of docs/ARCHITECTURE.md).
        self.destroyed.connect(lambda *_: readers.stop())
        self._relay = _ChunkRelay(self)
        self._relay.chunk.connect(self._on_chunk)
        self._relay.failed.connect(self._on_failed)
        if thumbnails is not None:
            thumbnails.ready.connect(self._on_thumbnail)

    # ------------------------------------------------------------------ querying

    @property
    def loading(self) -> bool:
        return self._loading

    def set_query(self, query: SnapshotQuery) -> None:
        """Show ``query``'s rows (the table empties, then fills as ids arrive)."""
        self.query = query
        self.refresh()

    def refresh(self) -> None:
        """Re-run the current query (after captures, tag edits, imports …).

        The rows on screen stay until the first chunk of the new result arrives, so typing
        or re-sorting never flashes an empty table. After :meth:`shutdown` it does nothing
        (a job or capture that finishes while the window closes still asks for one).
        """
        if self._shut_down:
            return
        self._readers.cancel.cancel()
        self._readers.interrupt()
        self._generation += 1
        generation = self._generation
        cancel = self._readers.cancel = CancelToken()
        taken = self._taken = threading.Event()
        taken.set()  # nothing handed over yet
        self._set_loading(True)
        self.partial = False
        self._load_started = time.perf_counter()
        query, reader, relay = self.query, self.reader, self._relay

        readers, lock = self._readers.connections, self._readers.lock

        def stream() -> None:
            try:
                raw = reader.connect()
                with lock:
                    readers[generation] = raw.driver_connection
                try:
                    if cancel.cancelled:
                        return
                    if query.search.strip():
                        _stream_search(
                            raw.cursor(),
                            reader=reader,
                            query=query,
                            generation=generation,
                            relay=relay,
                            cancel=cancel,
                        )
                    else:
                        _stream_ids(
                            raw.cursor(),
                            reader=reader,
                            query=query,
                            generation=generation,
                            relay=relay,
                            cancel=cancel,
                            taken=taken,
                        )
                finally:
                    with lock:
                        readers.pop(generation, None)
                    raw.close()
            except Exception as exc:
                if not cancel.cancelled:  # an interrupted, superseded query is no error
                    relay.failed.emit(generation, f"{type(exc).__name__}: {exc}")

        self._readers.pool.submit(stream)

    def shutdown(self) -> None:
        """Stop reading (window closing): cancel, interrupt SQLite, join the reader threads."""
        self._shut_down = True
        self._readers.stop()

    def _on_chunk(
        self,
        generation: int,
        ids: array[int],
        page: dict[int, RowData],
        first: bool,
        last: bool,
    ) -> None:
        if generation != self._generation:
            return
        self._taken.set()  # the reader may hand over its next chunk (queued behind this)
        if first:
            if self.thumbnails is not None:  # rows read anew: a pending capture's screenshot
                self.thumbnails.look_again()  # not found before may be there now
            self.beginResetModel()
            self._ids = ids
            self._pages.clear()
            self._snippets.clear()
            self._cells.clear()
            if page:
                self._pages[0] = page
            self.endResetModel()
            if page and self.query.search.strip():
                self._load_snippets(list(ids[:PAGE]))
            self.partial = not last
            self.first_chunk_seconds = time.perf_counter() - self._load_started
            self.first_chunk.emit()
        elif len(ids):
            start = len(self._ids)
            self.beginInsertRows(QModelIndex(), start, start + len(ids) - 1)
            self._ids.extend(ids)
            self.endInsertRows()
        if last:
            self.partial = False
            self.last_load_seconds = time.perf_counter() - self._load_started
            self._set_loading(False)

    def _on_failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self._set_loading(False)
            self.load_failed.emit(message)

    def _set_loading(self, value: bool) -> None:
        if value != self._loading:
            self._loading = value
            self.loading_changed.emit(value)

    # ------------------------------------------------------------------ access

    def shown_ids(self) -> tuple[int, ...]:
        """Every capture the table lists, in its order."""
        return tuple(self._ids)

    def snapshot_id(self, row: int) -> int | None:
        return int(self._ids[row]) if 0 <= row < len(self._ids) else None

    def row_of(self, snapshot_id: int) -> int | None:
        """The row showing ``snapshot_id`` (a linear scan of 8-byte ids; fine for a click)."""
        try:
            return self._ids.index(snapshot_id)
        except ValueError:
            return None

    def rows_of(self, snapshot_ids: set[int]) -> dict[int, int]:
        """The rows showing ``snapshot_ids`` that the model holds: a few looked up each at C
        speed (``array.index``), many in one pass over the ids."""
        if len(snapshot_ids) <= 16:
            return {sid: row for sid in snapshot_ids if (row := self.row_of(sid)) is not None}
        found: dict[int, int] = {}
        for row, sid in enumerate(self._ids):
            if sid in snapshot_ids:
                found[sid] = row
                if len(found) == len(snapshot_ids):
                    break
        return found

    def row_data(self, row: int) -> RowData | None:
        sid = self.snapshot_id(row)
        if sid is None:
            return None
        page = self._page(row // PAGE)
        return page.get(sid)

    def _page(self, number: int) -> dict[int, RowData]:
        page = self._pages.get(number)
        if page is not None:
            self._pages.move_to_end(number)
            return page
        ids = self._ids[number * PAGE : (number + 1) * PAGE]
        # Never raised into Qt's paint (a traceback a paint while the database was away),
        # nor tried at each paint meanwhile: "…" until the window reads again as it answers
        outages = self.library.outages
        if outages.of(OutageKind.DATABASE) is not None:
            return {}
        try:
            page = outages.attempt(READING_ROWS, lambda: self.reader.rows(ids))
        except Exception:  # said by lib.outages: an outage once, another error once
            return {}
        self._pages[number] = page
        if self.query.search.strip():
            self._load_snippets(list(ids))
        while len(self._pages) > CACHED_PAGES:
            _, dropped = self._pages.popitem(last=False)
            for sid in dropped:
                self._snippets.pop(sid, None)
                self._cells.pop(sid, None)
        return page

    def _load_snippets(self, ids: list[int]) -> None:
        """Fetch highlighted snippets for ``ids`` in the background; repaint when in."""
        generation, text, reader = self._generation, self.query.search, self.reader
        outages = self.library.outages

        def work(_p: object, _c: object) -> dict[int, str]:
            return outages.attempt("reading search snippets", lambda: reader.snippets(ids, text))

        def done(found: dict[int, str]) -> None:
            if generation != self._generation or not found:
                return
            self._snippets.update(found)
            rows = [r for r in (self.row_of_cached(i) for i in found) if r is not None]
            if rows:
                top, bottom = self.index(min(rows), COL_MATCH), self.index(max(rows), COL_MATCH)
                self.dataChanged.emit(top, bottom, [Qt.ItemDataRole.DisplayRole])

        BackgroundOp(self.runner, work, label="snippets", blocks_quit=False).success(done).failure(
            lambda _f: None
        ).run_in_background()  # (said by lib.outages)

    def row_of_cached(self, snapshot_id: int) -> int | None:
        """The row of ``snapshot_id`` if its page is in memory (no scan of all ids)."""
        for number, page in self._pages.items():
            if snapshot_id in page:
                base = number * PAGE
                chunk = self._ids[base : base + PAGE]
                try:
                    return base + chunk.index(snapshot_id)
                except ValueError:
                    return None
        return None

    # ------------------------------------------------------------------ Qt model

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][0]
        return None

    def multiData(self, index: Index, roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        """Every role of one cell from one row lookup (see :func:`answer_roles`): a paint
        asks this for each visible cell, so it does as little as it can per cell."""
        span: Any = [roleDataSpan] if isinstance(roleDataSpan, QModelRoleData) else roleDataSpan
        row, col = index.row(), index.column()
        rd = self.row_data(row)
        for i in range(len(span)):
            slot = span[i]
            value = self._value(row, col, rd, slot.role())
            if value is None:
                slot.clearData()
            else:
                slot.setData(value)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = index.row()
        if role == SnapshotIdRole:  # the id alone: no page of rows read for it
            return self.snapshot_id(row)
        return self._value(row, index.column(), self.row_data(row), role)

    def _value(self, row: int, col: int, rd: RowData | None, role: int) -> Any:
        if role == SnapshotIdRole:
            return self.snapshot_id(row)
        if rd is None:
            return "…" if role == DISPLAY and col == COL_TITLE else None
        if role == DISPLAY:
            if col == COL_MATCH:
                return self._snippets.get(rd.id, "")
            cells = self._cells.get(rd.id)
            if cells is None:
                cells = self._cells[rd.id] = self._display(rd)
            return cells[col]
        if role == RowDataRole:
            return rd
        if role == SnippetRole or (role == TOOLTIP and col == COL_MATCH):
            return self._snippets.get(rd.id, "")
        if role == TOOLTIP and col in (COL_TITLE, COL_DOMAIN):
            return f"{rd.title}\n{rd.shown_url}" if rd.title else rd.shown_url
        if role == ALIGNMENT and col == COL_SIZE:
            return ALIGN_RIGHT
        if role == DECORATION and col == COL_TITLE and self.thumbnails:
            thumbnail = self.thumbnails.small(rd.id, rd.folder)
            return self.thumbnails.blank if thumbnail is None else thumbnail
        if rd.profile and col == COL_STATUS and role in (DECORATION, TOOLTIP):
            return profile_marker(rd.profile, tooltip=role == TOOLTIP)
        return None

    @staticmethod
    def _display(rd: RowData) -> tuple[str, ...]:
        """The row's text per column but the snippet (which arrives later)."""
        code = f" {rd.http_status}" if rd.http_status else ""
        return (
            rd.captured_at,
            rd.title or rd.shown_url,
            rd.shown_domain,
            human_size(rd.size_bytes),
            f"{rd.state}{code}",
        )

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        key = COLUMNS[column][1] if 0 <= column < len(COLUMNS) else None
        if key is None:
            return
        descending = order == Qt.SortOrder.DescendingOrder
        if key == self.query.sort and descending == self.query.descending and self._ids:
            return
        self.set_query(self.query.with_(sort=key, descending=descending))

    def _on_thumbnail(self, snapshot_id: int) -> None:
        row = self.row_of_cached(snapshot_id)
        if row is not None:
            index = self.index(row, COL_TITLE)
            self.dataChanged.emit(index, index, [Qt.ItemDataRole.DecorationRole])


_PROFILE_ICON: list[QIcon] = []


def profile_marker(profile: str, *, tooltip: bool) -> QIcon | str:
    """The status cell's mark for a capture made in a browser profile: an icon, and a
    tooltip saying it may show private data."""
    if tooltip:
        return privacy_note(profile)
    if not _PROFILE_ICON:
        style = QApplication.style()
        _PROFILE_ICON.append(style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning))
    return _PROFILE_ICON[0]
