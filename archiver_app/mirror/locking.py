"""One writer per destination: an advisory lock file on the drive itself.

Two mirror runs (or a mirror and a scrub) on the same drive never write at once: each
holds ``<mount>/Archiver/.archiver-lock`` locked (``flock`` on POSIX, ``msvcrt.locking``
on Windows) for as long as it writes. The operating system releases the lock when the
process dies, even by SIGKILL, so a crash never leaves a drive locked. "Safe to unplug"
is simply "nobody holds the lock".
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from archiver_app.errors import ArchiverError
from archiver_app.filelock import try_lock, unlock

LOCK_NAME = ".archiver-lock"


class DestinationBusy(ArchiverError):
    """Another run is writing to this destination."""


def lock_path(mount: Path) -> Path:
    return mount / "Archiver" / LOCK_NAME


@contextmanager
def destination_lock(mount: Path, *, label: str = "", wait: float = 0.0) -> Iterator[None]:
    """Hold the destination's write lock; wait up to ``wait`` seconds for it.

    Raises:
        DestinationBusy: another process (or another run in this one) holds it.
        OSError: the drive cannot be written at all (read-only, gone).
    """
    path = lock_path(mount)
    path.parent.mkdir(exist_ok=True)  # never parents: the drive's root must be there
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        while not try_lock(fd):
            if time.monotonic() >= deadline:
                raise DestinationBusy(
                    f"drive {label or mount} is busy: another mirror or scrub is writing to it"
                )
            time.sleep(0.05)
        try:
            holder = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(holder).encode(), 0)
            yield
        finally:
            unlock(fd)
    finally:
        os.close(fd)


def is_busy(mount: Path) -> bool:
    """True while some run holds the destination's lock (not safe to unplug)."""
    path = lock_path(mount)
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        if try_lock(fd):
            unlock(fd)
            return False
        return True
    finally:
        os.close(fd)
