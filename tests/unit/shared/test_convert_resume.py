"""A ``library convert`` that stopped, then the library was used, then run again: rows added
since are copied too; rows changed or removed in what was copied already are said plainly,
with the command that starts the copy over (it failed forever on a foreign key)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import inspect

from archiver_app.cli import main
from archiver_app.errors import LibraryError
from archiver_app.library import Library
from archiver_app.library_convert import convert_library
from archiver_app.store import convert
from archiver_app.store.engine import make_engine
from archiver_app.tasks import Cancelled, CancelToken, ProgressUpdate
from tests.helpers.snapshots import add_snapshot


def _stopped_in(table: str, root: Path, postgres_url: str) -> None:
    """Run the copy until it reaches ``table``, and stop it there."""
    token = CancelToken()

    def stop(update: ProgressUpdate) -> None:
        if update.message == f"copying {table}":
            token.cancel()

    with pytest.raises(Cancelled):
        convert_library(root, postgres_url, batch=3, progress=stop, cancel=token)


def _count(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_rows_added_after_a_stop_are_copied_when_it_resumes(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        for i in range(8):
            add_snapshot(lib, f"https://harbour.example/{i}", body="ships", tags=("port",))
    _stopped_in("files", root, postgres_url)  # snapshots copied, files half
    with Library.open(root) as lib:  # the library is used meanwhile
        for i in range(5):
            add_snapshot(lib, f"https://later.example/{i}", body="boats", tags=("later",))
    snapshots, files = (
        _count(root / "library.db", "snapshots"),
        _count(root / "library.db", "files"),
    )
    url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    assert main(["--library", str(root), "library", "convert", "--to", url]) == 0
    out, err = capsys.readouterr()
    assert f"verified snapshots: {snapshots} rows" in out and f"verified files: {files} rows" in out
    assert "(resumed)" in out and err == ""
    with Library.open(root, create=False) as lib:
        assert lib.engine.dialect.name == "postgresql" and lib.info().snapshots == 13


def test_rows_changed_after_a_stop_say_how_to_start_over(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        ids = [add_snapshot(lib, f"https://harbour.example/{i}", tags=("port",)) for i in range(6)]
    _stopped_in("files", root, postgres_url)
    with Library.open(root) as lib:
        lib.snapshots.delete([ids[1]])  # removed from tables copied already
    url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    argv = ["--library", str(root), "library", "convert", "--to", url]
    for _ in range(2):  # the same plain answer each time, never a foreign-key error
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "the library changed since the copy stopped" in err, err
        assert f"archiver library convert --to {url} --start-over" in err
        assert "foreign key" not in err and "pipeline" not in err
    with Library.open(root, create=False) as lib:
        assert lib.engine.dialect.name == "sqlite"

    assert main([*argv, "--start-over"]) == 0
    out = capsys.readouterr().out
    assert "verified snapshots: 5 rows" in out and "(resumed)" not in out
    with Library.open(root, create=False) as lib:
        assert lib.engine.dialect.name == "postgresql" and lib.info().snapshots == 5


def test_a_row_edited_in_place_after_a_stop_says_how_to_start_over(
    tmp_path: Path, postgres_url: str
) -> None:
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        ids = [add_snapshot(lib, f"https://harbour.example/{i}") for i in range(6)]
    _stopped_in("files", root, postgres_url)
    with sqlite3.connect(root / "library.db") as conn:
        conn.execute("UPDATE snapshots SET title = 'edited later' WHERE id = ?", (ids[0],))
    with pytest.raises(LibraryError, match="--start-over"):
        convert_library(root, postgres_url)
    result = convert_library(root, postgres_url, start_over=True)
    assert not result.resumed


def test_start_over_empties_only_a_copy_of_this_library(tmp_path: Path, postgres_url: str) -> None:
    Library.open(tmp_path / "shared", database_url=postgres_url).close()  # not a copy
    Library.open(tmp_path / "lib").close()
    with pytest.raises(LibraryError, match="not empty"):
        convert_library(tmp_path / "lib", postgres_url, start_over=True)
    engine = make_engine(postgres_url)
    try:
        assert "snapshots" in inspect(engine).get_table_names()
        assert convert.CHECKPOINT_TABLE not in inspect(engine).get_table_names()
    finally:
        engine.dispose()


def test_a_row_the_target_refuses_is_one_message_without_psycopgs_cleanup_line(
    tmp_path: Path, postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """psycopg logged "error ignored terminating <psycopg.Pipeline ...>: pipeline aborted"
    beside the refusal when the failing row had many after it in its batch."""
    from sqlalchemy import text

    root = tmp_path / "lib"
    with Library.open(root) as lib:
        add_snapshot(lib, "https://harbour.example/", tags=("port",))
    _stopped_in("files", root, postgres_url)
    with sqlite3.connect(root / "library.db") as conn:  # many tags, added since the stop
        conn.executemany("INSERT INTO tags (name) VALUES (?)", [(f"t{i}",) for i in range(3000)])
    engine = make_engine(postgres_url)
    with engine.begin() as conn:  # the first of them is in the target already, by hand
        conn.execute(text("INSERT INTO tags (id, name) VALUES (2, 'clash')"))
    engine.dispose()
    for _ in range(3):
        with pytest.raises(LibraryError, match="the target refused rows of table tags"):
            convert_library(root, postgres_url, batch=3000)
    assert not [r for r in caplog.records if "error ignored terminating" in r.getMessage()]


def test_start_over_back_to_sqlite(tmp_path: Path, postgres_url: str) -> None:
    root = tmp_path / "share"
    with Library.open(root, database_url=postgres_url) as lib:
        ids = [add_snapshot(lib, f"https://harbour.example/{i}", tags=("port",)) for i in range(6)]
    token = CancelToken()

    def stop(update: ProgressUpdate) -> None:
        if update.message == "copying files":
            token.cancel()

    with pytest.raises(Cancelled):
        convert_library(root, "sqlite", batch=3, progress=stop, cancel=token)
    with Library.open(root) as lib:
        lib.snapshots.delete([ids[0]])
    with pytest.raises(LibraryError, match="archiver library convert --to sqlite --start-over"):
        convert_library(root, "sqlite")
    result = convert_library(root, "sqlite", start_over=True)
    assert not result.resumed and {c.name: c.rows for c in result.tables}["snapshots"] == 5
    with Library.open(root, create=False) as lib:
        assert lib.engine.dialect.name == "sqlite" and lib.info().snapshots == 5
