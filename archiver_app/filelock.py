"""Advisory locks on files, released by the operating system when their process dies.

``flock`` on POSIX, ``msvcrt.locking`` on Windows: both lock an open file (a second open of
the same file, in this process or another, does not get the lock), and a process killed
by SIGKILL or a power cut holds nothing afterwards. So "somebody holds this lock" means
"somebody is doing this work right now", never "somebody crashed while doing it".
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path


def try_lock(fd: int) -> bool:
    """Lock the open file ``fd`` without waiting; False when someone else holds it."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def unlock(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def held_or_busy(path: Path) -> Iterator[bool]:
    """Hold the lock file ``path`` (True), or yield False at once when someone holds it.

    The file is removed when released (where the system allows removing an open file), so
    locks for many different things leave no files behind; a lock taken on a file that its
    holder removed meanwhile is let go and taken again on the new file.
    """
    path.parent.mkdir(exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if not try_lock(fd):
            os.close(fd)
            yield False
            return
        try:
            current = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            current = False
        if current:
            break
        unlock(fd)  # the file we locked was removed by its last holder: use the new one
        os.close(fd)
    try:
        yield True
    finally:
        with contextlib.suppress(OSError):  # Windows keeps an open file
            os.unlink(path)
        unlock(fd)
        os.close(fd)
