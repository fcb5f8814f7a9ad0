"""``archiver --self-test`` opens the real main window offscreen and exits cleanly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_self_test(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            str(Path(sys.executable).with_name("archiver")),
            "--library",
            str(tmp_path / "l"),
            "--self-test",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert result.returncode == 0, result.stderr
    assert "self-test ok" in result.stdout
