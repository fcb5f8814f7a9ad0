"""bench_frozen's measuring parts still work (the full run needs ``make dist``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.bench import bench_frozen


def test_sizes_count_files_once_and_rank_the_bundle(tmp_path: Path) -> None:
    internal = tmp_path / "_internal"
    (internal / "PySide6" / "Qt" / "lib").mkdir(parents=True)
    (internal / "PySide6" / "Qt" / "lib" / "libQt6WebEngineCore.so.6").write_bytes(b"x" * 5000)
    (internal / "base_library.zip").write_bytes(b"x" * 300)
    (internal / "libQt6Core.so.6").symlink_to("PySide6/Qt/lib/libQt6WebEngineCore.so.6")
    assert bench_frozen.tree_size(tmp_path) == 5300
    parts = bench_frozen.largest_parts(internal)
    assert parts == [("PySide6/Qt/lib/libQt6WebEngineCore.so.6", 5000), ("base_library.zip", 300)]
    assert bench_frozen.evict([internal]) == 2


def test_missing_app_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="run make dist first"):
        bench_frozen.main(["--app", str(tmp_path / "nope")])


def test_start_times_run_the_command_cold_and_warm(tmp_path: Path) -> None:
    cold, warm = bench_frozen.start_times(
        [sys.executable, "-c", "pass"], [tmp_path], 1, dict(os.environ)
    )
    assert cold > 0 and warm > 0
