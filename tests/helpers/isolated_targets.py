"""Functions the child-process tests run through ``run_isolated`` (importable by name)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from archiver_app.tasks import CancelToken, Progress, ProgressUpdate


def count_to(
    library: Library, n: int, *, label: str, progress: Progress, cancel: CancelToken
) -> dict[str, Any]:
    for i in range(1, n + 1):
        progress(ProgressUpdate(i, n, label))
    with library.session() as s:
        snapshots = s.query(Snapshot).count()
    return {
        "root": str(library.root),
        "snapshots": snapshots,
        "pid": os.getpid(),
        "nice": os.nice(0) if hasattr(os, "nice") else 0,
        "n": n,
    }


def until_cancelled(
    library: Library, marker: str, *, progress: Progress, cancel: CancelToken
) -> None:
    """Say it started (a file), then wait for cancellation and record that it came."""
    Path(marker).write_text("started")
    while not cancel.wait(0.05):
        pass
    Path(marker).write_text("cancelled")
    cancel.raise_if_cancelled()


def report_once_the_app_is_gone(
    library: Library, marker: str, *, progress: Progress, cancel: CancelToken
) -> None:
    """Say it started, wait until the app is gone (this process has another parent), then
    report progress, as an import does ten times a second; record what came of it."""
    app = os.getppid()
    Path(marker).write_text("started")
    while os.getppid() == app:
        time.sleep(0.05)
    try:
        progress(ProgressUpdate(1, None, "still working"))
    except OSError as exc:  # the work would fail with it (an import: "Broken pipe")
        Path(marker).write_text(f"raised {type(exc).__name__}")
        raise
    cancel.wait(30)
    Path(marker).write_text("cancelled" if cancel.cancelled else "went on")


def refuse(library: Library, *, progress: Progress, cancel: CancelToken) -> None:
    raise InputError("That address is not a web page.", details="ftp://example.org/")


class Odd(Exception):
    def __init__(self, a: int, b: int) -> None:  # pickles badly: args do not match
        super().__init__(f"odd {a} {b}")


def raise_odd(library: Library, *, progress: Progress, cancel: CancelToken) -> None:
    raise Odd(1, 2)


def die(library: Library, *, progress: Progress, cancel: CancelToken) -> None:
    time.sleep(0.1)
    os._exit(7)


def started_program_may_raise_priority(
    library: Library, *, progress: Progress, cancel: CancelToken
) -> bool:
    """Whether a program this child starts can lower its nice value below the child's."""
    import subprocess
    import sys

    code = (
        "import os\n"
        "try:\n    os.nice(-15)\n    print('raised')\n"
        "except OSError:\n    print('refused')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "raised"


def collector_state(library: Library, *, progress: Progress, cancel: CancelToken) -> bool:
    """Whether Python collects cycles at allocations in this child."""
    import gc

    return gc.isenabled()
