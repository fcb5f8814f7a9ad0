"""The priority of background work: lower than the app's, and kept so in what it starts.

A background child lowers itself (:func:`lower_my_priority`: ``nice`` on Unix, the "below
normal" class on Windows) and, running as root, keeps the programs it starts from raising
theirs (:func:`keep_descendants_below_the_app`).

The programs a child starts inherit its priority. But Playwright starts the browser in a
session of its own, and Linux's scheduler (with autogroups, the default on most
distributions) shares the processor fairly between *sessions* before it looks at ``nice``
inside one: a crawl's Chromium, however niced, then gets as much of the processor as the
whole app, window included. On a two-core laptop during a crawl that is a window waiting
100-300 ms for a core. Each session carries its own priority (``/proc/<pid>/autogroup``);
giving the browser's session the worker's priority puts it back below the window.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

#: How much lower than the app background work runs (Unix ``nice`` increment).
BACKGROUND_NICE = 10

_PROC = Path("/proc")
_LINUX = sys.platform.startswith("linux")


#: Windows ``SetPriorityClass`` value: below normal, above idle.
_BELOW_NORMAL_PRIORITY_CLASS = 0x4000


def lower_my_priority(nice: int) -> None:
    """Lower this process's priority: ``nice`` on Unix, "below normal" on Windows (its
    children, a browser included, inherit the class)."""
    with contextlib.suppress(OSError, AttributeError):
        if hasattr(os, "nice"):
            os.nice(nice)
        elif sys.platform == "win32":
            import ctypes

            kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
            kernel32.SetPriorityClass(kernel32.GetCurrentProcess(), _BELOW_NORMAL_PRIORITY_CLASS)


#: Linux ``prctl`` option and the capability that lets a process raise its own priority.
_PR_CAPBSET_DROP = 24
_CAP_SYS_NICE = 23


def keep_descendants_below_the_app() -> None:
    """Programs this child starts (a browser) may not raise their priority above it.

    Chromium puts its main threads at nice -8 when it may (running as root, or with
    ``CAP_SYS_NICE``), which outranks the window it works for. Dropping the capability
    from this process's bounding set keeps it from every program started from here on;
    without the capability (an ordinary user) there is nothing to drop.
    """
    if not _LINUX or os.geteuid() != 0:
        return
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_CAPBSET_DROP, _CAP_SYS_NICE, 0, 0, 0)


def _stat(pid: str) -> tuple[int, int] | None:
    """(parent pid, session id) of ``pid``, or None if it is gone."""
    try:
        raw = (_PROC / pid / "stat").read_bytes()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()  # after "pid (comm) "
    try:
        return int(fields[1]), int(fields[3])
    except (IndexError, ValueError):
        return None


def descendant_sessions(root: int | None = None) -> list[int]:
    """Pids of ``root``'s descendants (default: this process) that lead their own session."""
    root = os.getpid() if root is None else root
    children: dict[int, list[tuple[int, int]]] = {}
    try:
        entries = [p.name for p in _PROC.iterdir() if p.name.isdigit()]
    except OSError:
        return []
    for name in entries:
        info = _stat(name)
        if info is not None:
            children.setdefault(info[0], []).append((int(name), info[1]))
    leaders, todo = [], [root]
    while todo:
        for pid, session in children.get(todo.pop(), ()):
            if session == pid:
                leaders.append(pid)
            todo.append(pid)
    return leaders


def keep_started_sessions_at_my_priority() -> int:
    """Give the sessions this process's descendants started its own ``nice`` (Linux).

    Call it after starting a program that starts its own session (a browser through
    Playwright). A foreground process (nice 0) changes nothing. Returns how many sessions
    were lowered; never raises (a missing ``/proc``, a kernel without autogroups, a process
    that just ended: nothing to do).
    """
    if not _LINUX:
        return 0
    try:
        mine = os.getpriority(os.PRIO_PROCESS, 0)
    except OSError:
        return 0
    if mine <= 0:
        return 0
    lowered = 0
    for pid in descendant_sessions():
        path = _PROC / str(pid) / "autogroup"
        with contextlib.suppress(OSError, ValueError):
            current = int(path.read_text().split()[-1])  # "/autogroup-42 nice 0"
            if current < mine:
                path.write_text(str(mine))
                lowered += 1
    return lowered
