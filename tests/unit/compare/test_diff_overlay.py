"""`archiver diff --overlay PNG` says what it wrote, or why it wrote nothing (it was silent)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from archiver_app import cli
from archiver_app.compare.snapshots import screenshot_path
from archiver_app.library import Library
from tests.helpers.snapshots import add_snapshot, write_png

URL = "https://harbour.example/"


def _two(library: Library) -> tuple[int, int]:
    a = add_snapshot(library, URL, title="Harbour", body="Ferry at 9:00",
                     captured_at=datetime(2026, 3, 1, tzinfo=UTC))  # fmt: skip
    b = add_snapshot(library, URL, title="Harbour", body="Ferry at 9:30",
                     captured_at=datetime(2026, 3, 2, tzinfo=UTC))  # fmt: skip
    return a, b


def test_the_overlay_is_named_on_stderr_and_json_stays_whole(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _two(library)
    shot = screenshot_path(library, b)
    assert shot is not None
    write_png(shot, color="#d53a3a")
    out = tmp_path / "overlay.png"
    root = ["--library", str(library.root)]
    assert cli.main([*root, "diff", str(a), str(b), "--overlay", str(out), "--json"]) == 0
    printed = capsys.readouterr()
    json.loads(printed.out)  # stdout is the JSON alone
    assert printed.err.strip() == f"overlay written (B's screenshot, changes outlined): {out}"
    assert out.read_bytes().startswith(b"\x89PNG")


def test_no_overlay_without_screenshots_is_said(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _two(library)
    for sid in (a, b):
        shot = screenshot_path(library, sid)
        if shot is not None:
            shot.unlink(missing_ok=True)
    out = tmp_path / "overlay.png"
    assert (
        cli.main(["--library", str(library.root), "diff", str(a), str(b), "--overlay", str(out)])
        == 0
    )
    assert "no overlay written: a capture has no screenshot to compare" in capsys.readouterr().err
    assert not out.exists()
