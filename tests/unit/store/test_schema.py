"""The migrations build exactly the models' schema; types and write sessions behave."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import select

from archiver_app import durable
from archiver_app.library import Library
from archiver_app.store import schema
from archiver_app.store.models import Base, Collection, Snapshot
from archiver_app.store.snapshot_ids import HIGH_WATER
from archiver_app.store.types import UTCDateTime


def _not_fts(obj: object, name: str | None, type_: str, *_a: object) -> bool:
    """Not the tables of SQLite alone that no model describes: full text, the highest
    snapshot id given (tests/unit/store/test_snapshot_ids.py)."""
    if type_ != "table" or name is None:
        return True
    return not (name.startswith("snapshot_fts") or name == HIGH_WATER)


def test_migrations_match_models(library: Library) -> None:
    with library.engine.connect() as conn, warnings.catch_warnings():
        # SQLite's indexes on an expression cannot be reflected: the tags' one is checked by
        # test_tag_names_are_unique_whatever_their_case
        warnings.filterwarnings("ignore", ".*expression-based index '?uq_tags_name_folded")
        ctx = MigrationContext.configure(
            conn, opts={"compare_type": True, "include_object": _not_fts}
        )
        diff = compare_metadata(ctx, Base.metadata)
    assert diff == []


def test_schema_head_constant_matches_scripts() -> None:
    assert schema.script_directory().get_current_head() == schema.SCHEMA_HEAD


def test_opening_an_up_to_date_library_does_not_import_alembic(library: Library) -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom archiver_app.library import Library\n"
        f"Library.open({str(library.root)!r}, create=False).close()\n"
        "assert not [m for m in sys.modules if m.startswith('alembic')]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_full_text_table_exists(library: Library) -> None:
    with library.engine.connect() as conn:
        conn.exec_driver_sql(
            "INSERT INTO snapshot_fts(rowid, title, url, body, tags) VALUES (1, 'Rivers', 'u', "
            "'the river Thames', '')"
        )
        hits = conn.exec_driver_sql(
            "SELECT rowid FROM snapshot_fts WHERE snapshot_fts MATCH 'thames'"
        ).fetchall()
    assert hits == [(1,)]


def test_utc_datetime_round_trip(library: Library) -> None:
    coll_id = library.ensure_collection("t")
    at = datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=timezone(timedelta(hours=2)))
    with library.write() as s:
        s.add(
            Snapshot(
                uid="u1",
                collection_id=coll_id,
                url="https://a.example/",
                url_key="example,a)/",
                url_group="example,a)/",
                captured_at=at,
                fs_version="archiver-2",
            )
        )
    with library.session() as s:
        got = s.scalar(select(Snapshot.captured_at))
    assert got == at
    assert got is not None and got.tzinfo is not None and got.utcoffset() == timedelta(0)


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        UTCDateTime().process_bind_param(datetime(2024, 1, 1), None)  # type: ignore[arg-type]


def test_foreign_keys_are_enforced(library: Library) -> None:
    from sqlalchemy.exc import IntegrityError

    with pytest.raises(IntegrityError), library.write() as s:
        s.add(
            Snapshot(
                uid="orphan",
                collection_id=999,
                url="x",
                url_key="x",
                url_group="x",
                captured_at=datetime.now(UTC),
                fs_version="archiver-2",
            )
        )


def test_concurrent_writers_queue_instead_of_failing(library: Library) -> None:
    """Read-then-write transactions from many threads all commit (BEGIN IMMEDIATE)."""
    library.ensure_collection("counter")
    errors: list[BaseException] = []

    def bump() -> None:
        try:
            for _ in range(20):
                with library.write() as s:
                    coll = s.scalar(select(Collection).where(Collection.slug == "counter"))
                    assert coll is not None
                    coll.description = str(int(coll.description or "0") + 1)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=bump) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with library.session() as s:
        assert s.scalar(select(Collection.description).where(Collection.slug == "counter")) == "120"


def test_new_libraries_get_large_pages_old_ones_keep_theirs(tmp_path: Path) -> None:
    import sqlite3

    from archiver_app.store.engine import PAGE_SIZE

    def page_size(db: Path) -> int:
        with contextlib.closing(sqlite3.connect(db)) as conn:
            return int(conn.execute("PRAGMA page_size").fetchone()[0])

    with Library.open(tmp_path / "new") as lib:
        db = lib.db_path
    assert PAGE_SIZE != 4096 and page_size(db) == PAGE_SIZE
    # a library made with SQLite's default pages keeps them (no rewrite on open) and works
    with Library.open(tmp_path / "old") as lib:
        old = lib.db_path
    with contextlib.closing(sqlite3.connect(old)) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("PRAGMA page_size = 4096")
        conn.execute("VACUUM")
        conn.execute("PRAGMA journal_mode = WAL")
    assert page_size(old) == 4096
    with Library.open(tmp_path / "old") as lib:
        coll = lib.ensure_collection("kept")
        assert coll and page_size(lib.db_path) == 4096


def test_a_library_at_the_first_revision_opens_upgraded_with_its_copies(
    library_root: Path,
) -> None:
    import sqlite3

    from alembic import command

    from archiver_app.store.engine import make_engine, sqlite_url

    library_root.mkdir(parents=True, exist_ok=True)
    db = library_root / "library.db"
    engine = make_engine(sqlite_url(db))
    cfg = schema.alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
    engine.dispose()
    raw = sqlite3.connect(db)
    columns = [r[1] for r in raw.execute("PRAGMA table_info(copies)")]
    raw.close()
    assert "path" not in columns
    with Library.open(library_root) as lib:
        assert schema.current_revision(lib.engine) == schema.SCHEMA_HEAD
        with lib.engine.connect() as conn:
            columns = [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(copies)")]
    assert "path" in columns


def test_a_library_at_revision_0002_keeps_its_jobs_as_crawls(library_root: Path) -> None:
    import sqlite3

    from alembic import command

    from archiver_app.store.engine import make_engine, sqlite_url
    from archiver_app.store.models import Job

    library_root.mkdir(parents=True, exist_ok=True)
    db = library_root / "library.db"
    engine = make_engine(sqlite_url(db))
    cfg = schema.alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0002")
    engine.dispose()
    raw = sqlite3.connect(db)
    with raw:
        raw.execute(
            "INSERT INTO collections (slug, name, description, enabled, created_at) "
            "VALUES ('c', 'C', '', 1, '2026-01-01 00:00:00')"
        )
        raw.execute(
            "INSERT INTO jobs (collection_id, name, status, priority, config, ruleset_version,"
            " settings_age, items_queued, items_downloaded, bytes_downloaded, r1xx, r2xx, r3xx,"
            " r4xx, r5xx, runk, error_count, concurrency, retry_count, max_retries, created_at,"
            " updated_at) VALUES (1, 'old crawl', 'completed', 0, '{}', 1, 0, 0, 0, 0, 0, 0, 0,"
            " 0, 0, 0, 0, 0, 0, 2, '2026-01-01 00:00:00', '2026-01-01 00:00:00')"
        )
    raw.close()
    with Library.open(library_root) as lib:
        assert schema.current_revision(lib.engine) == schema.SCHEMA_HEAD
        with lib.session() as s:
            job = s.scalars(select(Job)).one()
            assert (job.name, job.kind, job.progress_done, job.lease_owner) == (
                "old crawl",
                "crawl",
                0,
                None,
            )


def _big_database(path: Path, mb: int) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE t (b BLOB)")
        conn.executemany("INSERT INTO t VALUES (?)", ((os.urandom(1 << 20),) for _ in range(mb)))
    conn.close()


def test_a_database_copy_is_whole_or_absent(tmp_path: Path) -> None:
    """copy_sqlite (a library move's and an upgrade's backup): a copy that fails leaves
    nothing; a copy killed while SQLite writes it leaves only temporary files (the copy's
    journal too), which the sweeper removes, and never a file under the final name."""
    source, target = tmp_path / "source.db", tmp_path / "out" / "library.db"
    target.parent.mkdir()
    (tmp_path / "not-a-db").write_bytes(b"x" * 4096)
    with pytest.raises(sqlite3.DatabaseError):
        schema.copy_sqlite(tmp_path / "not-a-db", target)
    assert list(target.parent.iterdir()) == []

    _big_database(source, 96)
    code = (
        "import sys; from pathlib import Path; from archiver_app.store.schema import copy_sqlite;"
        " copy_sqlite(Path(sys.argv[1]), Path(sys.argv[2]))"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(source), str(target)])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(target.parent.glob("*-journal")):
        time.sleep(0.001)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = sorted(p.name for p in target.parent.iterdir())
    assert any(name.endswith("-journal") for name in left), left  # killed inside the backup
    assert not target.exists() and all(durable.is_temp(name) for name in left)
    assert sorted(durable.sweep_leftovers(target.parent, older_than=0)) == left
    assert list(target.parent.iterdir()) == []

    schema.copy_sqlite(source, target)
    assert [p.name for p in target.parent.iterdir()] == ["library.db"]
    conn = sqlite3.connect(target)
    try:
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (96,)
    finally:
        conn.close()


def test_an_older_library_with_records_opens_without_building_their_new_index(
    library_root: Path, tmp_path: Path
) -> None:
    """Migration 0012 indexes only empty tables (opening stays O(1)); the index of a table
    with rows is built later, and then the schema is the models' one."""
    from alembic import command

    from archiver_app.importers.run import import_paths
    from archiver_app.layout.migrator import run_migrator
    from archiver_app.store.indexes import ensure_indexes, missing_indexes
    from tests.helpers.warcs import site, write_warc

    with Library.open(library_root) as lib:
        import_paths(lib, [write_warc(tmp_path / "a.warc.gz", site(2))])
        cfg = schema.alembic_config()
        with lib.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0011")
    with Library.open(library_root) as lib:
        assert schema.current_revision(lib.engine) == schema.SCHEMA_HEAD
        with lib.engine.connect() as conn:
            assert [name for name, *_ in missing_indexes(conn)] == ["ix_records_revisit_of_id"]
        assert lib.imports.pending() == 1  # the app's idle migration builds it
        assert run_migrator(lib).indexes == 1
        assert lib.imports.pending() == 0 and ensure_indexes(lib.engine, lib.write) == 0
        test_migrations_match_models(lib)
