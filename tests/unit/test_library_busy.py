"""A library another process is writing to for long (an import's undo) is reopened, and
what cannot wait is one clear error, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver_app.cli import main
from archiver_app.errors import LIBRARY_BUSY, LibraryBusyError
from archiver_app.library import Library
from tests.helpers.locks import at_revision, short_busy_timeout, write_lock_held


def test_a_library_opens_and_reads_while_another_process_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening used to take the write lock (and `archiver jobs` died with a traceback
    after 30 s of an undo)."""
    root = tmp_path / "lib"
    Library.open(root).close()
    short_busy_timeout(monkeypatch)
    with write_lock_held(root / "library.db"):
        with Library.open(root, create=False) as lib:
            assert lib.info().snapshots == 0
        assert main(["--library", str(root), "jobs"]) == 0


def test_a_write_that_cannot_wait_is_one_line_and_exit_75(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "lib"
    Library.open(root).close()
    (tmp_path / "BLUE").mkdir()
    short_busy_timeout(monkeypatch)
    capsys.readouterr()
    with write_lock_held(root / "library.db"):
        code = main(
            ["--library", str(root), "drives", "add", str(tmp_path / "BLUE"), "--label", "b"]
        )
    _, err = capsys.readouterr()
    assert code == 75 and err == f"archiver: error: {LIBRARY_BUSY}\n", err


def test_an_upgrade_that_cannot_wait_says_the_library_is_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "lib"
    at_revision(root, "0011")
    short_busy_timeout(monkeypatch)
    with write_lock_held(root / "library.db"), pytest.raises(LibraryBusyError) as busy:
        Library.open(root, create=False)
    assert str(busy.value) == LIBRARY_BUSY and "database is locked" in (busy.value.details or "")
    Library.open(root, create=False).close()  # and once the other process is done, it opens
