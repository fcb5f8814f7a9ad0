"""The bookkeeping that makes an import all-or-nothing, even when its process is killed.

Each WARC being imported has a ``settings`` marker (:data:`INCOMPLETE_PREFIX` and its
``files`` id) from its ``files`` row until its import is complete, and an import lock per
content hash (``.locks/import-<sha256>.lock``) held by the process importing it. An import
that fails or is cancelled undoes itself (:func:`forget_on_error`); one whose process died
leaves its marker, its copy and its rows, which :func:`sweep_interrupted_imports` undoes at
the next start of the app or of any import (only where no live process holds the lock),
and :func:`known_sha` undoes when the same file comes back.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path, PurePosixPath

from sqlalchemy import delete, select, update

from archiver_app.durable import sweep_leftovers
from archiver_app.filelock import held_or_busy
from archiver_app.layout.sidecar import SIDECAR
from archiver_app.library import Library
from archiver_app.store.fulltext import delete_snapshot_text
from archiver_app.store.models import File, FileKind, Record, Setting, Snapshot, SnapshotTag

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


def forget_file(lib: Library, file_id: int) -> None:
    """Undo a WARC's import that did not complete: its records, snapshots (text, tags), its
    ``files`` row and its copy in the library (a linked file is left where it is)."""
    with lib.write() as s:
        row = s.get(File, file_id)
        if row is None:
            s.execute(delete(Setting).where(Setting.key == incomplete_key(file_id)))
            return
        rel, external = row.path, row.external_path
        ours = select(Record.id).where(Record.file_id == file_id).scalar_subquery()
        s.execute(
            update(Record)
            .where(Record.revisit_of_id.in_(ours), Record.file_id != file_id)
            .values(revisit_of_id=None)
        )
        s.execute(update(Record).where(Record.file_id == file_id).values(revisit_of_id=None))
        s.execute(delete(Record).where(Record.file_id == file_id))
        snapshot_ids = list(s.scalars(select(Snapshot.id).where(Snapshot.warc_file == rel)))
        conn = s.connection()
        for sid in snapshot_ids:
            delete_snapshot_text(conn, sid)
        snaps = select(Snapshot.id).where(Snapshot.warc_file == rel).scalar_subquery()
        s.execute(delete(SnapshotTag).where(SnapshotTag.snapshot_id.in_(snaps)))
        s.execute(delete(Snapshot).where(Snapshot.warc_file == rel))
        s.execute(delete(File).where(File.id == file_id))
        s.execute(delete(Setting).where(Setting.key == incomplete_key(file_id)))
    if external is None:
        copy = lib.abspath(rel)
        copy.unlink(missing_ok=True)
        remove_empty(copy.parent, lib.root)


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
    ``.partial`` files beside it); imports running now, in any process, are left alone.
    Returns how many files were undone. Call it when the app starts and before imports."""
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
