"""The ``archiver`` command as a user runs it: a real process, real folders."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from archiver_app import __version__
from tests.helpers.files import tree_digest
from tests.helpers.mounts import read_only_folder

ARCHIVER = Path(sys.executable).with_name("archiver")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ARCHIVER), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"archiver {__version__}"


def test_module_entry_point_matches_console_script(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "archiver_app", "--library", str(tmp_path / "lib"), "init"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "created library" in result.stdout


def test_init_then_info(tmp_path: Path) -> None:
    lib = tmp_path / "x"
    created = run("--library", str(lib), "init")
    assert created.returncode == 0, created.stderr
    info = run("--library", str(lib), "info", "--json")
    assert info.returncode == 0, info.stderr
    data = json.loads(info.stdout)
    assert data["library"] == str(lib)
    assert data["snapshots"] == 0
    assert data["id"] in created.stdout
    again = run("--library", str(lib), "init")
    assert "opened existing" in again.stdout


def test_library_from_environment(tmp_path: Path) -> None:
    lib = tmp_path / "from-env"
    assert run("init", env={"ARCHIVER_LIBRARY": str(lib)}).returncode == 0
    assert (lib / "library.json").exists()


def test_doctor_tells_the_truth(tmp_path: Path) -> None:
    lib = tmp_path / "d"
    run("--library", str(lib), "init")
    result = run("--library", str(lib), "doctor")
    lines = {
        line.split()[1]: line for line in result.stdout.splitlines() if line[:3] in ("ok ", "!! ")
    }
    assert lines["library"].startswith("ok ")
    assert lines["schema"].startswith("ok ")
    assert "free on the library's disk" in lines["disk"]
    assert lines["qtwebengine"].startswith("ok "), lines["qtwebengine"]
    if Path("/usr/bin/chromium").exists():
        assert lines["browser"].startswith("ok ") and "chromium" in lines["browser"].lower()


def test_doctor_without_a_browser_says_how_to_get_one(tmp_path: Path) -> None:
    result = run(
        "--library",
        str(tmp_path / "none"),
        "doctor",
        env={"ARCHIVER_BROWSER": str(tmp_path / "no-such-browser")},
    )
    assert result.returncode == 1
    assert "!! browser" in result.stdout and "ARCHIVER_BROWSER" in result.stdout


# ------------------------------------------------------------ bad input: one line, non-zero,
# ------------------------------------------------------------ and the files stay untouched


def assert_one_line_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("archiver: error: ")
    assert fragment in lines[0]
    assert "Traceback" not in result.stderr


def test_library_is_a_file(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("data")
    assert_one_line_error(run("--library", str(f), "info"), "is a file")
    assert f.read_text() == "data"


def test_unwritable_folder(tmp_path: Path) -> None:
    target = tmp_path / "ro"
    target.mkdir()
    with read_only_folder(target):
        assert_one_line_error(run("--library", str(target / "lib"), "init"), "not writable")
        assert_one_line_error(run("--library", str(target), "init"), "not readable and writable")
    assert list(target.iterdir()) == []


def test_corrupt_database(tmp_path: Path) -> None:
    lib = tmp_path / "c"
    run("--library", str(lib), "init")
    db = lib / "library.db"
    db.write_bytes(db.read_bytes()[:2048])
    before = tree_digest(lib)
    assert_one_line_error(run("--library", str(lib), "info"), "damaged")
    assert tree_digest(lib) == before


def test_newer_library(tmp_path: Path) -> None:
    lib = tmp_path / "n"
    run("--library", str(lib), "init")
    conn = sqlite3.connect(lib / "library.db")
    conn.execute("UPDATE alembic_version SET version_num = 'ffff'")
    conn.commit()
    conn.close()
    before = tree_digest(lib)
    assert_one_line_error(run("--library", str(lib), "info"), "newer version of Archiver")
    assert tree_digest(lib) == before


@pytest.mark.parametrize("command", ["info", "doctor"])
def test_missing_library_is_not_created_by_readers(tmp_path: Path, command: str) -> None:
    result = run("--library", str(tmp_path / "absent"), command)
    assert result.returncode != 0
    assert not (tmp_path / "absent").exists()
