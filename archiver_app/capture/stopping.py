"""A page's recording stopped as soon as its cancel token is set, and what it left removed.

A page load can take a minute (a slow site, a page that never goes quiet); checking the
token between steps made an abort wait for all of it. :func:`record_unless_cancelled`
runs the recording as a task and cancels that task within ``poll`` seconds of the token
being set: the recording's own clean-up (its tab closed, its WARC left as ``.part``)
runs, then :func:`discard_capture` removes the pending row and the files of the folder,
and :class:`Cancelled` is raised for the caller to record the page as not captured.
Saving a recorded page is never interrupted: only the recording is raced.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from archiver_app.durable import is_temp
from archiver_app.tasks import Cancelled, CancelToken
from archiver_app.warc.writer import PART_SUFFIX

if TYPE_CHECKING:
    from archiver_app.library import Library

T = TypeVar("T")


async def record_unless_cancelled(
    recording: Coroutine[Any, Any, T],
    cancel: CancelToken | None,
    *,
    lib: Library,
    snapshot_id: int,
    folder: Path,
    poll: float = 0.1,
) -> T:
    """Await ``recording``; when ``cancel`` is set first (or this task is cancelled),
    stop it, discard the capture (:func:`discard_capture`) and raise :class:`Cancelled`
    (or re-raise the task's cancellation)."""
    task = asyncio.ensure_future(recording)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=poll)
            if done:
                return task.result()
            if cancel is not None and cancel.cancelled:
                raise Cancelled
    except BaseException:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):  # its own clean-up runs to its end
                await asyncio.shield(task)
        await asyncio.shield(asyncio.to_thread(discard_capture, lib, snapshot_id, folder))
        raise


def discard_capture(lib: Library, snapshot_id: int, folder: Path) -> None:
    """Remove a cancelled capture's ``pending`` row and its unfinished files (a ``.part``
    WARC, temporary files), then its folder if that left it empty; a folder holding
    anything else is kept (nothing named as final is deleted)."""
    from archiver_app.capture.persist import delete_pending

    delete_pending(lib, snapshot_id)
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            if entry.is_file() and (entry.name.endswith(PART_SUFFIX) or is_temp(entry.name)):
                entry.unlink()
        folder.rmdir()
