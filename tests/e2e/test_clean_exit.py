"""The test suite and the app end cleanly in one process, web pages and all.

A replay tab's page must be deleted before its profile; a window left for the interpreter's
exit to destroy crashed the process (rc 139) after every test had passed, so a one-process
run (`make test PYTEST_PARALLEL=`) failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_end_to_end_run_in_one_process_exits_zero() -> None:
    """The issue's reproduction: this file alone, in one process, crashed at exit."""
    result = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
            "tests/e2e/test_gui_end_to_end.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        check=False,
    )  # fmt: skip
    assert "1 passed" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WebEnginePage still not deleted" not in result.stderr
