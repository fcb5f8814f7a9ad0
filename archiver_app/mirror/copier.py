"""The mirror's verified copies: the steps of :mod:`archiver_app.durable`, run in batches.

Nothing is ever written under a file's final name except by the rename of a temporary
file whose bytes were made durable and then re-read and hashed on the destination, and
found equal to the file's recorded sha256. So a source that no longer matches its record
can never produce a copy that counts: either the source is hashed in the same pass that
writes the temporary file (``hash_source=True``), or the kernel copies it and the source
is hashed only when the copy does not read back as recorded, to tell a rotten source from
a bad write (``hash_source=False`` + :func:`blame`: mirroring, restores and repairs, where
this saves a whole hash pass).

The steps themselves (:func:`copy_to_temp`, :func:`sync_filesystem`, :func:`install`, the
typed errors and :func:`classify`) are :mod:`archiver_app.durable`'s, named here for the
mirror's modules. This module adds what only the mirror needs: whether one ``syncfs`` per
batch beats an fsync per file (on Linux it makes a whole batch of temporary files, then a
whole batch of renames, durable for far less than an ``fsync`` per file for thousands of
small files, with the same guarantee), and grouped read-back hashing of small files. A copy
brought back to the laptop (restore, repair) is one :func:`archiver_app.durable.verified_copy`
with the recorded hash.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from archiver_app.durable import (
    BUFFER,
    TEMP_SUFFIX,
    DestinationError,
    SourceError,
    SourceMismatch,
    blame,
    copy_to_temp,
    discard,
    has_syncfs,
    install,
    make_folders,
    sync_filesystem,
)
from archiver_app.durable import (
    classify as classify_error,
)
from archiver_app.hashing import hash_fd, hash_file
from archiver_app.mirror.outcomes import StopReason


def classify(exc: OSError, marker: Path | None = None) -> DestinationError:
    """:func:`archiver_app.durable.classify`, with its kind as the mirror's
    :class:`~archiver_app.mirror.outcomes.StopReason` (the same word, as a code)."""
    error = classify_error(exc, marker)
    error.kind = StopReason(error.kind)
    return error


_O_BINARY = getattr(os, "O_BINARY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_FADVISE = hasattr(os, "posix_fadvise")


def use_syncfs(destination: Path, library_root: Path) -> bool:
    """Whether one ``syncfs`` per batch beats an fsync per file for ``destination``.

    Yes on Linux when the destination is its own file system (a drive); no when it shares
    the library's file system, where ``syncfs`` would also flush everything else being
    written there.
    """
    if not has_syncfs():
        return False
    try:
        return destination.stat().st_dev != library_root.stat().st_dev
    except OSError:
        return False


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
                out.append(hash_fd(handle, sizes[i] if sizes is not None else BUFFER))
            except OSError:
                out.append(None)
        return out
    finally:
        for handle in fds:
            if handle is not None:
                os.close(handle)


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


__all__ = [
    "BUFFER",
    "TEMP_SUFFIX",
    "DestinationError",
    "SourceError",
    "SourceMismatch",
    "blame",
    "classify",
    "copy_to_temp",
    "discard",
    "hash_file",
    "hash_small_files",
    "install",
    "join_relative",
    "make_folders",
    "matches",
    "sync_filesystem",
    "use_syncfs",
]
