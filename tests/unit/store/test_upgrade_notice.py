"""Opening a library at an older schema says so: from which schema to which, and where the
copy of the database taken first is (stderr for the command line, the app's status bar)."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command

from archiver_app.cli import main
from archiver_app.library import Library
from archiver_app.store import schema
from archiver_app.store.engine import make_engine, sqlite_url


def _library_at(root: Path, revision: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    engine = make_engine(sqlite_url(root / "library.db"))
    cfg = schema.alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
    engine.dispose()


def test_opening_an_old_library_records_the_upgrade_and_its_backup(tmp_path: Path) -> None:
    root = tmp_path / "old"
    _library_at(root, "0002")
    with Library.open(root) as lib:
        upgraded = lib.upgraded
    assert upgraded is not None
    assert (upgraded.old, upgraded.new) == ("0002", schema.SCHEMA_HEAD)
    assert upgraded.backup is not None and upgraded.backup.is_file()
    assert upgraded.backup.name.startswith("library.db.backup-0002-")
    assert str(upgraded.backup) in upgraded.message
    with Library.open(root) as lib:  # up to date now: nothing to say
        assert lib.upgraded is None
    with Library.open(tmp_path / "new", create=True) as lib:  # a new one is not "upgraded"
        assert lib.upgraded is None


def test_info_on_an_old_library_says_it_was_upgraded_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "old"
    _library_at(root, "0002")
    assert main(["--library", str(root), "info"]) == 0
    out, err = capsys.readouterr()
    backups = list(root.glob("library.db.backup-0002-*"))
    assert len(backups) == 1
    line = f"archiver: upgraded the library from schema 0002 to {schema.SCHEMA_HEAD}"
    assert f"{line}; the database as it was is kept in {backups[0]}\n" in err
    assert "upgraded" not in out  # the command's own output stays as it was
    assert main(["--library", str(root), "info"]) == 0
    assert "upgraded" not in capsys.readouterr().err
