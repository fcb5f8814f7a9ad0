"""Move a whole library folder somewhere else (another disk, a bigger partition).

Nothing is lost whatever happens, including the process being killed:

* on the same file system the folder is renamed while the library is closed: one atomic
  step, instant at any size, with nothing to resume;
* across file systems the move is a ``move`` job of :mod:`archiver_app.jobs`, with progress
  and cancel. Every file but the database is copied into a staging folder next to the
  destination (``.<name>.moving``) by :func:`archiver_app.durable.verified_copy` (hashed
  while read, flushed, read back, renamed); the database is copied last as one consistent
  snapshot (SQLite's backup API), with the job handed over to the copy. Only then is the
  staging folder renamed to the destination and the new place remembered
  (:func:`archiver_app.paths.remember_library_root`). The job then finishes *at the new
  place*: it removes the old files one by one, each only once its copy is there.

A move killed while copying leaves the old library whole (its job says it was interrupted)
and every copy already made and verified in the staging folder: moving again reuses them
(a staged file of the same size and time is not copied twice). Killed after the rename,
the new library is complete and already the one that opens; its queued ``move`` job
removes the old files when the app opens it (or ``archiver jobs run``). Cancel or a failure
removes the staging folder. No file is ever under a final name before it is complete.

The library must not be in use elsewhere while it moves: the move refuses to start while
another process has it open (the app, ``archiver serve``, a worker, another command:
:mod:`archiver_app.library_use`), a worker of another machine has a live heartbeat, or a
worker of this computer is still running whose heartbeat stopped when it lost the
database; it holds its own registration while it runs, so nothing opens the library
meanwhile. The app closes its window before it moves its library. Everything in the
folder moves, the notes of pages a worker gave up (``.archiver-unrecorded/``) too: they
are settled at the new place. The old place is remembered as moved
(:func:`archiver_app.known_libraries.library_moved`): opening it says where the library
went, and no new library is made there unasked. With a PostgreSQL database the folder
moves and the database stays where it is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archiver_app import library_use
from archiver_app.durable import (
    DestinationError,
    SourceError,
    SourceMismatch,
    is_temp,
    make_folders,
    rename_folder,
    sweep_leftovers,
    sync_file,
    sync_folder,
    verified_copy,
)
from archiver_app.errors import InputError, LibraryError
from archiver_app.jobs.kinds import JobKind, KindSpec, Registry, RunningJob
from archiver_app.known_libraries import library_moved
from archiver_app.library import DB_NAME, Library
from archiver_app.paths import remember_library_root
from archiver_app.store.schema import copy_sqlite
from archiver_app.tasks import CancelToken, Progress, ProgressUpdate, null_progress

STAGING_SUFFIX = ".moving"
#: The SQLite database and the files SQLite keeps beside it: copied as one snapshot.
DATABASE_FILES = frozenset({DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", f"{DB_NAME}-journal"})


@dataclass
class MoveResult:
    root: Path  # where the library is now
    files: int = 0
    bytes: int = 0
    renamed: bool = False  # same file system: one rename, nothing copied
    reused: int = 0  # files an interrupted earlier move had already copied and verified
    left_behind: list[str] = field(default_factory=list)  # old paths that could not be removed


def staging_folder(dest: Path) -> Path:
    return dest.with_name(f".{dest.name}{STAGING_SUFFIX}")


def _check(src: Path, dest: Path) -> None:
    if not (src / "library.json").is_file():
        raise LibraryError(f"{src} is not an Archiver library (no library.json)")
    if dest.resolve() == src.resolve():
        raise InputError(f"the library is already at {dest}: nothing to move")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(f"{dest} already exists and is not an empty folder; choose another place")
    s, d = src.resolve(), dest.resolve()
    if d == s or s in d.parents:
        raise InputError(f"{dest} is inside the library; choose a place outside {src}")
    if not dest.parent.is_dir():
        raise InputError(f"{dest.parent} does not exist")
    if not os.access(dest.parent, os.W_OK):
        raise InputError(f"{dest.parent} is not writable")


def _refuse_if_workers(lib: Library) -> None:
    """A running worker would keep writing to the old place (its captures, the notes of
    pages it gives up): refuse, saying which."""
    from archiver_app.crawl.gone_workers import workers_still_running

    live = workers_still_running(lib)
    if live:
        names = ", ".join(f"pid {w.pid} on {w.host}" for w in live[:3])
        raise LibraryError(
            f"a capture worker is using this library ({names}); stop it before moving the library"
        )


def _manifest(
    src: Path, *, skip: frozenset[str] = frozenset(), temps: bool = False
) -> list[tuple[str, int]]:
    """Every file and symlink under ``src`` as (relative path, size), in a stable order;
    the top-level names in ``skip`` left out, and unless ``temps`` temporary files (debris
    of an interrupted write) and the registrations of who has it open: never part of the
    library."""
    out: list[tuple[str, int]] = []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        base = Path(dirpath)
        top = base == src
        if top and not temps and library_use.FOLDER in dirnames:  # who has it open
            dirnames.remove(library_use.FOLDER)
        for name in sorted(filenames):
            if (top and name in skip) or (not temps and is_temp(name)):
                continue
            st = (base / name).lstat()
            out.append((str((base / name).relative_to(src)), st.st_size))
        for name in dirnames:  # symlinked folders are entries, not places to descend
            if (base / name).is_symlink():
                out.append((str((base / name).relative_to(src)), 0))
    return out


def _already_staged(src: Path, staged: Path) -> bool:
    """A copy an interrupted move made: complete (verified copies only ever appear under
    their final name) and still of the same file (same size and modification time)."""
    try:
        a, b = src.lstat(), staged.lstat()
    except FileNotFoundError:
        return False
    if src.is_symlink():
        return staged.is_symlink() and os.readlink(src) == os.readlink(staged)
    return a.st_size == b.st_size and a.st_mtime_ns == b.st_mtime_ns


def _copy_verified(src: Path, dst: Path, advance: Callable[[int], None]) -> None:
    """Copy one entry verified; a symlink is copied as a symlink. ``advance(n)`` is called
    as bytes are copied (it raises ``Cancelled`` to stop), so one big file shows progress."""
    if src.is_symlink():
        with contextlib.suppress(FileNotFoundError):
            dst.unlink()
        os.symlink(os.readlink(src), dst)
        return
    try:
        verified_copy(src, dst, keep_stat=True, make_parent=False, on_bytes=advance)
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


def _hand_over(staging: Path, job_id: int, dest: Path) -> None:
    """In the staged copy, queue the move job again so it finishes at the new place."""
    from archiver_app.jobs.runtime import hand_over

    with Library.open(staging, create=False, remember=False) as copy:  # not a library place
        hand_over(copy, job_id, f"copied to {dest}; the old files are removed from there")
    for name in DATABASE_FILES - {DB_NAME}:  # a clean close folds and removes these
        if (staging / name).exists():
            sync_file(staging / name)


def _stage(
    src: Path,
    staging: Path,
    entries: list[tuple[str, int]],
    progress: Progress,
    cancel: CancelToken,
) -> int:
    """Copy ``entries`` into ``staging``, reusing verified copies already there; return
    how many were reused."""
    total = sum(size for _rel, size in entries)
    done = files_done = reused = 0
    current = ""

    def advance(n: int) -> None:
        nonlocal done
        cancel.raise_if_cancelled()
        done += n
        progress(ProgressUpdate(files_done, len(entries), current, done, total))

    for rel, size in entries:
        cancel.raise_if_cancelled()
        target = staging / rel
        try:  # never the staging folder itself: not again on a disk pulled out
            make_folders(target.parent, within=staging)
        except OSError as exc:
            raise LibraryError(
                f"the library was not moved: the new place cannot be written ({exc.strerror})",
                details=str(staging),
            ) from exc
        if _already_staged(src / rel, target):
            reused += 1
            done += size
        else:
            current = f"copying {rel}"
            _copy_verified(src / rel, target, advance)
        files_done += 1
        progress(ProgressUpdate(files_done, len(entries), f"copied {rel}", done, total))
    for dirpath, _dirs, _files in os.walk(staging):
        sync_folder(dirpath)
    return reused


def _remove_old(src: Path, dest: Path, result: MoveResult) -> None:
    """Remove each old file whose copy is at ``dest`` (the old database whenever the new
    one is there), then the emptied folders; anything else stays and is reported."""
    if not src.is_dir():
        return
    has_db = (dest / DB_NAME).is_file()
    for rel, size in reversed(_manifest(src, temps=True)):
        old, new = src / rel, dest / rel
        if rel in DATABASE_FILES:
            copied = has_db
        elif is_temp(rel) or Path(rel).parts[0] == library_use.FOLDER:
            copied = True  # debris of an interrupted write, or who had it open: not kept
        else:
            copied = (
                new.is_symlink()
                if old.is_symlink()
                else new.is_file() and new.stat().st_size == size
            )
        try:
            if not copied:
                raise FileNotFoundError(rel)
            old.unlink()
        except OSError:
            result.left_behind.append(rel)
    for dirpath, _dirs, _files in sorted(os.walk(src), key=lambda w: -len(w[0])):
        with contextlib.suppress(OSError):
            os.rmdir(dirpath)  # only empty folders: anything unexpected stays


# Long: the copy, snapshot, hand-over and switch steps read best in their order, in one
# place, with the one try block that clears the staging folder on cancel or failure.
def run_move(lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken) -> MoveResult:
    """The ``move`` job's runner: at the old place, stage and switch; at the new, finish."""
    src, dest = Path(job.config["src"]), Path(job.config["dest"])
    if lib.root.resolve() == dest.resolve():
        return finish_move(lib, job, progress, cancel)
    _refuse_if_workers(lib)
    sqlite = lib.engine.dialect.name == "sqlite"
    staging = staging_folder(dest)
    entries = _manifest(src, skip=DATABASE_FILES if sqlite else frozenset())
    total = sum(size for _rel, size in entries)
    staging.mkdir(exist_ok=True)  # an interrupted move's staging folder is reused
    for dirpath, _dirs, _files in os.walk(staging):  # without its half-written copies
        sweep_leftovers(dirpath, older_than=0)
    try:
        reused = _stage(src, staging, entries, progress, cancel)
        cancel.raise_if_cancelled()
        if sqlite:
            progress(ProgressUpdate(len(entries), len(entries), "copying the database"))
            copy_sqlite(lib.db_path, staging / DB_NAME)
            _hand_over(staging, job.id, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if dest.exists():
        dest.rmdir()  # empty (checked): a rename needs the name free
    rename_folder(staging, dest)
    remember_library_root(dest)
    library_moved(src, dest, lib.id, staging=staging)
    result = MoveResult(dest, files=len(entries) + sqlite, bytes=total, reused=reused)
    if not sqlite:  # the database stays where it is: nothing at the old place uses it
        _remove_old(src, dest, result)
    progress(ProgressUpdate(len(entries), len(entries), f"moved to {dest}", total, total))
    return result


def finish_move(
    lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken
) -> MoveResult:
    """The ``move`` job as the app's job queue runs it: at the new place, remove the old
    files; at the old place (a move interrupted while copying), say to move again."""
    src, dest = Path(job.config["src"]), Path(job.config["dest"])
    if lib.root.resolve() != dest.resolve():
        raise LibraryError(
            f"the move to {dest} was interrupted before it finished; the library is whole "
            "here. Move it again: the files already copied are not copied twice"
        )
    result = MoveResult(dest)
    _remove_old(src, dest, result)
    progress(ProgressUpdate(1, 1, f"removed the old library at {src}"))
    return result


def move_config(src: Path, dest: Path) -> dict[str, Any]:
    return {"src": str(src), "dest": str(dest)}


def move_registry() -> Registry:
    """The registry a move is started with (the default one only finishes moves)."""
    return Registry([KindSpec(JobKind.MOVE, run_move, resumable=False)])


def move_library(
    src: Path,
    dest: Path,
    *,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    database_url: str | None = None,
) -> MoveResult:
    """Move the library at ``src`` to ``dest`` (a new or empty folder); see the module doc.

    ``src`` must be closed. ``database_url``: the library's database when it is not the
    folder's own SQLite file (PostgreSQL). Raises ``Cancelled`` when cancelled, and
    :class:`~archiver_app.library_use.LibraryInUseError` while another process has the
    library open.
    """
    src, dest = src.expanduser().absolute(), dest.expanduser().absolute()
    _check(src, dest)
    moving = library_use.hold(src, moving_to=dest)  # nothing opens it from now on
    try:
        library_use.refuse_if_open(src)  # and nothing has it open now
        return _move(src, dest, moving, progress, cancel, database_url)
    finally:
        if moving is not None:
            moving.release()


def _move(  # noqa: PLR0917 - move_library's own arguments, handed on once
    src: Path,
    dest: Path,
    moving: library_use.Use | None,
    progress: Progress,
    cancel: CancelToken | None,
    database_url: str | None,
) -> MoveResult:
    from archiver_app.jobs import default_registry, run_foreground, run_job
    from archiver_app.store.models import JobStatus
    from archiver_app.tasks import Cancelled

    if os.stat(src).st_dev == os.stat(dest.parent).st_dev:
        with Library.open(src, create=False, database_url=database_url) as lib:
            _refuse_if_workers(lib)
        if dest.exists():
            dest.rmdir()
        rename_folder(src, dest)
        if moving is not None:
            moving.follow(dest)  # its registration went along: let go there
        remember_library_root(dest)
        library_moved(src, dest, lib.id)
        progress(ProgressUpdate(1, 1, f"moved to {dest}"))
        return MoveResult(dest, renamed=True)
    with Library.open(src, create=False, database_url=database_url) as lib:
        run = run_foreground(
            lib,
            JobKind.MOVE,
            move_config(src, dest),
            move_registry(),
            name=f"Move to {dest}",
            progress=progress,
            cancel=cancel,
        )
    if run.status != JobStatus.COMPLETED:
        raise Cancelled
    result: MoveResult = run.result
    if database_url is None:  # the job finishes at the new place: the old files go
        with Library.open(dest, create=False) as lib:
            done = run_job(lib, run.job_id, default_registry())
        result.left_behind = done.result.left_behind if done.result else []
    return result
