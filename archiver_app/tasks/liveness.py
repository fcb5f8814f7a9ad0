"""Whether a process of this computer is gone: a killed job's runner, a temporary file's writer.

A pid is taken only as proof of death. A pid in use may belong to a process that got it
since (pids are reused), so "not gone" means "not known to be gone": callers then fall back
on what they did before (a job's lease running out, a file's age).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: Windows: ``OpenProcess`` access right, ``GetLastError`` for a pid that names no process,
#: and the exit code of a process that has not exited.
_QUERY_LIMITED_INFORMATION = 0x1000
_ERROR_INVALID_PARAMETER = 87
_STILL_ACTIVE = 259


def process_gone(pid: int) -> bool:
    """Whether no process ``pid`` runs on this computer any more (a zombie is gone too:
    killed, and only waiting for its parent to read its status)."""
    if pid <= 0 or pid == os.getpid():
        return False
    if sys.platform == "win32":
        return _gone_on_windows(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process: it exists
        return False
    try:  # Linux: state "Z" (zombie) or "X" (dead) after the name in parentheses
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[:1]
    except OSError:
        return False
    return state in (["Z"], ["X"])


def _gone_on_windows(pid: int) -> bool:
    import ctypes

    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
    handle = kernel32.OpenProcess(_QUERY_LIMITED_INFORMATION, False, pid)
    if not handle:
        return bool(kernel32.GetLastError() == _ERROR_INVALID_PARAMETER)
    try:
        code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return False
        return code.value != _STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)
