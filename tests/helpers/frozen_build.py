"""The frozen app of ``tests/e2e/test_frozen.py``, built beside the rest of the run.

PyInstaller takes about a minute of CPU and held one of the run's workers for 100 s or
more. Started by the run's first process as the run begins (the controller of the
workers, or the only process), the build runs at a lower priority while every worker runs
other tests, on the CPU they leave idle while waiting on browsers, servers and child
processes; ``test_frozen.py``'s fixture waits for it (:func:`wait_for_build`), and its file
runs some way into the run (:func:`place_frozen_tests`). The build starts only when the
run will hold ``test_frozen.py`` (no ``-k``, no ``-m`` that names ``frozen``, a path that
holds the file); otherwise the fixture builds the app itself, as before.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FROZEN_FILE = ROOT / "tests" / "e2e" / "test_frozen.py"
#: The folder of the build started for this run (set for the workers, which inherit it).
BUILD_ENV = "ARCHIVER_FROZEN_BUILD"
#: How far into the run (a share of its tests) the frozen tests are placed.
FROZEN_AT = 0.4

_started: list[tuple[subprocess.Popen[bytes], Path]] = []


def _holds_frozen(config: pytest.Config) -> bool:
    if config.option.keyword or config.option.markexpr:
        return False
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::", 1)[0]).resolve()
        if path == FROZEN_FILE or path in FROZEN_FILE.parents:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or BUILD_ENV in os.environ:
        return  # a worker: the controller started it (or did not)
    if os.environ.get("ARCHIVER_FROZEN_APP") or not _holds_frozen(config):
        return
    folder = Path(tempfile.mkdtemp(prefix="archiver-frozen-"))
    build = shlex.join(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(folder / "dist"), "--workpath", str(folder / "work"),
         str(ROOT / "build.spec")]
    )  # fmt: skip
    script = f"{build} > build.log 2>&1; echo $? > rc.part && mv rc.part rc"
    proc = subprocess.Popen(  # niced: the tests first, the build on what they leave
        ["nice", "-n", "10", "sh", "-c", script], cwd=folder, start_new_session=True
    )
    _started.append((proc, folder))
    os.environ[BUILD_ENV] = str(folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    for proc, folder in _started:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)
    _started.clear()


def wait_for_build(timeout: float = 1500) -> Path | None:
    """The frozen ``archiver`` of the build started for this run, once it is done (None:
    no build was started; the caller builds it)."""
    given = os.environ.get(BUILD_ENV)
    if not given:
        return None
    folder = Path(given)
    deadline = time.monotonic() + timeout
    while not (folder / "rc").exists():
        assert time.monotonic() < deadline, "the frozen build did not end in time"
        time.sleep(0.5)
    rc = (folder / "rc").read_text().strip()
    log = (folder / "build.log").read_text(errors="replace")
    assert rc == "0", f"the frozen build failed (exit {rc}):\n{log[-5000:]}"
    return folder / "dist" / "archiver" / "archiver"


def place_frozen_tests(items: list[pytest.Item]) -> None:
    """Move the frozen tests some way into the run (:data:`FROZEN_AT`): their build,
    started with the run, is done by then, and they do not end the run alone."""
    frozen = [item for item in items if Path(item.path) == FROZEN_FILE]
    if not frozen:
        return
    rest = [item for item in items if Path(item.path) != FROZEN_FILE]
    at = int(len(rest) * FROZEN_AT)
    items[:] = rest[:at] + frozen + rest[at:]
