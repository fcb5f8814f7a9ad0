"""Library.open: creation, reopening, O(1) open, and refusal of unusable folders."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, event, select

from archiver_app import library_use
from archiver_app.errors import LibraryError, NewerLibraryError
from archiver_app.library import DB_NAME, META_NAME, Library
from archiver_app.store import schema
from archiver_app.store.models import Setting
from tests.helpers.factories import bulk_snapshots
from tests.helpers.files import tree_digest


def test_creates_library_files(library_root: Path) -> None:
    with Library.open(library_root) as lib:
        meta = json.loads((library_root / META_NAME).read_text())
        assert meta["format"] == "archiver-library"
        assert meta["library_id"] == lib.id
        assert meta["layout_version"] == "archiver-2"
        assert schema.current_revision(lib.engine) == schema.head_revision()
        with lib.session() as s:
            assert s.get(Setting, "library").value["library_id"] == lib.id


def test_reopen_keeps_identity_and_data(library_root: Path) -> None:
    with Library.open(library_root) as lib:
        first_id = lib.id
        lib.ensure_collection("papers")
    with Library.open(library_root, create=False) as lib:
        assert lib.id == first_id
        assert lib.info().collections == 1


def test_sqlite_is_configured_for_concurrency(library: Library) -> None:
    with library.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 10_000


def _statements_during_open(root: Path) -> list[str]:
    """Open the library and return the SQL it ran (without the connection's PRAGMAs)."""
    seen: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        seen.append(statement)

    event.listen(Engine, "before_cursor_execute", record)
    try:
        with Library.open(root, create=False) as lib:
            lib.recent_snapshots(limit=100)
    finally:
        event.remove(Engine, "before_cursor_execute", record)
    return seen


def test_open_does_not_scan_rows_or_folders(
    library_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Library.open(library_root) as lib:
        bulk_snapshots(lib, 3000)
    folder = library_root / "collections" / "default" / "2024" / "01" / "x"
    folder.mkdir(parents=True)

    def guard(original):  # type: ignore[no-untyped-def]
        def wrapper(path=".", *args, **kwargs):  # type: ignore[no-untyped-def]
            # (who has it open, looked at as it closes: a file per process, not per capture)
            listed = Path(path).absolute()
            if listed.is_relative_to(library_root) and listed.name != library_use.FOLDER:
                raise AssertionError(f"Library.open listed {path}")
            return original(path, *args, **kwargs)

        return wrapper

    monkeypatch.setattr("os.walk", guard(os.walk))
    monkeypatch.setattr("os.scandir", guard(os.scandir))
    monkeypatch.setattr("os.listdir", guard(os.listdir))
    monkeypatch.setattr(Path, "iterdir", guard(Path.iterdir))
    monkeypatch.setattr(Path, "rglob", guard(Path.rglob))
    with Library.open(library_root, create=False) as lib:
        page = lib.recent_snapshots(limit=100)
    assert len(page) == 100
    assert [s.captured_at for s in page] == sorted((s.captured_at for s in page), reverse=True)


def test_open_sql_does_not_depend_on_size(tmp_path: Path) -> None:
    """The statements run by open + first page are the same for 10 and 5,000 rows."""
    small, big = tmp_path / "small", tmp_path / "big"
    for root, n in ((small, 10), (big, 5000)):
        with Library.open(root) as lib:
            bulk_snapshots(lib, n)
    assert _statements_during_open(small) == _statements_during_open(big)
    plans = []
    with Library.open(big, create=False) as lib, lib.engine.connect() as conn:
        plans = conn.exec_driver_sql(
            "EXPLAIN QUERY PLAN SELECT * FROM snapshots ORDER BY captured_at DESC, id DESC "
            "LIMIT 100"
        ).fetchall()
    assert not any("TEMP B-TREE" in str(row) for row in plans), plans


def test_missing_meta_is_rebuilt_from_database(library_root: Path) -> None:
    with Library.open(library_root) as lib:
        original_id = lib.id
    (library_root / META_NAME).unlink()
    with Library.open(library_root, create=False) as lib:
        assert lib.id == original_id
    assert json.loads((library_root / META_NAME).read_text())["library_id"] == original_id


def test_meta_and_database_disagree(library_root: Path) -> None:
    Library.open(library_root).close()
    meta = json.loads((library_root / META_NAME).read_text())
    meta["library_id"] = "someone-else"
    (library_root / META_NAME).write_text(json.dumps(meta))
    before = tree_digest(library_root)
    with pytest.raises(LibraryError, match="different libraries"):
        Library.open(library_root)
    assert tree_digest(library_root) == before


# ---------------------------------------------------------------- bad input never modifies


def test_root_is_a_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    with pytest.raises(LibraryError, match="is a file"):
        Library.open(path)
    assert path.read_text() == "hello"


def test_non_empty_foreign_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "thesis.docx").write_bytes(b"precious")
    before = tree_digest(tmp_path)
    with pytest.raises(LibraryError, match="not empty"):
        Library.open(tmp_path)
    assert tree_digest(tmp_path) == before


def test_missing_library_without_create(tmp_path: Path) -> None:
    with pytest.raises(LibraryError, match="archiver init"):
        Library.open(tmp_path / "nope", create=False)
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda p: p.write_bytes(b"this is not a database at all" * 100), id="garbage"),
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[:1500]), id="truncated"),
        pytest.param(
            lambda p: p.write_bytes(p.read_bytes()[:100] + b"\xff" * 4000 + p.read_bytes()[4100:]),
            id="scribbled",
        ),
    ],
)
def test_corrupt_database_is_refused_untouched(library_root: Path, damage: object) -> None:
    Library.open(library_root).close()
    damage(library_root / DB_NAME)  # type: ignore[operator]
    before = tree_digest(library_root)
    with pytest.raises(LibraryError):
        Library.open(library_root)
    assert tree_digest(library_root) == before


def test_foreign_sqlite_database_is_refused(library_root: Path) -> None:
    library_root.mkdir()
    conn = sqlite3.connect(library_root / DB_NAME)
    conn.execute("CREATE TABLE moz_places (id INTEGER)")
    conn.commit()
    conn.close()
    before = tree_digest(library_root)
    with pytest.raises(LibraryError, match="not an Archiver library"):
        Library.open(library_root)
    assert tree_digest(library_root) == before


def test_newer_schema_is_refused_untouched(library_root: Path) -> None:
    Library.open(library_root).close()
    conn = sqlite3.connect(library_root / DB_NAME)
    conn.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    conn.commit()
    conn.close()
    before = tree_digest(library_root)
    with pytest.raises(NewerLibraryError, match="newer version"):
        Library.open(library_root)
    assert tree_digest(library_root) == before


def test_newer_library_format_is_refused_untouched(library_root: Path) -> None:
    Library.open(library_root).close()
    meta = json.loads((library_root / META_NAME).read_text())
    meta["format_version"] = 99
    (library_root / META_NAME).write_text(json.dumps(meta))
    before = tree_digest(library_root)
    with pytest.raises(NewerLibraryError):
        Library.open(library_root)
    assert tree_digest(library_root) == before


def test_unreadable_meta_is_refused(library_root: Path) -> None:
    Library.open(library_root).close()
    (library_root / META_NAME).write_text("{not json")
    with pytest.raises(LibraryError, match="unreadable"):
        Library.open(library_root)


# ---------------------------------------------------------------- upgrades


def test_upgrade_backs_up_database_first(
    library_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Library.open(library_root) as lib:
        lib.ensure_collection("kept")
    newer = tmp_path / "migrations"
    shutil.copytree(schema.MIGRATIONS_DIR, newer)
    head = schema.SCHEMA_HEAD
    (newer / "versions" / "9999_test.py").write_text(
        '"""test revision"""\n'
        "import sqlalchemy as sa\nfrom alembic import op\n"
        f"revision = '9999'\ndown_revision = '{head}'\nbranch_labels = None\n"
        "depends_on = None\n"
        "def upgrade():\n"
        "    op.create_table('extra', sa.Column('id', sa.Integer, primary_key=True))\n"
        "def downgrade():\n    op.drop_table('extra')\n"
    )
    monkeypatch.setattr(schema, "MIGRATIONS_DIR", newer)
    monkeypatch.setattr(schema, "SCHEMA_HEAD", "9999")
    with Library.open(library_root) as lib:
        assert schema.current_revision(lib.engine) == "9999"
        with lib.session() as s:
            assert s.scalar(select(Setting.key).where(Setting.key == "library")) == "library"
    backups = list(library_root.glob(f"library.db.backup-{head}-*"))
    assert len(backups) == 1
    conn = sqlite3.connect(backups[0])
    try:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == (head,)
        assert conn.execute("SELECT slug FROM collections").fetchall() == [("kept",)]
    finally:
        conn.close()


def test_snapshot_uids_of_one_second_do_not_collide() -> None:
    """Thousands of records stamped with one second (a whole crawl with its start time)
    get distinct uids: 64 random bits, where 32 collided about once in a thousand imports."""
    from archiver_app.ids import new_snapshot_uid

    at = datetime(2024, 3, 1, 10, 0, tzinfo=UTC)
    uids = [new_snapshot_uid(at) for _ in range(20_000)]
    assert len(set(uids)) == len(uids)
    assert all(len(u.split("-")[1]) == 16 for u in uids)


def test_opening_the_library_again_in_a_process_that_holds_it_hides_no_write(
    library_root: Path,
) -> None:
    """The app checking its setup opens its own library a second time. The revision check
    opened library.db with Python and closed it, which dropped every POSIX lock the process
    held on it: the next process to close the database took it for unused and deleted its
    write-ahead log, and what the app wrote from then on was seen by no other process (an
    export's job "did not exist"; another process's job row was later overwritten)."""
    import subprocess
    import sys

    from sqlalchemy import text

    def others_see() -> list[str]:
        read = (
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
            "print(','.join(r[0] for r in c.execute('SELECT name FROM tags ORDER BY name')))"
        )
        out = subprocess.run(
            [sys.executable, "-c", read, str(library_root / DB_NAME)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return [name for name in out.stdout.strip().split(",") if name]

    lib = Library.open(library_root, create=True)
    try:
        with lib.write() as s:
            s.execute(text("INSERT INTO tags (name) VALUES ('before')"))
        Library.open(library_root).close()  # as Help > Check Setup does
        assert others_see() == ["before"]  # another process opens and closes it
        with lib.write() as s:
            s.execute(text("INSERT INTO tags (name) VALUES ('after')"))
        assert others_see() == ["after", "before"]
    finally:
        lib.close()


def test_work_refused_on_a_folder_gone_says_so_in_two_sentences(tmp_path: Path) -> None:
    """A capture queued after the folder went away said "... the library folder PATH is
    gone Nothing was changed." (no period between the two)."""
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        shutil.move(root, tmp_path / "away")
        with pytest.raises(LibraryError) as raised:
            lib.require_folder()
    assert str(raised.value) == f"the library folder {root} is gone. Nothing was changed."
