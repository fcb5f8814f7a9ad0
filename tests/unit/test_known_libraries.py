"""A folder where this computer opened a library, empty or missing now (a drive not plugged
in, a share not mounted), is refused, not made a new empty library; ``archiver init``
starts a new one there when asked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from archiver_app.cli import main
from archiver_app.errors import LibraryError
from archiver_app.known_libraries import LibraryMovedError, known_library, moved_to
from archiver_app.library import Library
from archiver_app.library_move import move_library

GONE = "is not there now: is its drive or share mounted? Nothing was written"
GONE_RE = re.escape(GONE)


@pytest.fixture(autouse=True)
def own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("ARCHIVER_LIBRARY", raising=False)
    monkeypatch.delenv("ARCHIVER_DATABASE_URL", raising=False)


def _contents(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else ["<missing>"]


def test_a_drive_not_plugged_in_is_refused_not_made_a_new_library(tmp_path: Path) -> None:
    drive = tmp_path / "drive" / "Library"
    with Library.open(drive) as lib:
        library_id = lib.id
    assert known_library(drive) == library_id
    (tmp_path / "drive").rename(tmp_path / "unplugged")  # the whole drive is gone
    with pytest.raises(LibraryError, match=GONE_RE):
        Library.open(drive)
    assert not drive.exists() and not (tmp_path / "drive").exists()
    (tmp_path / "drive").mkdir()  # the empty mount point
    drive.mkdir()
    with pytest.raises(LibraryError, match=GONE_RE):
        Library.open(drive)
    with pytest.raises(LibraryError, match=GONE_RE):
        Library.open(drive, create=False)
    assert _contents(drive) == []
    # plugged in again: the same library opens
    drive.rmdir()
    (tmp_path / "drive").rmdir()
    (tmp_path / "unplugged").rename(tmp_path / "drive")
    with Library.open(drive) as lib:
        assert lib.id == library_id


@pytest.mark.parametrize("command", [["capture", "http://127.0.0.1:9/"], ["worker"], ["info"]])
def test_commands_on_an_emptied_library_folder_refuse_and_write_nothing(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    assert main(["--library", str(root), "init"]) == 0
    root.rename(tmp_path / "away")
    root.mkdir()
    capsys.readouterr()
    assert main(["--library", str(root), *command]) == 2
    err = capsys.readouterr().err
    assert f"the library that was at {root} {GONE}" in err
    assert "archiver init --library" in err and "create one with" not in err
    assert _contents(root) == []
    root.rmdir()  # missing (the share's mount point gone too): the same
    assert main(["--library", str(root), *command]) == 2
    assert GONE in capsys.readouterr().err and not root.exists()


def test_watch_run_on_a_missing_library_says_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    Library.open(root).close()
    root.rename(tmp_path / "away")
    assert main(["--library", str(root), "watch", "run"]) == 2
    assert GONE in capsys.readouterr().err and not root.exists()


def test_init_starts_a_new_library_where_one_is_gone_for_good(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        old = lib.id
    (tmp_path / "away").mkdir()
    root.rename(tmp_path / "away" / "lib")
    assert main(["--library", str(root), "init"]) == 0
    out, err = capsys.readouterr()
    new = json.loads((root / "library.json").read_text())["library_id"]
    assert new != old and f"created library {new}" in out
    assert f"the library {old} this computer opened there before is not there now" in err
    assert known_library(root) == new
    with Library.open(root) as lib:
        assert lib.id == new
    # a place never used still gets a new library, as before
    with Library.open(tmp_path / "fresh") as lib:
        assert known_library(tmp_path / "fresh") == lib.id


def test_a_moved_library_s_old_place_says_where_it_went(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After `archiver move-library` the old place said "there is no library at ...;
    create one with: archiver init", and that made a new empty library where the user's
    own had been. Now it says where the library went, and `init` there needs --force."""
    src, dest, last = tmp_path / "src", tmp_path / "dest", tmp_path / "last"
    with Library.open(src) as lib:
        library_id = lib.id
    assert main(["--library", str(src), "move-library", str(dest)]) == 0
    assert known_library(dest) == library_id and known_library(src) is None
    assert moved_to(src) == dest
    with pytest.raises(LibraryMovedError) as raised:
        Library.open(src)
    assert raised.value.moved_to == dest
    capsys.readouterr()
    for command in (["info"], ["capture", "http://127.0.0.1:9/"], ["init"]):
        assert main(["--library", str(src), *command]) == 2
        err = capsys.readouterr().err
        assert f"the library that was at {src} was moved to {dest}: use --library {dest}" in err
        assert "create one with" not in err
        assert not src.exists()
    assert f"archiver init --force --library {src}" in err  # (init's own refusal)
    move_library(dest, last)  # moved on: the first place names the last
    with pytest.raises(LibraryMovedError, match=f"was moved to {re.escape(str(last))}:"):
        Library.open(src)
    assert main(["--library", str(src), "init", "--force"]) == 0  # asked for: a new one
    with Library.open(src) as lib:
        assert lib.id != library_id and known_library(src) == lib.id
    assert moved_to(src) is None and moved_to(dest) == last


def test_an_unmounted_share_is_refused_without_the_database_url(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """library.json names the database; with the share unmounted it is not there to say
    so, and `--library PATH` alone made a new SQLite library in the mount point."""
    share = tmp_path / "mnt" / "archive"
    Library.open(share, database_url=postgres_url).close()
    with Library.open(share) as lib:  # library.json finds the database
        assert lib.engine.dialect.name == "postgresql"
    share.rename(tmp_path / "mnt" / "elsewhere")
    share.mkdir()  # the empty mount point
    for command in (["capture", "http://127.0.0.1:9/"], ["worker"], ["info"]):
        assert main(["--library", str(share), *command]) == 2
        assert GONE in capsys.readouterr().err
    assert _contents(share) == []
    # with the database named the share's own check refuses, as before
    assert main(["--database-url", postgres_url, "--library", str(share), "info"]) == 2
    assert "is not this library's folder" in capsys.readouterr().err
    assert _contents(share) == []
