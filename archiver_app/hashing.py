"""Streaming SHA-256 of files and byte streams (constant memory, large buffers).

:func:`hash_file` reads what the drive returns (cached pages dropped first): the read-back
check of every verified copy (:mod:`archiver_app.durable`) and of the mirror's scrub.
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

BUFFER = 1024 * 1024
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_FADVISE = hasattr(os, "posix_fadvise")


def sha256_file(path: Path, buffer: int = BUFFER) -> str:
    """Hex SHA-256 of the file at ``path``."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(buffer):
            digest.update(chunk)
    return digest.hexdigest()


def hash_file(
    path: str | Path, *, drop_cache: bool = True, expected_size: int = BUFFER
) -> tuple[str, int]:
    """sha256 and size of ``path`` as the drive returns it (cached pages dropped first)."""
    fd = os.open(path, os.O_RDONLY | _O_BINARY | _O_CLOEXEC)
    try:
        if drop_cache and _FADVISE:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return hash_fd(fd, expected_size)
    finally:
        os.close(fd)


def hash_fd(fd: int, expected_size: int) -> tuple[str, int]:
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
