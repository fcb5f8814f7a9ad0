"""Profiles are never mirrored to drives: a mirror copies the capture files the library
lists, and nothing of ``private/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver_app.cli import main
from archiver_app.library import Library
from tests.helpers.mirror_data import make_snapshot


def test_a_mirror_leaves_the_profiles_at_home(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    with Library.open(root, create=True) as lib:
        make_snapshot(lib, [10_000], seed=1)
        folder = lib.profiles.create("university").path
    (folder / "Default").mkdir()
    (folder / "Default" / "Cookies").write_bytes(b"session secrets")
    drive = tmp_path / "media" / "BLUE"
    drive.mkdir(parents=True)
    lib_args = ["--library", str(root)]
    assert main([*lib_args, "drives", "add", str(drive), "--label", "blue"]) == 0
    assert main([*lib_args, "policy", "set", "--copies", "2", "--destinations", "blue"]) == 0
    assert main([*lib_args, "mirror"]) == 0
    assert "blue: 1 copied" in capsys.readouterr().out
    copied = [p for p in drive.rglob("*") if p.is_file()]
    assert copied  # the capture's file went
    assert not [p for p in copied if "private" in p.parts or p.name == "Cookies"]
