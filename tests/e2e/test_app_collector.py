"""The app's process, started as ``archiver`` starts it, collects cycles only on its GUI
thread, from a timer: never at an allocation, on whichever thread made it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Runs the app (``gui.app.run_gui``) over a new library; once its window is up and its
#: objects set aside, makes a cycle and the objects that make a pass due, says what
#: became of the cycle, and quits.
APP = r"""
import gc, json, sys, threading, weakref
from pathlib import Path
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from archiver_app.gui.app import prepare_environment, run_gui

prepare_environment()
app = QApplication(sys.argv[:1])
seen = {}

class Node:
    def __init__(self):
        self.me = self
    def __del__(self):
        seen["freed on"] = threading.current_thread().name

def started():
    if gc.get_freeze_count() == 0:  # the window's objects are not set aside yet
        QTimer.singleShot(20, started)
        return
    seen["automatic"] = gc.isenabled()
    ref = weakref.ref(Node())
    seen["kept"] = [[] for _ in range(50_000)]  # far more than a pass waits for
    seen["alive after the allocations"] = ref() is not None
    def look(tries=[0]):
        tries[0] += 1
        if ref() is not None and tries[0] < 250:
            QTimer.singleShot(20, look)
            return
        seen["alive at the end"] = ref() is not None
        app.quit()
    QTimer.singleShot(20, look)

QTimer.singleShot(0, started)
code = run_gui(Path(sys.argv[1]), None)
seen.pop("kept")
print(json.dumps({"code": code, **seen}))
"""


#: Runs the app over one library, then opens another (File > Open Library…). A cycle
#: that lived when the first window's objects were set aside, and is garbage after, is
#: freed only once the first window is replaced: said, and the app quits.
REOPEN = r"""
import gc, json, sys, threading, weakref
from pathlib import Path
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from archiver_app.gui.app import prepare_environment, run_gui
from archiver_app.gui.collector import GuiCollector
from archiver_app.gui.main_window import MainWindow

prepare_environment()
app = QApplication(sys.argv[:1])
seen = {}

class Node:
    def __init__(self):
        self.me = self
    def __del__(self):
        seen["freed on"] = threading.current_thread().name

held = [Node()]

def windows():
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]

def first():
    if gc.get_freeze_count() == 0 or not windows():
        QTimer.singleShot(20, first)
        return
    ref = weakref.ref(held.pop())  # garbage now, among the objects set aside
    app.findChild(GuiCollector).collect(2)
    seen["alive after a full pass"] = ref() is not None
    window = windows()[0]
    window.pending_open, window._quitting = Path(sys.argv[2]), True
    window.close()
    def look(tries=[0]):
        tries[0] += 1
        if ref() is not None and tries[0] < 500:
            QTimer.singleShot(20, look)
            return
        seen["alive after reopening"] = ref() is not None
        seen["automatic"] = gc.isenabled()
        app.quit()
    QTimer.singleShot(20, look)

QTimer.singleShot(0, first)
code = run_gui(Path(sys.argv[1]), None)
print(json.dumps({"code": code, **seen}))
"""


def _run(script: str, tmp_path: Path, *args: str) -> dict[str, object]:
    """Run ``script`` as the app's process is run; what it printed last, read as JSON."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PYTHONPATH": str(ROOT),
    }
    env.pop("ARCHIVER_LIBRARY", None)
    result = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["code"] == 0
    return seen


def test_the_app_collects_cycles_on_its_gui_thread_from_a_timer(tmp_path: Path) -> None:
    seen = _run(APP, tmp_path, str(tmp_path / "lib"))
    assert seen["automatic"] is False  # switched off once the app started
    assert seen["alive after the allocations"] is True  # no pass where they were made
    assert seen["alive at the end"] is False  # the timer's pass freed it ...
    assert seen["freed on"] == "MainThread"  # ... on the GUI thread


def test_a_replaced_windows_garbage_is_collected_when_another_library_opens(
    tmp_path: Path,
) -> None:
    from archiver_app.library import Library

    Library.open(tmp_path / "other", create=True).close()
    seen = _run(REOPEN, tmp_path, str(tmp_path / "lib"), str(tmp_path / "other"))
    assert seen["alive after a full pass"] is True  # set aside with the first window
    assert seen["alive after reopening"] is False
    assert seen["freed on"] == "MainThread" and seen["automatic"] is False
