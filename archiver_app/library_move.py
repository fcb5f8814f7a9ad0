"""Move a whole library folder somewhere else (another disk, a bigger partition).

Nothing is lost whatever happens, including the process being killed:

* on the same file system the folder is renamed: one atomic step, instant at any size;
* across file systems every file is copied into a staging folder next to the destination
  (``.<name>.moving``), hashed while read, flushed to disk, then read back and hashed again;
  only when every copy matches is the staging folder renamed to the destination, the new
  place remembered (:func:`archiver_app.paths.remember_library_root`) and the old files
  removed, one by one from the list that was copied. A move killed before the rename leaves
  the old library untouched (the next attempt starts the staging folder over); killed
  after it, the new library is complete and already the one that opens.

The library must not be open while it moves: the caller closes it (the GUI closes its
window first). A worker process with a live heartbeat makes the move refuse to start.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from archiver_app.durable import (
    DestinationError,
    SourceError,
    SourceMismatch,
    rename_folder,
    sync_folder,
    verified_copy,
)
from archiver_app.errors import InputError, LibraryError
from archiver_app.paths import remember_library_root
from archiver_app.tasks import CancelToken, Progress, ProgressUpdate, null_progress

STAGING_SUFFIX = ".moving"


@dataclass
class MoveResult:
    root: Path  # where the library is now
    files: int = 0
    bytes: int = 0
    renamed: bool = False  # same file system: one rename, nothing copied
    left_behind: list[str] = field(default_factory=list)  # old paths that could not be removed


def _check(src: Path, dest: Path) -> None:
    if not (src / "library.json").is_file():
        raise LibraryError(f"{src} is not an Archiver library (no library.json)")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(f"{dest} already exists and is not an empty folder; choose another place")
    s, d = src.resolve(), dest.resolve()
    if d == s or s in d.parents:
        raise InputError(f"{dest} is inside the library; choose a place outside {src}")
    if not dest.parent.is_dir():
        raise InputError(f"{dest.parent} does not exist")
    if not os.access(dest.parent, os.W_OK):
        raise InputError(f"{dest.parent} is not writable")


def _refuse_if_workers(src: Path, database_url: str | None) -> None:
    """A live worker would keep writing to the old place: refuse, saying which."""
    from archiver_app.crawl.worker import live_workers
    from archiver_app.library import Library

    with Library.open(src, database_url=database_url) as lib:
        live = live_workers(lib)
    if live:
        names = ", ".join(f"pid {w.pid} on {w.host}" for w in live[:3])
        raise LibraryError(
            f"a capture worker is using this library ({names}); stop it before moving the library"
        )


def _checkpoint(src: Path) -> None:
    """Fold the SQLite write-ahead log into library.db so the database is one file."""
    db = src / "library.db"
    if not db.is_file():
        return
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _manifest(src: Path) -> list[tuple[str, int]]:
    """Every file and symlink under ``src`` as (relative path, size), in a stable order."""
    out: list[tuple[str, int]] = []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted(filenames):
            p = base / name
            st = p.lstat()
            out.append((str(p.relative_to(src)), st.st_size))
        for name in dirnames:  # symlinked folders are entries, not places to descend
            p = base / name
            if p.is_symlink():
                out.append((str(p.relative_to(src)), 0))
    return out


def _copy_verified(
    src: Path, dst: Path, cancel: CancelToken, advance: Callable[[int], None]
) -> None:
    """Copy one entry verified (:func:`archiver_app.durable.verified_copy`: hashed while
    read, flushed, read back and compared); a symlink is copied as a symlink.

    ``advance(n)`` is called as bytes are copied, so one big file still shows progress.
    """
    if src.is_symlink():
        os.symlink(os.readlink(src), dst)
        return

    def step(n: int) -> None:
        cancel.raise_if_cancelled()
        advance(n)

    try:
        verified_copy(src, dst, keep_stat=True, make_parent=False, on_bytes=step)
    except DestinationError as exc:
        why = (
            "did not read back as written"
            if exc.kind == "mismatch"
            else f"failed ({exc.kind}: {exc})"
        )
        raise LibraryError(
            f"the library was not moved: writing {src.name} to the new place {why}",
            details=f"{src} -> {dst}",
        ) from exc
    except (SourceError, SourceMismatch) as exc:
        raise LibraryError(
            f"the library was not moved: {src.name} could not be read ({exc})",
            details=f"{src} -> {dst}",
        ) from exc


def move_library(
    src: Path,
    dest: Path,
    *,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    database_url: str | None = None,
) -> MoveResult:
    """Move the library at ``src`` to ``dest`` (a new or empty folder); see the module doc.

    ``database_url``: the library's database when it is not the folder's own SQLite file
    (PostgreSQL); the folder moves, the database stays where it is.
    """
    cancel = cancel or CancelToken()
    src, dest = src.expanduser().absolute(), dest.expanduser().absolute()
    _check(src, dest)
    _refuse_if_workers(src, database_url)
    if database_url is None:
        _checkpoint(src)

    if dest.exists():
        dest.rmdir()  # empty (checked): a rename needs the name free
    if os.stat(src).st_dev == os.stat(dest.parent).st_dev:
        rename_folder(src, dest)
        remember_library_root(dest)
        progress(ProgressUpdate(1, 1, f"moved to {dest}"))
        return MoveResult(dest, renamed=True)

    entries = _manifest(src)
    total = sum(size for _rel, size in entries)
    staging = dest.with_name(f".{dest.name}{STAGING_SUFFIX}")
    if staging.exists():
        shutil.rmtree(staging)  # an interrupted earlier attempt: start it over
    staging.mkdir()
    done = 0
    files_done = 0
    current = ""

    def advance(n: int) -> None:
        nonlocal done
        done += n
        progress(ProgressUpdate(files_done, len(entries), current, done, total))

    try:
        for rel, _size in entries:
            cancel.raise_if_cancelled()
            current = f"copying {rel}"
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            _copy_verified(src / rel, target, cancel, advance)
            files_done += 1
            progress(ProgressUpdate(files_done, len(entries), f"copied {rel}", done, total))
        for dirpath, _dirs, _files in os.walk(staging):
            sync_folder(dirpath)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    rename_folder(staging, dest)
    remember_library_root(dest)

    result = MoveResult(dest, files=len(entries), bytes=total)
    for rel, _size in reversed(entries):  # the copies are verified: remove the old names
        try:
            (src / rel).unlink()
        except OSError:
            result.left_behind.append(rel)
    for dirpath, _dirs, _files in sorted(os.walk(src), key=lambda w: -len(w[0])):
        with contextlib.suppress(OSError):
            os.rmdir(dirpath)  # only empty folders: anything unexpected stays
    progress(ProgressUpdate(len(entries), len(entries), f"moved to {dest}", done, total))
    return result
