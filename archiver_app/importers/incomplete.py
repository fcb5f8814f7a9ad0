"""The bookkeeping that makes an import all-or-nothing, even when its process is killed.

Each WARC being imported has a ``settings`` marker (:data:`INCOMPLETE_PREFIX` and its
``files`` id) from its ``files`` row until its import is complete, and an import lock per
content hash (``.locks/import-<sha256>.lock``) held by the process importing it. An import
that fails or is cancelled undoes itself (:func:`forget_on_error`); one whose process died
leaves its marker, its copy and its rows, which :func:`sweep_interrupted_imports` undoes at
the next start of the app or of any import (only where no live process holds the lock),
and :func:`known_sha` undoes when the same file comes back.

Before the first byte of an import reaches its snapshot folder, the folder is marked too
(:func:`folder_in_progress`, a :data:`FOLDER_PREFIX` setting naming the import's lock)
until the import ends, so what a process killed *before* its files were recorded leaves
(a temporary copy, a WARC under its final name with no row, an unregistered ``index.json``)
is found and removed as well. A WARC recompressed before import, and the texts of a pages
list set aside while it is read, are written at the library root under a name carrying
their own lock (:func:`root_temp_lock`), so a dead process's one is removed at once rather
than after a day.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from sqlalchemy import delete, select, update

from archiver_app.durable import discard, is_temp, sweep_leftovers
from archiver_app.filelock import held_or_busy
from archiver_app.layout.sidecar import SIDECAR
from archiver_app.library import Library
from archiver_app.store.fulltext import delete_snapshots_text
from archiver_app.store.indexes import ensure_indexes
from archiver_app.store.models import File, FileKind, Record, Setting, Snapshot, SnapshotTag
from archiver_app.warc.records import note_records_changed

_log = logging.getLogger(__name__)


def import_lock(lib: Library, sha: str) -> Path:
    """The lock file held while the file with this hash is imported."""
    return lib.root / ".locks" / f"import-{sha}.lock"


#: A ``settings`` key per WARC being imported, from its ``files`` row until its import is
#: complete (indexed, sidecar written): a file whose indexing stopped (a crash) is then
#: told from one already in the library, and imported again.
INCOMPLETE_PREFIX = "import-incomplete:"


def incomplete_key(file_id: int) -> str:
    return f"{INCOMPLETE_PREFIX}{file_id}"


#: A ``settings`` key per snapshot folder an import is writing, from before its first byte
#: until the import ends; the value is the name of the import's lock file in ``.locks``.
FOLDER_PREFIX = "import-folder:"

#: How a recompressed WARC's temporary file (at the library root) is labelled: the rest of
#: the label up to the next '.' names its lock (``.locks/regzip-<id>.lock``).
REGZIP_LABEL = "regzip-"
#: The same for the texts of a pages list (archiver_app.warc.listedtext).
PAGE_TEXTS_LABEL = "pagetexts-"
_ROOT_TEMP_LABELS = (REGZIP_LABEL, PAGE_TEXTS_LABEL)


@contextlib.contextmanager
def folder_in_progress(lib: Library, folder: PurePosixPath, lock: Path) -> Iterator[None]:
    """Mark ``folder`` as being written by this import, whose ``lock`` the caller holds,
    for the duration of the block (whatever way it ends: a failed import undoes itself)."""
    key = f"{FOLDER_PREFIX}{folder.as_posix()}"
    with lib.write() as s:
        s.merge(Setting(key=key, value=lock.name))
    try:
        yield
    finally:
        with lib.write() as s:
            s.execute(delete(Setting).where(Setting.key == key))


def root_temp_lock(lib: Library, label: str) -> Path:
    """The lock held while the temporary file at the library root labelled ``label`` (a
    recompressed WARC, a pages list's texts) is in use."""
    return lib.root / ".locks" / f"{label}.lock"


#: Why a file is skipped while another process (a second window, a terminal) imports the
#: same bytes.
BEING_IMPORTED = "the same file is being imported right now by another Archiver window or command"


def claim_sha(lib: Library, sha: str, locks: contextlib.ExitStack) -> str | None:
    """Why the file with this hash is not to be imported now (already in the library, or
    being imported by another process), or None: go on, holding its import lock in
    ``locks`` until they close. Only a holder of the lock may forget an import that
    stopped partway (:func:`known_sha`): one still running holds it."""
    lock = import_lock(lib, sha)
    if not locks.enter_context(held_or_busy(lock)):
        return BEING_IMPORTED
    existing = known_sha(lib, sha)
    return None if existing is None else f"already in the library as {existing}"


def known_sha(lib: Library, sha: str) -> str | None:
    """The path of the WARC with this hash already in the library, if it is complete; one
    whose import stopped partway is forgotten (rows, file) so that it is imported again."""
    with lib.session() as s:
        rows = s.execute(
            select(File.id, File.path).where(File.sha256 == sha, File.kind == FileKind.WARC)
        ).all()
        pending = set(
            s.scalars(
                select(Setting.key).where(Setting.key.in_([incomplete_key(fid) for fid, _ in rows]))
            )
        )
    complete = None
    for file_id, path in rows:
        if incomplete_key(file_id) in pending:
            forget_file(lib, file_id)
        elif complete is None:
            complete = path
    return complete


#: Rows deleted per write transaction while an import is undone.
UNDO_BATCH = 2000
#: How long an undo writes before it leaves the database to others for :data:`UNDO_PAUSE`
#: seconds: SQLite has no queue of writers; one waiting on the busy timeout retries every
#: 100 ms at most, so a pause longer than that lets every waiting one in (a tag edit, a
#: job's heartbeat) while the undo costs about a tenth more time.
UNDO_HOLD = 1.0
UNDO_PAUSE = 0.11


def forget_file(lib: Library, file_id: int) -> None:
    """Undo a WARC's import that did not complete: its records, snapshots (text, tags), its
    ``files`` row and its copy in the library (a linked file is left where it is).

    Linear in the import's size, and in batches of :data:`UNDO_BATCH` rows, each its own
    transaction: other processes' writes get through between them. Its marker and
    ``files`` row go last, so an undo killed partway is an import still marked
    incomplete, which the next sweep goes on undoing."""
    with lib.session() as s:
        row = s.get(File, file_id)
        found = None if row is None else (row.path, row.external_path)
    if found is None:
        with lib.write() as s:
            s.execute(delete(Setting).where(Setting.key == incomplete_key(file_id)))
        return
    rel, external = found
    ensure_indexes(lib.engine, lib.write)  # without them each deleted row reads a table
    turns = _Turns()
    ours = select(Record.id).where(Record.file_id == file_id).limit(UNDO_BATCH)
    while True:
        with turns, lib.write() as s:  # what revisits these records (ours or not) first
            ids = list(s.scalars(ours))
            s.execute(
                update(Record).where(Record.revisit_of_id.in_(ids)).values(revisit_of_id=None)
            )
            s.execute(delete(Record).where(Record.id.in_(ids)))
            note_records_changed(s.connection())
        if len(ids) < UNDO_BATCH:
            break
    with lib.session() as s:  # one read: snapshots.warc_file has no index
        snapshot_ids = list(s.scalars(select(Snapshot.id).where(Snapshot.warc_file == rel)))
    for at in range(0, len(snapshot_ids), UNDO_BATCH):
        sids = snapshot_ids[at : at + UNDO_BATCH]
        with turns, lib.write() as s:
            delete_snapshots_text(s.connection(), sids)
            s.execute(delete(SnapshotTag).where(SnapshotTag.snapshot_id.in_(sids)))
            s.execute(delete(Snapshot).where(Snapshot.id.in_(sids)))
    with lib.write() as s:
        s.execute(delete(File).where(File.id == file_id))
        s.execute(delete(Setting).where(Setting.key == incomplete_key(file_id)))
    if external is None:
        copy = lib.abspath(rel)
        copy.unlink(missing_ok=True)
        remove_empty(copy.parent, lib.root)


class _Turns:
    """Around each write of a long undo: after :data:`UNDO_HOLD` seconds of them, a pause
    of :data:`UNDO_PAUSE` seconds without the database."""

    def __init__(self) -> None:
        self._since = time.monotonic()

    def __enter__(self) -> None:
        if time.monotonic() - self._since > UNDO_HOLD:
            time.sleep(UNDO_PAUSE)
            self._since = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        return None


def mark_complete(lib: Library, file_ids: list[int]) -> None:
    with lib.write() as s:
        s.execute(delete(Setting).where(Setting.key.in_([incomplete_key(i) for i in file_ids])))


def forget_on_error(lib: Library, file_ids: list[int]) -> None:
    """After a failed or cancelled import: forget its files; an error doing so is logged
    (the files stay marked incomplete, so a re-import still redoes them)."""
    for file_id in file_ids:
        try:
            forget_file(lib, file_id)
        except Exception:
            _log.exception("could not undo the import of file %s", file_id)


def drop_sidecar(lib: Library, folder: PurePosixPath) -> None:
    """Remove the sidecar (file and row) of an import undone, if it got that far, and the
    folder if nothing else is in it."""
    base = lib.abspath(folder.as_posix())
    rel = f"{folder.as_posix()}/{SIDECAR}"
    try:
        with lib.write() as s:
            s.execute(delete(File).where(File.path == rel))
        (base / SIDECAR).unlink(missing_ok=True)
        remove_empty(base, lib.root)
    except Exception:
        _log.exception("could not remove %s", rel)


def remove_empty(folder: Path, root: Path) -> None:
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def sweep_interrupted_imports(lib: Library) -> int:
    """Undo every import whose process died partway (its copy, rows, sidecar, and the
    temporary files beside it), recorded or not yet; imports running now, in any process,
    are left alone. Returns how many imports were undone. Call it when the app starts and
    before imports."""
    undone = _sweep_files(lib)
    undone += _sweep_folders(lib)
    _sweep_root_temps(lib)
    return undone


def _sweep_files(lib: Library) -> int:
    """The WARCs whose rows were written but whose import did not complete."""
    with lib.session() as s:
        marked = select(Setting.key).where(Setting.key.startswith(INCOMPLETE_PREFIX))
        keys = list(s.scalars(marked))
        tails = [k[len(INCOMPLETE_PREFIX) :] for k in keys]
        ids = {int(t): k for t, k in zip(tails, keys, strict=True) if t.isdigit()}
        files = {
            fid: (sha, rel)
            for fid, sha, rel in s.execute(
                select(File.id, File.sha256, File.path).where(File.id.in_(list(ids)))
            )
        }
    by_key = {k: i for i, k in ids.items()}
    undone = 0
    for key in keys:
        file_id = by_key.get(key)
        if file_id is None or file_id not in files:  # a marker without its files row
            with lib.write() as s:
                s.execute(delete(Setting).where(Setting.key == key))
            continue
        sha, rel = files[file_id]
        with held_or_busy(import_lock(lib, sha or f"file-{file_id}")) as mine:
            if not mine:
                continue  # being imported right now
            with lib.session() as s:  # it may have completed since the markers were read
                if s.get(Setting, key) is None:
                    continue
            folder = PurePosixPath(rel).parent
            forget_file(lib, file_id)
            base = lib.abspath(folder.as_posix())
            sweep_leftovers(base, older_than=0)  # its lock is ours: nobody writes there
            if not any(base.glob("*.warc*")) and not any(base.glob("*.arc*")):
                drop_sidecar(lib, folder)
            undone += 1
    return undone


def _sweep_folders(lib: Library) -> int:
    """The folders of imports that died, recorded or not: whatever in them has no ``files``
    row (a temporary copy, a WARC renamed into place before its row, an ``index.json``
    written before its row) is removed, then the folder if nothing is left."""
    with lib.session() as s:
        marks = list(s.execute(select(Setting.key, Setting.value).where(
            Setting.key.startswith(FOLDER_PREFIX))))  # fmt: skip
    undone = 0
    for key, lock_name in marks:
        folder = PurePosixPath(key[len(FOLDER_PREFIX) :])
        with held_or_busy(lib.root / ".locks" / str(lock_name)) as mine:
            if not mine:
                continue  # being imported right now
            with lib.session() as s:
                if s.get(Setting, key) is None:
                    continue  # it ended since the marks were read
                prefix = f"{folder.as_posix()}/"
                known = set(s.scalars(select(File.path).where(File.path.startswith(prefix))))
            base = lib.abspath(folder.as_posix())
            removed = sweep_leftovers(base, older_than=0)  # its lock is ours
            for entry in base.iterdir() if base.is_dir() else ():
                if entry.is_file() and f"{prefix}{entry.name}" not in known:
                    entry.unlink()
                    removed.append(entry.name)
            remove_empty(base, lib.root)
            with lib.write() as s:
                s.execute(delete(Setting).where(Setting.key == key))
            undone += bool(removed)
    return undone


def _sweep_root_temps(lib: Library) -> None:
    """Recompressed WARCs and pages lists' texts at the library root whose process died
    (their lock is free)."""
    for entry in lib.root.iterdir():
        name = entry.name
        if not (is_temp(name) and name[1:].startswith(_ROOT_TEMP_LABELS)):
            continue
        label = name[1:].split(".", 1)[0]
        with held_or_busy(root_temp_lock(lib, label)) as mine:
            if mine:
                discard(entry)
