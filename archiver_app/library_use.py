"""Which processes have a library open: one registration each, let go when the process dies.

Every process that opens a library (the app, ``archiver serve``, a worker, any command)
holds a small file in ``<library>/.archiver-in-use/`` locked for as long as it has the
library open (:mod:`archiver_app.filelock`). The operating system lets go of the lock
when its process ends, even by SIGKILL or a power cut: a file nobody holds is a
registration left by a process that is gone, ignored and removed by the next look. The
file says who holds it (pid, host, which front end) so that a refusal can say whom to
close.

A move of the library (:mod:`archiver_app.library_move`) is refused while another process
holds one (:func:`refuse_if_open`), and holds its own, naming where it moves the library,
for as long as it runs, so that a process opening the library meanwhile is refused
(:func:`refuse_if_moving`: one file of a known name, so opening lists no folder). Each side
writes its own file before it reads the other's, so whichever comes second sees the first.

A registration is written, then locked, then checked to be still there under its name: a
look that found it not yet locked (and so removed it as left over) only makes its holder
try again under a new name. A folder that cannot be written (read-only media) gets no
registration; the library still opens.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

from archiver_app.errors import LibraryError
from archiver_app.filelock import try_lock, unlock
from archiver_app.tasks.liveness import process_gone

FOLDER = ".archiver-in-use"
SUFFIX = ".open"
#: The registration of a move in progress (one at a time).
MOVING = f"moving{SUFFIX}"
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)


class LibraryInUseError(LibraryError):
    """Another process has the library open (or is moving it)."""


#: What this process is, as a refusal names it: set once by the front end that runs.
_process_name = ["another Archiver process"]


def name_this_process(name: str) -> None:
    """What other processes call this one when it holds a library (``Archiver``,
    ``archiver serve``): the entry point says it once, before any library opens."""
    _process_name[0] = name


@dataclass(frozen=True)
class Holder:
    """A process that has the library open."""

    pid: int
    host: str
    what: str
    moving_to: str | None = None  # a move's registration: where it moves the library

    def named(self) -> str:
        here = self.host in ("", socket.gethostname())
        return f"{self.what} (pid {self.pid}{'' if here else f' on {self.host}'})"


#: This process's own registrations (path -> who): never opened to be looked at. Closing
#: any descriptor of a file drops the process's locks on it where ``flock`` is emulated by
#: POSIX locks (NFS, SMB: a shared library's folder), and a lock test from the process
#: that holds it succeeds there: a look at its own file would let go of it.
_own: dict[Path, Holder] = {}
_own_lock = threading.Lock()


class Use:
    """This process's registration in one library folder; :meth:`release` lets it go.
    Threading: release from any one thread, once (again is a no-op)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self._fd = path, fd

    def follow(self, root: Path) -> None:
        """The library folder was renamed to ``root`` (a move): the file went with it."""
        with _own_lock:
            holder = _own.pop(self.path, None)
            self.path = root / FOLDER / self.path.name
            if holder is not None:
                _own[self.path] = holder

    def release(self) -> None:
        fd, self._fd = self._fd, -1
        if fd < 0:
            return
        with _own_lock:
            _own.pop(self.path, None)
        with contextlib.suppress(OSError):  # removed with the old folder, or Windows
            os.unlink(self.path)
        # what processes killed since left is removed (a look removes what nobody holds):
        # here, not as a library opens, which lists no folder
        holders(self.path.parent.parent)
        with contextlib.suppress(OSError):  # only when no other registration is left
            os.rmdir(self.path.parent)
        with contextlib.suppress(OSError):
            unlock(fd)
        os.close(fd)


def hold(root: Path, *, moving_to: Path | None = None) -> Use | None:
    """Register this process as having the library at ``root`` open (``moving_to``: as
    moving it there). None when the folder cannot be written: nothing stops the open."""
    folder = root / FOLDER
    about = {"pid": os.getpid(), "host": socket.gethostname(), "what": _process_name[0]}
    if moving_to is not None:
        about["moving_to"] = str(moving_to)
    for _attempt in range(5):
        name = MOVING if moving_to else f"{os.getpid()}-{secrets.token_hex(6)}{SUFFIX}"
        path = folder / name
        try:
            folder.mkdir(exist_ok=True)  # never the library folder itself
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _O_CLOEXEC | _O_BINARY)
        except FileNotFoundError:
            continue  # the folder went with the last registration's release: again
        except FileExistsError:  # another move's: refused unless its process is gone
            refuse_if_moving(root, own=True)
            continue
        except OSError:
            return None
        try:
            os.write(fd, json.dumps(about).encode())
            if _lock(fd) and os.path.samestat(os.fstat(fd), os.stat(path)):
                with _own_lock:
                    _own[path] = Holder(
                        os.getpid(),
                        socket.gethostname(),
                        _process_name[0],
                        None if moving_to is None else str(moving_to),
                    )
                return Use(path, fd)
        except OSError:
            pass  # removed meanwhile as left over: a new name
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)
    return None


def hold_to_open(root: Path) -> Use:
    """:func:`hold` as a library opens: refused (nothing held) while another process
    moves it; an empty :class:`Use` where nothing could be held."""
    use = hold(root) or Use(root / FOLDER / MOVING, -1)
    try:
        refuse_if_moving(root)
    except LibraryInUseError:
        use.release()
        raise
    return use


def _lock(fd: int) -> bool:
    """Lock a new registration; True on a file system without locks too (judged by its
    process's pid there)."""
    try:
        return try_lock(fd)
    except OSError:
        return True


def holders(root: Path, *, own: bool = False) -> list[Holder]:
    """The other processes that have the library at ``root`` open now; ``own``: this
    process's registrations too (another part of it with the library open)."""
    folder = root / FOLDER
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    me, host = os.getpid(), socket.gethostname()
    found = []
    for name in names:
        if not name.endswith(SUFFIX):
            continue
        holder = _holder(folder / name)
        if holder is not None and (own or not (holder.pid == me and holder.host == host)):
            found.append(holder)
    return found


def _holder(path: Path) -> Holder | None:
    """Who holds ``path``; None (and the file removed) when nobody does any more."""
    with _own_lock:
        mine = _own.get(path)
    if mine is not None:
        return mine  # this process's: held, and not opened (see ``_own``)
    try:
        fd = os.open(path, os.O_RDONLY | _O_CLOEXEC | _O_BINARY)
    except OSError:
        return None  # let go meanwhile
    try:
        holder = _read(fd, path.name)
        try:
            free = try_lock(fd)
        except OSError:  # a file system without locks: judged by the process alone
            free = holder.host == socket.gethostname() and process_gone(holder.pid)
        if not free:
            return holder
        with contextlib.suppress(OSError):
            os.unlink(path)  # its process ended without letting go
        with contextlib.suppress(OSError):
            unlock(fd)
        return None
    finally:
        os.close(fd)


def _read(fd: int, name: str) -> Holder:
    try:
        about = json.loads(os.read(fd, 4096).decode("utf-8"))
        moving = about.get("moving_to")
        return Holder(
            int(about["pid"]),
            str(about["host"]),
            str(about["what"]),
            None if moving is None else str(moving),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pid = name.partition("-")[0]
        return Holder(int(pid) if pid.isdigit() else 0, "", "another Archiver process")


def refuse_if_open(root: Path) -> None:
    """Raise :class:`LibraryInUseError` while a process has the library open (this one
    too: the app closes its library before it moves it)."""
    found = [h for h in holders(root, own=True) if h.moving_to is None]
    if found:
        names = ", ".join(h.named() for h in found[:3])
        raise LibraryInUseError(
            f"the library is open in {names}: close it first",
            details=f"{root}: a library is moved only while nothing else has it open.",
        )


def refuse_if_moving(root: Path, *, own: bool = False) -> None:
    """Raise :class:`LibraryInUseError` while another process (``own``: or this one)
    moves the library. One file of a known name: opening a library lists no folder."""
    h = _holder(root / FOLDER / MOVING)
    if h is not None and h.moving_to and (own or (h.pid, h.host) != (os.getpid(), _host())):
        raise LibraryInUseError(
            f"the library at {root} is being moved to {h.moving_to} by {h.named()}: "
            f"open it there once the move is done"
        )


def _host() -> str:
    return socket.gethostname()
