"""Verified copies: temporary name, durable write, re-read and hash, rename, durable folder.

Nothing is ever written under a file's final name except by ``os.replace`` of a temporary
file whose bytes were made durable and then re-read and hashed on the destination, and
found equal to the file's recorded sha256. So a source that no longer matches its record
can never produce a copy that counts: either the source is hashed in the same pass that
writes the temporary file (``hash_source=True``: restores and repairs), or the kernel
copies it and the source is hashed only when the copy does not read back as recorded, to
tell a rotten source from a bad write (``hash_source=False`` + :func:`blame`: mirroring,
where this saves a whole hash pass).

Durability: on Linux one ``syncfs`` of the destination file system makes a whole batch of
temporary files (then a whole batch of renames) durable, which costs far less than an
``fsync`` per file for thousands of small files and gives the same guarantee. Elsewhere
each file and each folder is fsynced. Before a re-read, the file's cached pages are
dropped (``posix_fadvise DONTNEED``) so that the hash is of what the drive returns.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import hashlib
import io
import itertools
import os
import secrets
import sys
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from archiver_app.mirror.outcomes import StopReason

BUFFER = 1024 * 1024
TEMP_SUFFIX = ".part"


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

    def __init__(self, kind: StopReason | str, message: str) -> None:
        super().__init__(message)
        self.kind = StopReason(kind)


def classify(exc: OSError, marker: Path | None = None) -> DestinationError:
    """Turn an OSError on the destination into a :class:`DestinationError`."""
    code = exc.errno
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        kind = StopReason.FULL
    elif code == errno.EROFS:
        kind = StopReason.READ_ONLY
    elif code in (errno.EACCES, errno.EPERM):
        kind = StopReason.PERMISSION
    elif code in (errno.ENOENT, errno.EIO, errno.ENODEV, errno.ENXIO, errno.ESTALE) or (
        marker is not None and not marker.exists()
    ):
        kind = StopReason.GONE
    else:
        kind = StopReason.IO_ERROR
    return DestinationError(kind, exc.strerror or str(exc))


# ---------------------------------------------------------------------- durability


def _load_syncfs() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


_SYNCFS = _load_syncfs()


def use_syncfs(destination: Path, library_root: Path) -> bool:
    """Whether one ``syncfs`` per batch beats an fsync per file for ``destination``.

    Yes on Linux when the destination is its own file system (a drive); no when it shares
    the library's file system, where ``syncfs`` would also flush everything else being
    written there.
    """
    if _SYNCFS is None:
        return False
    try:
        return destination.stat().st_dev != library_root.stat().st_dev
    except OSError:
        return False


def sync_filesystem(
    folder: str | Path, dirs: Iterable[str | Path] = (), *, whole_fs: bool = True
) -> None:
    """Make every write and rename under ``folder`` durable.

    With ``whole_fs`` (and ``syncfs`` available) one call covers the file system;
    otherwise each of ``dirs`` is fsynced (file contents were fsynced when written).
    """
    if whole_fs and _SYNCFS is not None:
        fd = os.open(folder, os.O_RDONLY)
        try:
            if _SYNCFS(fd) != 0:
                code = ctypes.get_errno()
                raise OSError(code, os.strerror(code), str(folder))
        finally:
            os.close(fd)
        return
    if os.name == "nt":
        return  # NTFS journals renames; folders cannot be opened for fsync
    for d in dirs:
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# ---------------------------------------------------------------------- steps


def _write_all(fd: int, data: memoryview) -> None:
    while data:
        written = os.write(fd, data)
        data = data[written:]


_O_BINARY = getattr(os, "O_BINARY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_TEMP_PREFIX = secrets.token_hex(6)  # this process's temporary names: prefix-counter.part
_temp_numbers = itertools.count()


def _create_temp(folder: str, marker: Path | None) -> tuple[str, int]:
    """A new, empty temporary file in ``folder``: its path and a descriptor to write it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY | _O_CLOEXEC
    base = os.path.join(folder, _TEMP_PREFIX)
    while True:
        temp = f"{base}-{next(_temp_numbers)}{TEMP_SUFFIX}"
        try:
            return temp, os.open(temp, flags, 0o666)
        except FileExistsError:
            continue  # left by a process that drew the same prefix: take the next number
        except OSError as exc:
            raise classify(exc, marker) from exc


#: Bytes per kernel copy call (progress is reported between calls).
KERNEL_CHUNK = 8 * 1024 * 1024
_KERNEL_COPY = hasattr(os, "sendfile") and sys.platform.startswith("linux")


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
    """Copy ``source`` to a new temporary file in ``folder``, hashing it on the way.

    Returns the temporary path. On any failure the temporary file is removed (when the
    drive still allows it) and nothing else on the destination changed.

    With ``hash_source=False`` the bytes are not hashed here (the kernel copies large
    files, ``sendfile`` where the OS has it) and only the size is checked: the caller
    MUST hash the copy it reads back and, when that does not match ``sha256``, hash the
    source to tell a bad source from a bad write (:func:`blame`). A copy is then good
    exactly when it reads back as ``sha256``, whatever the source holds, so one hash pass
    does the work of two.

    Raises:
        SourceError: the source cannot be read.
        SourceMismatch: the source does not match ``sha256``/``size`` (temp removed).
        DestinationError: the destination refused the write.
    """
    try:
        src = os.open(source, os.O_RDONLY | _O_BINARY | _O_CLOEXEC)
    except OSError as exc:
        raise SourceError(f"cannot read {source}: {exc.strerror or exc}") from exc
    try:
        digest = hashlib.sha256() if hash_source else None
        temp, fd = _create_temp(os.fspath(folder), marker)
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
    actual = digest.hexdigest() if digest is not None else sha256
    if actual != sha256 or total != size:
        discard(temp)
        raise SourceMismatch(actual if digest is not None else "", total)
    return temp


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


def _buffer_copy(  # noqa: PLR0917 - private helper of copy_to_temp
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
            _write_all(fd, memoryview(data))
        except OSError as exc:
            raise classify(exc, marker) from exc
        total += n
        on_bytes(n)
        if n < want and total >= size:
            return total  # a short read of a regular file: its end
        want = BUFFER


def hash_file(
    path: str | Path, *, drop_cache: bool = True, expected_size: int = BUFFER
) -> tuple[str, int]:
    """sha256 and size of ``path`` as the drive returns it (cached pages dropped first)."""
    fd = os.open(path, os.O_RDONLY | _O_BINARY | _O_CLOEXEC)
    try:
        if drop_cache and _FADVISE:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return _hash_fd(fd, expected_size)
    finally:
        os.close(fd)


def _hash_fd(fd: int, expected_size: int) -> tuple[str, int]:
    """sha256 and size of what remains to be read from ``fd``."""
    digest = hashlib.sha256()
    total = 0
    if expected_size < BUFFER:  # a small file: the whole of it in one read, then its end
        data = os.read(fd, expected_size + 1)
        digest.update(data)
        total = len(data)
        # a read may stop short of the end (a signal, some network or FUSE file systems):
        # the end is only taken as read when a read returns nothing
        if total <= expected_size and not (more := os.read(fd, BUFFER)):
            return digest.hexdigest(), total
        if total <= expected_size:
            digest.update(more)
            total += len(more)
    buf = bytearray(BUFFER)
    view = memoryview(buf)
    with io.FileIO(fd, "rb", closefd=False) as reader:  # readinto: no new buffer per read
        while n := reader.readinto(buf):
            digest.update(view[:n])
            total += n
    return digest.hexdigest(), total


_FADVISE = hasattr(os, "posix_fadvise")


def hash_small_files(
    paths: Sequence[str | Path], sizes: Sequence[int] | None = None
) -> list[tuple[str, int] | None]:
    """sha256 and size of each of ``paths`` as the drive returns it (None: unreadable).

    For small files: every file's cached pages are dropped and its read from the drive is
    requested up front (``POSIX_FADV_WILLNEED``), so the drive serves the whole group at
    once instead of one waited-for read per file; then each is read and hashed (with its
    expected size in ``sizes``: one read of the whole file, one that confirms its end).
    """
    fds: list[int | None] = []
    flags = os.O_RDONLY | _O_BINARY | _O_CLOEXEC
    try:
        for path in paths:
            try:
                fd = os.open(path, flags)
            except OSError:
                fds.append(None)
                continue
            fds.append(fd)
            if _FADVISE:
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
                except OSError:
                    fds[-1] = None
                    os.close(fd)
        out: list[tuple[str, int] | None] = []
        for i, handle in enumerate(fds):
            if handle is None:
                out.append(None)
                continue
            try:
                out.append(_hash_fd(handle, sizes[i] if sizes is not None else BUFFER))
            except OSError:
                out.append(None)
        return out
    finally:
        for handle in fds:
            if handle is not None:
                os.close(handle)


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


def matches(path: str | Path, sha256: str, size: int, *, drop_cache: bool = True) -> bool:
    """True when ``path`` exists and holds exactly the recorded bytes."""
    try:
        return hash_file(path, drop_cache=drop_cache, expected_size=size) == (sha256, size)
    except OSError:
        return False


def join_relative(root: str | Path, relative: str) -> str:
    """``root / relative`` (a string) for a path already stored as safe (no ``..``, not
    absolute).

    A cheap check for the hot path: :func:`archiver_app.validation.safe_join` also resolves
    symlinks, which costs a ``stat`` per path component and file.
    """
    if (
        relative.startswith(("/", "\\", "../"))
        or "/../" in relative
        or relative.endswith("/..")
        or relative == ".."
        or relative[1:2] == ":"
    ):
        raise ValueError(f"unsafe relative path {relative!r}")
    return os.path.join(root, relative)


def discard(temp: str | Path) -> None:
    """Remove one of our temporary files (never a file under its final name)."""
    assert os.fspath(temp).endswith(TEMP_SUFFIX)
    # the drive may be gone or read-only: the staging folder is cleaned by the next run
    with contextlib.suppress(OSError):
        os.unlink(temp)


def make_folders(path: str) -> list[str]:
    """Create folder ``path`` with any missing parents; return the folders whose entries
    this changed (the parent of each folder created), which must be fsynced too before a
    file under ``path`` counts as durable."""
    created = []
    p = path
    while not os.path.isdir(p):
        created.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    os.makedirs(path, exist_ok=True)
    return [os.path.dirname(c) for c in created]


def install(temp: str | Path, final: str | Path) -> None:
    """Rename a verified temporary file to its final name (creating folders)."""
    os.makedirs(os.path.dirname(final), exist_ok=True)
    os.replace(temp, final)


def copy_verified(
    source: Path,
    final: Path,
    sha256: str,
    size: int,
    *,
    guard: Callable[[], AbstractContextManager[object]] | None = None,
) -> None:
    """The whole protocol for one file into a folder on the same drive as ``final``.

    Used to bring a copy back to the laptop (restore, repair). The temporary file sits
    next to ``final`` so that the rename stays on one file system. ``guard``: a context the
    rename happens inside (for a repair: the database's write lock, the file's row checked
    unchanged); an exception from it discards the temporary file and ``final`` is untouched.

    Raises:
        SourceError, SourceMismatch, DestinationError: as :func:`copy_to_temp`; also
        DestinationError("mismatch") when the written copy does not read back right.
    """
    changed = make_folders(os.fspath(final.parent))
    temp = copy_to_temp(source, final.parent, sha256, size)
    try:
        fd = os.open(temp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        if not matches(temp, sha256, size):
            raise DestinationError("mismatch", f"{final} did not read back as written")
        with guard() if guard is not None else contextlib.nullcontext():
            os.replace(temp, final)
    except OSError as exc:
        discard(temp)
        raise classify(exc) from exc
    except BaseException:
        discard(temp)
        raise
    if os.name != "nt":
        for folder in [os.fspath(final.parent), *reversed(changed)]:
            fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
