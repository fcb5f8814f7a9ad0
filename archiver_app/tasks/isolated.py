"""Run a long core function in a child process, with progress, cancellation and its result.

Why: a desktop app's background work (a crawl's WARC writing and indexing, a mirror's
hashing, a migration's moves) is Python code, and in the GUI's own process every worker
thread competes with the GUI thread for the interpreter lock: each call a repaint makes
into Python waits for it. In a child process the work has its own interpreter, and it runs
at a lower scheduling priority (``nice``), so on a busy two-core laptop the window keeps
the processor it needs to stay fluid. Python collects cycles there at allocations, as in
any process but the app's (:mod:`archiver_app.tasks.collector`), whatever it inherited.

Protocol (one duplex pipe, pickled tuples): the parent sends ``"cancel"``; the child sends
``("progress", ProgressUpdate)`` at most ten times a second, then one of ``("result",
value)``, ``("cancelled", None)`` or ``("error", exception)``. When the parent goes away
the child sees the pipe close (or a progress report fail to reach it) and cancels its
work, which then stops cleanly at its next check (never mid-write): an import is undone and
its job reads cancelled, not failed. A child that dies without an answer (killed, out of memory) is
reported as an :class:`~archiver_app.errors.ArchiverError`, never as a silent success.

The target is a module-level function (it reaches the child by its qualified name, the way
pickle sends functions), called as ``target(library, *args, progress=..., cancel=...,
**kwargs)`` with the child's own :class:`Library` (same root and
database). Arguments and results cross the pipe pickled: plain data only.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import pickle
import sys
import threading
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archiver_app.errors import ArchiverError
from archiver_app.tasks.collector import collect_automatically
from archiver_app.tasks.priority import (
    BACKGROUND_NICE,
    keep_descendants_below_the_app,
    lower_my_priority,
)
from archiver_app.tasks.progress import (
    Cancelled,
    CancelToken,
    Progress,
    ThrottledProgress,
    null_progress,
)

if TYPE_CHECKING:
    from archiver_app.library import Library

#: Seconds a cancelled child gets to stop at its next check before it is terminated.
STOP_GRACE = 60.0


def library_ref(library: Library) -> tuple[str, str | None]:
    """What a child needs to open the same library: its root and, for a server database,
    the URL (an SQLite library's database is found from its root)."""
    url = library.engine.url
    if url.get_backend_name() == "sqlite":
        return str(library.root), None
    return str(library.root), url.render_as_string(hide_password=False)


def prepare() -> None:
    """Load what starting a child needs, ahead of the first start (a few milliseconds).

    The first child an app starts also loads multiprocessing's modules and, on Unix,
    starts its resource-tracker process. Done by the worker thread that starts the child,
    that Python work contends with the GUI thread for the interpreter lock (the window
    froze for a fifth of a second); the app calls this once from its own thread, as the
    first rows of its window come in.
    """
    import multiprocessing.connection
    import multiprocessing.reduction
    import multiprocessing.spawn  # noqa: F401 - loaded for the first start

    if os.name == "posix":
        from multiprocessing import popen_spawn_posix, resource_tracker  # noqa: F401

        resource_tracker.ensure_running()


def run_isolated(
    target: Callable[..., Any],
    library: Library,
    *args: Any,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    nice: int = BACKGROUND_NICE,
    **kwargs: Any,
) -> Any:
    """Call ``target`` in a child process over the same library; block until it ends.

    Raises what the target raised (with the child's traceback as a note), ``Cancelled``
    when it stopped because ``cancel`` was set, and :class:`ArchiverError` when the child
    died without answering.
    """
    if "<" in target.__qualname__:  # a lambda or a nested function: no name to import
        raise TypeError(f"run_isolated needs a module-level function, not {_named(target)}")
    root, url = library_ref(library)
    ctx = multiprocessing.get_context("spawn")
    ours, theirs = ctx.Pipe(duplex=True)
    child = ctx.Process(
        target=child_main,
        # On Linux the child is born at the lower priority (see _start); elsewhere it
        # lowers its own once running.
        args=(theirs, target, root, url, args, kwargs, 0 if _LINUX else nice),
        name=f"archiver: {target.__name__}",
    )
    _start(child, nice)
    theirs.close()
    asked_to_stop = False
    try:
        while True:
            if cancel is not None and cancel.cancelled and not asked_to_stop:
                asked_to_stop = _send(ours, "cancel")
            if not ours.poll(0.1):
                if not child.is_alive() and not ours.poll(0):
                    break
                continue
            try:
                kind, payload = ours.recv()
            except (EOFError, OSError):
                break
            if kind == "progress":
                progress(payload)
            elif kind == "result":
                return payload
            elif kind == "cancelled":
                raise Cancelled
            elif kind == "error":
                raise payload
        child.join(5)
        if cancel is not None and cancel.cancelled:
            raise Cancelled
        raise ArchiverError(
            "The background worker stopped before it finished.",
            details=f"{_named(target)} ended with exit code {child.exitcode} and no answer.",
        )
    finally:
        ours.close()  # a child still running sees the pipe close and cancels itself
        child.join(STOP_GRACE)
        if child.is_alive():
            child.terminate()
            child.join(5)


def probe(library: Library, *, progress: Progress, cancel: CancelToken) -> dict[str, Any]:
    """A child that only opens the library and says who it is and whether Python collects
    cycles there at allocations (the app's self-test)."""
    return {"pid": os.getpid(), "root": str(library.root), "collects": gc.isenabled()}


_LINUX = sys.platform.startswith("linux")


def _start(child: multiprocessing.process.BaseProcess, nice: int) -> None:
    """Start ``child`` already ``nice`` steps lower in priority (Linux).

    A new interpreter spends its first second importing at whatever priority it is born
    with, competing with the window for the processor; on Linux a priority belongs to a
    thread and a child inherits its parent thread's, so a short-lived thread lowers its own
    and starts the child (the app's threads keep theirs).
    """
    if not (nice and _LINUX):
        child.start()
        return
    failed: list[BaseException] = []

    def start() -> None:
        try:
            with contextlib.suppress(OSError):
                me = threading.get_native_id()
                os.setpriority(os.PRIO_PROCESS, me, os.getpriority(os.PRIO_PROCESS, me) + nice)
            child.start()
        except BaseException as exc:  # raised again in the calling thread
            failed.append(exc)

    starter = threading.Thread(target=start, name="start background worker")
    starter.start()
    starter.join()
    if failed:
        raise failed[0]


def _send(conn: Connection, message: object) -> bool:
    try:
        conn.send(message)
    except (OSError, ValueError):
        return False
    return True


def _named(target: Callable[..., Any]) -> str:
    return f"{target.__module__}.{target.__qualname__}"


def child_main(  # noqa: PLR0917 - the Process(args=...) call
    conn: Connection,
    target: Callable[..., Any],
    root: str,
    url: str | None,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    nice: int,
) -> None:
    """The child's side (runs in the spawned process)."""
    collect_automatically()  # the app collects on its GUI thread only; the work, as Python does
    if nice:
        lower_my_priority(nice)
    keep_descendants_below_the_app()
    cancel = CancelToken()
    lock = threading.Lock()

    def send(message: tuple[str, Any]) -> None:
        with lock:
            conn.send(message)

    def listen() -> None:
        try:
            while True:
                if conn.recv() == "cancel":
                    cancel.cancel()
        except (EOFError, OSError):
            cancel.cancel()  # the app went away: stop at the next check

    def report(update: Any) -> None:
        try:
            send(("progress", update))
        except (OSError, ValueError):  # the app went away: a cancel, not the work's error
            cancel.cancel()

    threading.Thread(target=listen, name="parent", daemon=True).start()
    progress = ThrottledProgress(report, interval=0.1)
    try:
        from archiver_app.library import Library

        with Library.open(Path(root), create=False, database_url=url) as library:
            result = target(library, *args, progress=progress, cancel=cancel, **kwargs)
        last = progress.latest()
        if last is not None:
            send(("progress", last))
        send(("result", result))
    except Cancelled:
        _quietly(send, ("cancelled", None))
    except BaseException as exc:  # everything goes back to the app, which reports it
        _quietly(send, ("error", _portable(exc)))
    finally:
        conn.close()


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else an ArchiverError saying what it was; either
    way with the child's traceback attached as a note."""
    text = "".join(traceback.format_exception(exc))
    copy: BaseException
    try:
        # our own object, pickled and read back here to learn whether the app can read it
        copy = pickle.loads(pickle.dumps(exc))  # noqa: S301
        if not isinstance(copy, BaseException):
            raise TypeError
    except Exception:
        copy = ArchiverError(f"{type(exc).__name__}: {exc}", details=text)
    copy.add_note(f"In the background worker:\n{text}")
    return copy


def _quietly(send: Callable[[tuple[str, Any]], None], message: tuple[str, Any]) -> None:
    with contextlib.suppress(OSError, ValueError, pickle.PicklingError):
        send(message)
