"""``archiver library convert``: SQLite -> PostgreSQL -> SQLite leaves every table identical,
verified row by row, resumable after a stop, and the folder switches with its database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from archiver_app.cli import main
from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.scope import Scope
from archiver_app.errors import LibraryError
from archiver_app.importers.warcs import import_warc_file
from archiver_app.layout.migrator import run_migrator
from archiver_app.library import Library
from archiver_app.library_convert import convert_library
from archiver_app.mirror.destinations import add_destination
from archiver_app.search import Query, search
from archiver_app.store import convert
from archiver_app.store.snapshot_ids import HIGH_WATER
from archiver_app.tasks import Cancelled, CancelToken, ProgressUpdate
from tests.helpers.factories import bulk_snapshots
from tests.helpers.mirror_data import add_revisit, make_snapshot, set_copy_state
from tests.helpers.warcs import Resp, html_page, site, write_warc

#: SQLite's own bookkeeping, not the library's rows; FTS5's shadow tables hold the index's
#: segments, whose layout depends on how the rows were batched (the rows themselves are
#: compared through ``snapshot_fts``, and searches must answer alike).
_NOT_DATA = {"sqlite_sequence", "sqlite_stat1"}
_SHADOW = "snapshot_fts_"


def _fill(lib: Library, tmp: Path) -> None:
    pages = [*site(4), Resp("https://e.example/é", html_page("Crème brûlée", "sugar and fire"))]
    import_warc_file(lib, write_warc(tmp / "a.warc.gz", pages), tags=("food", "x"))
    import_warc_file(lib, write_warc(tmp / "b.warc.gz", site(4)), collection="again")
    a = make_snapshot(lib, [100, 2000], seed=1, name="a")
    b = make_snapshot(lib, [100], seed=2, name="b")
    add_revisit(lib, b.file_ids[0], a.file_ids[0])
    (tmp / "drive").mkdir()
    dest = add_destination(lib, tmp / "drive", "drive")
    set_copy_state(lib, a.file_ids[0], dest.id, "present")
    create_job(lib, ["http://crawl.test/", "http://crawl.test/b"], scope=Scope.HOST)
    bulk_snapshots(lib, 300, collection="bulk")
    run_migrator(lib)  # its finished cursor is JSON null in a column that cannot be NULL


def _dump(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table (the full-text table by rowid), as SQLite stores them."""
    conn = sqlite3.connect(db)
    try:
        names = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if r[0] not in _NOT_DATA and not r[0].startswith(_SHADOW)
        ]
        out = {}
        for name in names:
            cols = "rowid, *" if name == "snapshot_fts" else "*"
            if name == HIGH_WATER:  # the highest id given: rows written by hand count too
                cols = "name, max(high, (SELECT max(id) FROM snapshots))"
            out[name] = sorted(conn.execute(f"SELECT {cols} FROM {name}"), key=repr)
        return out
    finally:
        conn.close()


def test_round_trip_leaves_every_table_identical(tmp_path: Path, postgres_url: str) -> None:
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        _fill(lib, tmp_path)
    before = _dump(root / "library.db")
    assert len(before["snapshots"]) > 300 and before["snapshot_fts"] and before["copies"]

    there = convert_library(root, postgres_url, batch=97)
    assert there.database.startswith("postgresql") and not there.resumed
    assert {c.name: c.rows for c in there.tables}["snapshots"] == len(before["snapshots"])
    assert not (root / "library.db").exists()
    assert Path(there.old_database).exists()  # the old database is kept, set aside
    with Library.open(root, create=False) as lib:  # library.json names PostgreSQL now
        assert lib.engine.dialect.name == "postgresql" and lib.check_folder().ok
        pg_hits = [h.url for h in search(lib, Query("sugar"))]
        assert len(pg_hits) == 1 and pg_hits[0].startswith("https://e.example/")

    stale = Library.open(root, create=False)  # the app of another machine, still open
    back = convert_library(root, "sqlite", batch=50)
    assert back.database.startswith("sqlite")
    try:  # it queues nothing into the database that no longer owns the folder
        jobs = len(stale.jobs.rows())
        with pytest.raises(LibraryError, match="its own SQLite database"):
            stale.jobs.capture(["http://after.test/"])
        assert len(stale.jobs.rows()) == jobs
    finally:
        stale.close()
    after = _dump(root / "library.db")
    assert after.keys() == before.keys()
    for name in before:
        assert after[name] == before[name], name
    with Library.open(root, create=False) as lib:
        assert lib.engine.dialect.name == "sqlite"
        assert [h.url for h in search(lib, Query("sugar"))] == pg_hits
    with pytest.raises(LibraryError, match="library convert --to sqlite"):
        Library.open(root, database_url=postgres_url)  # the old database lets go of it


def test_a_stopped_copy_resumes_and_a_damaged_copy_is_refused(
    tmp_path: Path, postgres_url: str
) -> None:
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        bulk_snapshots(lib, 500)
    token = CancelToken()
    seen: list[int] = []

    def stop_midway(update: ProgressUpdate) -> None:
        seen.append(update.done)
        if update.done >= 200:
            token.cancel()

    with pytest.raises(Cancelled):
        convert_library(root, postgres_url, batch=100, progress=stop_midway, cancel=token)
    with Library.open(root, create=False) as lib:  # still on SQLite until the switch
        assert lib.engine.dialect.name == "sqlite"
    # tamper with the partial copy: verification must catch it once the copy completes
    from archiver_app.store.engine import make_engine

    engine = make_engine(postgres_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE snapshots SET title = 'changed' WHERE id = 5"))
    engine.dispose()
    with pytest.raises(LibraryError, match="differs from the original in table snapshots"):
        convert_library(root, postgres_url, batch=100)
    with Library.open(root, create=False) as lib:
        assert lib.engine.dialect.name == "sqlite"
    engine = make_engine(postgres_url)
    with engine.begin() as conn:  # undo the damage: the next run resumes and finishes
        conn.execute(
            text("UPDATE snapshots SET title = :t WHERE id = 5"),
            {
                "t": sqlite3.connect(root / "library.db")
                .execute("SELECT title FROM snapshots WHERE id = 5")
                .fetchone()[0]
            },
        )
    engine.dispose()
    result = convert_library(root, postgres_url, batch=100)
    assert result.resumed and result.copied_rows == 0  # everything was copied before
    assert {c.name: c.rows for c in result.tables}["snapshots"] == 500
    with Library.open(root, create=False) as lib:  # new rows get ids after the copied ones
        assert lib.ensure_collection("later") == 2


def test_convert_refuses_a_database_that_is_not_empty(tmp_path: Path, postgres_url: str) -> None:
    Library.open(tmp_path / "shared", database_url=postgres_url).close()
    Library.open(tmp_path / "lib").close()
    with pytest.raises(LibraryError, match="not empty"):
        convert_library(tmp_path / "lib", postgres_url)
    with Library.open(tmp_path / "lib", create=False) as lib:
        assert lib.engine.dialect.name == "sqlite"
    with Library.open(tmp_path / "shared", database_url=postgres_url) as lib:
        assert convert.CHECKPOINT_TABLE not in inspect(lib.engine).get_table_names()
        assert lib.check_folder().ok


def test_the_command(tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "lib"
    Library.open(root).close()
    url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    assert main(["--library", str(root), "library", "convert", "--to", url]) == 0
    out = capsys.readouterr().out
    assert "verified snapshots: 0 rows" in out and "the library now uses postgresql" in out
    assert main(["--library", str(root), "library", "convert", "--to", "mysql://x"]) == 2
