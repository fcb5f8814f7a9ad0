"""Durable files: the one way a library or drive file is written, copied or renamed.

Every file that must survive a crash goes through here, so a crash between any two steps
leaves under the final name either the old file or the new one, never a part of one:

- :func:`atomic_write` (and :func:`atomic_write_text`): write a temporary file in the
  target's folder, fsync it, rename it over the target, fsync the folder.
- :func:`verified_copy`: copy to a temporary file in the target's folder hashing on the way
  (or by the kernel when the hash is on record), fsync it, read it back from the drive and
  compare, rename it, fsync the folder. The mirror runs the same steps in batches
  (:func:`copy_to_temp`, :func:`sync_filesystem`, :func:`hash_file`, :func:`install`).
- :func:`install`: rename a finished file (a temporary one, or a WARC's ``.part``) to its
  final name, then fsync the folder.

Temporary files have one name pattern, ``.<name>.<pid>-<random>-<n>.tmp-archiver``
(:func:`is_temp`), and one sweeper, :func:`sweep_leftovers`, removes those a killed process
left behind. Errors on a copy are typed: :class:`SourceError`, :class:`SourceMismatch` and
:class:`DestinationError`, whose ``kind`` :func:`classify` derives from the errno once.

Tests can stop between steps: :func:`step_hook` installs a callback called after each step
(:data:`STEPS`; a copy has no separate ``written`` step) with the final path.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import hashlib
import itertools
import os
import secrets
import shutil
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import BinaryIO

from archiver_app.hashing import hash_file

BUFFER = 1024 * 1024
#: Bytes per kernel copy call (progress is reported between calls).
KERNEL_CHUNK = 8 * 1024 * 1024
_KERNEL_COPY = hasattr(os, "sendfile") and sys.platform.startswith("linux")
TEMP_SUFFIX = ".tmp-archiver"
#: Temporary too: SQLite's files beside a temporary database, earlier migration copies.
_TEMP_SUFFIXES = (*(TEMP_SUFFIX + s for s in ("", "-journal", "-wal", "-shm")), ".archiver-part")
#: The steps after which a :func:`step_hook` callback is called, in order.
STEPS = ("written", "synced", "verified", "renamed", "folder-synced")


class SourceError(Exception):
    """The source could not be read."""


class SourceMismatch(Exception):
    """The source's bytes do not match its recorded sha256 (or size)."""

    def __init__(self, sha256: str, size: int) -> None:
        super().__init__(f"source hash {sha256} ({size} bytes) differs from the record")
        self.sha256 = sha256
        self.size = size


class DestinationError(Exception):
    """Writing to the destination failed; ``kind`` says how (full, gone, read-only ...)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def classify(exc: OSError, marker: Path | None = None) -> DestinationError:
    """Turn an OSError on the destination into a :class:`DestinationError`.

    ``marker``: a file on the destination drive; when it is gone, so is the drive.
    """
    code = exc.errno
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        kind = "full"
    elif code == errno.EROFS:
        kind = "read-only"
    elif code in (errno.EACCES, errno.EPERM):
        kind = "permission denied"
    elif code in (errno.ENOENT, errno.EIO, errno.ENODEV, errno.ENXIO, errno.ESTALE) or (
        marker is not None and not marker.exists()
    ):
        kind = "gone"
    else:
        kind = "error"
    return DestinationError(kind, exc.strerror or str(exc))


# ---------------------------------------------------------------------- test seam

_hook: Callable[[str, str], None] | None = None


@contextlib.contextmanager
def step_hook(hook: Callable[[str, str], None]) -> Iterator[None]:
    """Call ``hook(step, final_path)`` after each step (see :data:`STEPS`) while inside.

    For tests: the hook can check what the final name holds, or raise to stop there.
    """
    global _hook  # noqa: PLW0603 - a test seam, never set by the application
    previous, _hook = _hook, hook
    try:
        yield
    finally:
        _hook = previous


def _step(name: str, final: str | Path) -> None:
    if _hook is not None:
        _hook(name, os.fspath(final))


# ---------------------------------------------------------------------- temporary names
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_TOKEN = secrets.token_hex(4)
_numbers = itertools.count()


def is_temp(name: str) -> bool:
    """Whether ``name`` (a file name or path) is one of our temporary files."""
    return name.endswith(_TEMP_SUFFIXES)


def temp_name(label: str) -> str:
    """A new temporary name (no file is made): ``.<label>.<pid>-<random>-<n>.tmp-archiver``.
    ``label`` (usually the final file's name) tells a person whose it was. Only for what
    :func:`open_temp` cannot make (a folder to be renamed as a whole)."""
    return f"{temp_prefix(label, os.getpid())}{_TOKEN}-{next(_numbers)}{TEMP_SUFFIX}"


def temp_prefix(label: str, pid: int) -> str:
    """How each temporary name process ``pid`` makes for ``label`` starts."""
    return f".{label.encode('utf-8', 'surrogateescape')[:96].decode('utf-8', 'ignore')}.{pid}-"


def writer_pid(name: str, label: str) -> int | None:
    """The pid of the process that made ``name`` if it is a temporary name for ``label``."""
    start = temp_prefix(label, 0)[:-2]  # ".<label>."
    pid, dash, _ = name[len(start) :].partition("-")
    return int(pid) if name.startswith(start) and is_temp(name) and dash and pid.isdigit() else None


def open_temp(folder: str | Path, label: str) -> tuple[str, int]:
    """A new, empty temporary file in ``folder`` (``label`` as for :func:`temp_name`): its
    path and a descriptor to write it. OSError (``FileNotFoundError``: no such folder)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY | _O_CLOEXEC
    while True:
        temp = os.path.join(folder, temp_name(label))
        try:
            return temp, os.open(temp, flags, 0o666)
        except FileExistsError:
            continue  # a forked process that drew the same numbers: take the next one


def discard(temp: str | Path) -> None:
    """Remove one of our temporary files or folders (never anything under a final name)."""
    if not is_temp(os.fspath(temp)):
        raise ValueError(f"{temp} is not a temporary file")
    if os.path.isdir(temp) and not os.path.islink(temp):
        shutil.rmtree(temp, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):  # a drive gone or read-only: a sweep will
            os.unlink(temp)


def sweep_leftovers(folder: str | Path, *, older_than: float = 3600.0) -> list[str]:
    """Remove temporary files in ``folder`` (not below it) unchanged for ``older_than``
    seconds; return their names. None has a final name, so nothing is lost; the age spares
    those being written now (``older_than=0`` when nobody else can be writing there).
    """
    cutoff = time.time() - older_than
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return removed
    for entry in entries:
        if not is_temp(entry.name):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime <= cutoff:
                os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:
            continue  # removed meanwhile, or the drive refuses: the next sweep tries again
    return removed


# ---------------------------------------------------------------------- durability


@functools.cache
def _syncfs() -> Callable[[int], int] | None:
    """libc's ``syncfs``, looked up on first use (Linux only; None elsewhere)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def has_syncfs() -> bool:
    """Whether one call can flush a whole file system (:func:`sync_filesystem`)."""
    return _syncfs() is not None


def sync_fd(fd: int) -> None:
    """Make the data written through ``fd`` durable."""
    os.fsync(fd)


def sync_file(path: str | Path) -> None:
    """Make the data of the file (or the entries of the folder) at ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_folder(path: str | Path) -> None:
    """Make the entries of folder ``path`` (renames, new names) durable; a no-op on Windows
    (NTFS journals renames; folders cannot be opened) and for a folder that cannot be opened.
    """
    if os.name == "nt":
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_filesystem(
    folder: str | Path, dirs: Iterable[str | Path] = (), *, whole_fs: bool = True
) -> None:
    """Make every write and rename under ``folder`` durable.

    With ``whole_fs`` one ``syncfs`` covers ``folder``'s file system (where there is no
    ``syncfs``: ``os.sync`` and each of ``dirs``); otherwise each of ``dirs`` is fsynced
    (file contents were fsynced when written).
    """
    syncfs = _syncfs() if whole_fs else None
    if syncfs is not None:
        fd = os.open(folder, os.O_RDONLY)
        try:
            if syncfs(fd) != 0:
                code = ctypes.get_errno()
                raise OSError(code, os.strerror(code), str(folder))
        finally:
            os.close(fd)
        return
    if whole_fs and hasattr(os, "sync"):
        os.sync()
    if os.name == "nt":
        return
    for d in dirs:
        sync_file(d)  # a folder's entries, like a file's data


def install(temp: str | Path, final: str | Path, *, sync: bool = True) -> None:
    """Rename a finished, durable file to its final name (replacing what was there).

    With ``sync`` the rename is made durable (the folder fsynced); without, the caller
    makes it durable later (:func:`sync_filesystem`) before anything counts on it.
    """
    os.replace(temp, final)
    _step("renamed", final)
    if sync:
        sync_folder(os.path.dirname(os.fspath(final)) or ".")
    _step("folder-synced", final)


def rename_folder(src: str | Path, dst: str | Path) -> None:
    """Rename folder ``src`` to ``dst`` (a free name on the same file system), durably."""
    os.rename(src, dst)
    sync_folder(os.path.dirname(os.path.abspath(dst)))
    sync_folder(os.path.dirname(os.path.abspath(src)))


def make_folders(path: str | Path, within: str | Path | None = None) -> list[str]:
    """Create folder ``path`` with any missing parents, none at or above ``within`` (a
    drive's library folder: once it is gone, FileNotFoundError, so a drive pulled out is
    never re-created as empty folders at its mount point); return the folders whose entries
    this changed (the parent of each folder created), to fsync before a file counts."""
    created = []
    p, top = os.fspath(path), None if within is None else os.fspath(within)
    while not os.path.isdir(p) and p != top and os.path.dirname(p) != p:
        created.append(p)
        p = os.path.dirname(p)
    for folder in reversed(created):  # one level at a time: never below a folder gone
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder)
    return [os.path.dirname(c) for c in created]


# ---------------------------------------------------------------------- atomic writes


def atomic_write(
    path: str | Path,
    data: bytes | Callable[[BinaryIO], object],
    *,
    durable: bool = True,
    make_parent: bool = False,
) -> None:
    """Replace ``path`` with ``data`` (bytes, or a callback writing to a binary file).

    The old file, if any, stays under ``path`` until the new one is complete and durable.
    Without ``durable`` nothing is fsynced: the caller makes the batch durable later with
    :func:`sync_filesystem` before anything records it. On any error the temporary file is
    removed and ``path`` is untouched.
    """
    folder = os.path.dirname(os.fspath(path)) or "."
    name = os.path.basename(os.fspath(path))
    try:
        temp, fd = open_temp(folder, name)
    except FileNotFoundError:
        if not make_parent:
            raise
        os.makedirs(folder, exist_ok=True)
        temp, fd = open_temp(folder, name)
    try:
        with open(fd, "wb") as fh:
            if isinstance(data, bytes):
                fh.write(data)
            else:
                data(fh)
            fh.flush()
            _step("written", path)
            if durable:
                os.fsync(fh.fileno())
        _step("synced", path)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _step("renamed", path)
    if durable:
        sync_folder(folder)
    _step("folder-synced", path)


def atomic_write_text(
    path: str | Path, text: str, *, durable: bool = True, make_parent: bool = False
) -> None:
    """:func:`atomic_write` of ``text`` encoded as UTF-8."""
    atomic_write(path, text.encode("utf-8"), durable=durable, make_parent=make_parent)


# ---------------------------------------------------------------------- verified copies


def _ignore(n: int) -> None:
    """The default ``on_bytes``: no progress wanted."""


def copy_to_temp(
    source: str | Path,
    folder: str | Path,
    sha256: str,
    size: int,
    *,
    on_bytes: Callable[[int], None] = _ignore,
    marker: Path | None = None,
    fsync: bool = True,
    hash_source: bool = True,
) -> str:
    """Copy ``source`` to a new temporary file in ``folder``, hashing it on the way; return
    its path. On any failure it is removed (when the drive still allows it).

    With ``hash_source=False`` the kernel copies (``sendfile``) and only the size is
    checked: the caller MUST hash the copy it reads back and, when that does not match
    ``sha256``, :func:`blame` the source. A copy is then good exactly when it reads back as
    ``sha256``, whatever the source holds, so one hash pass does the work of two.

    Raises:
        SourceError: the source cannot be read.
        SourceMismatch: the source does not match ``sha256``/``size`` (temp removed).
        DestinationError: the destination refused the write.
    """
    temp, actual, total = _copy_into_temp(
        source, folder, sha256, size, on_bytes, marker, fsync, hash_source, "copy"
    )
    if actual != sha256 or total != size:
        discard(temp)
        raise SourceMismatch(actual if hash_source and actual else "", total)
    return temp


def _copy_into_temp(  # noqa: PLR0917 - the private engine of the two copy functions
    source: str | Path,
    folder: str | Path,
    sha256: str | None,
    size: int | None,
    on_bytes: Callable[[int], None],
    marker: Path | None,
    fsync: bool,
    hash_source: bool,
    label: str,
) -> tuple[str, str | None, int]:
    """The copy: ``(temp path, sha256 of what was read or the recorded one, bytes)``."""
    try:
        src = os.open(source, os.O_RDONLY | _O_BINARY | _O_CLOEXEC)
    except OSError as exc:
        raise SourceError(f"cannot read {source}: {exc.strerror or exc}") from exc
    try:
        if size is None:
            size = os.fstat(src).st_size
        digest = hashlib.sha256() if hash_source else None
        try:
            temp, fd = open_temp(os.fspath(folder), label)
        except OSError as exc:
            raise classify(exc, marker) from exc
        try:
            if digest is None and size >= BUFFER and _KERNEL_COPY:
                total = _kernel_copy(src, fd, on_bytes, source, marker)
            else:
                total = _buffer_copy(src, fd, size, digest, on_bytes, source, marker)
            if fsync:
                try:
                    os.fsync(fd)
                except OSError as exc:
                    raise classify(exc, marker) from exc
        except BaseException:
            os.close(fd)
            discard(temp)
            raise
        try:
            os.close(fd)
        except OSError as exc:
            discard(temp)
            raise classify(exc, marker) from exc
    finally:
        os.close(src)
    # Unhashed copies: only the size is known here; the read-back hash decides (see above).
    return temp, digest.hexdigest() if digest is not None else sha256, total


def _kernel_copy(
    src: int, dst: int, on_bytes: Callable[[int], None], source: str | Path, marker: Path | None
) -> int:
    """Copy by the kernel (``sendfile``), no bytes through Python; the bytes copied."""
    total = 0
    while True:
        try:
            n = os.sendfile(dst, src, total, KERNEL_CHUNK)
        except OSError as exc:
            if exc.errno in (errno.EIO, errno.EBADF) and total == 0:
                raise SourceError(f"cannot read {source}: {exc.strerror or exc}") from exc
            raise classify(exc, marker) from exc
        if not n:
            return total
        total += n
        on_bytes(n)


def _buffer_copy(  # noqa: PLR0917 - private helper of _copy_into_temp
    src: int,
    fd: int,
    size: int,
    digest: hashlib._Hash | None,
    on_bytes: Callable[[int], None],
    source: str | Path,
    marker: Path | None,
) -> int:
    """Copy through Python (hashing on the way when ``digest`` is given); the bytes copied.

    A file smaller than the buffer takes one read (of one byte more than recorded: a short
    read of a regular file is its end) and one write. Should a read stop short at exactly
    the recorded size of a longer source, the copy holds the recorded size's bytes: it
    counts only if they hash as recorded, like every copy.
    """
    total = 0
    want = size + 1 if size < BUFFER else BUFFER
    while True:
        try:
            data = os.read(src, want)
        except OSError as exc:
            raise SourceError(f"cannot read {source}: {exc.strerror or exc}") from exc
        n = len(data)
        if not n:
            return total
        if digest is not None:
            digest.update(data)
        try:
            view = memoryview(data)
            while view:  # a write may take only part of it
                view = view[os.write(fd, view) :]
        except OSError as exc:
            raise classify(exc, marker) from exc
        total += n
        on_bytes(n)
        if n < want and total >= size:
            return total  # a short read of a regular file: its end
        want = BUFFER


def blame(source: str | Path, sha256: str, size: int) -> None:
    """A copy did not read back as ``sha256``: say whether the source is to blame.

    Returns quietly when the source still holds the recorded bytes (so the write or the
    drive failed); raises :class:`SourceMismatch` or :class:`SourceError` otherwise.
    """
    try:
        got = hash_file(source, drop_cache=False, expected_size=size)
    except OSError as exc:
        raise SourceError(f"cannot read {source}: {exc.strerror or exc}") from exc
    if got != (sha256, size):
        raise SourceMismatch(*got)


def verified_copy(
    src: str | Path,
    dst: str | Path,
    *,
    expected_sha256: str | None = None,
    expected_size: int | None = None,
    durable: bool = True,
    keep_stat: bool = False,
    make_parent: bool = True,
    on_bytes: Callable[[int], None] = _ignore,
    guard: Callable[[], AbstractContextManager[object]] | None = None,
) -> tuple[int, str]:
    """Copy ``src`` over ``dst`` and verify it; return ``(size, sha256)``.

    1. copy to a temporary file beside ``dst``: hashing the bytes as they are read, or,
       with ``expected_sha256`` (the hash on record), by the kernel without hashing;
    2. fsync it (unless not ``durable``: then the caller runs :func:`sync_filesystem`
       before it records the copy);
    3. read it back from the drive (cached pages dropped) and compare size and sha256 with
       the source's (the recorded ones when given); a copy that differs is discarded, and
       with a recorded hash the source is re-read to say whether it is to blame;
    4. rename it to ``dst`` (inside ``guard()``, when given: an exception from the guard
       discards the copy and leaves ``dst`` untouched), then fsync the folder.

    ``keep_stat`` gives the copy the source's permission bits and times. ``on_bytes(n)``
    is called as bytes are copied (it may raise to cancel: the temporary file is removed).

    Raises:
        SourceError: ``src`` cannot be read.
        SourceMismatch: ``src`` does not hold ``expected_sha256``/``expected_size``.
        DestinationError: the destination refused a step; kind ``mismatch`` when the copy
            did not read back as the source.
    """
    folder = os.path.dirname(os.fspath(dst)) or "."
    changed = make_folders(folder) if make_parent else []
    known = expected_sha256 is not None
    name = os.path.basename(os.fspath(dst))
    temp, sha, size = _copy_into_temp(
        src, folder, expected_sha256, expected_size, on_bytes, None, durable, not known, name
    )
    try:
        _step("synced", dst)
        want = (sha or "", size if expected_size is None else expected_size)
        if not known and size != want[1]:
            raise SourceMismatch(want[0], size)  # what was read: its hash and size
        if hash_file(temp, drop_cache=durable, expected_size=size) != want:
            if known:
                blame(src, *want)
            raise DestinationError("mismatch", f"{dst} did not read back as written")
        _step("verified", dst)
        if keep_stat:
            st = os.stat(src)
            os.chmod(temp, stat.S_IMODE(st.st_mode))
            os.utime(temp, ns=(st.st_atime_ns, st.st_mtime_ns))
        with guard() if guard is not None else contextlib.nullcontext():
            os.replace(temp, dst)
    except OSError as exc:
        discard(temp)
        raise classify(exc) from exc
    except BaseException:
        discard(temp)
        raise
    _step("renamed", dst)
    if durable:
        for changed_folder in [folder, *reversed(changed)]:
            sync_folder(changed_folder)
    _step("folder-synced", dst)
    return want[1], want[0]
