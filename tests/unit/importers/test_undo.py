"""Undoing an import (cancelled, failed, or killed and swept) is linear in its size, lets
other writers in between its batches, and can itself be stopped at any batch."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from archiver_app.importers import incomplete
from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from archiver_app.store.models import Setting
from archiver_app.warc.records import RECORDS_CHANGED_KEY
from tests.helpers.warcs import Resp, html_page, write_warc


def _warc(path: Path, assets: int) -> Path:
    parts = [Resp(f"https://u.example/{i}.png", b"x" * 10, mime="image/png") for i in range(assets)]
    return write_warc(path, [*parts, Resp("https://u.example/", html_page("Home", "words"))])


def _imported(root: Path, assets: int, tmp_path: Path) -> tuple[Library, int]:
    """A library holding one imported WARC of ``assets`` + 1 records; its ``files`` id."""
    lib = Library.open(root)
    src = _warc(tmp_path / f"u{assets}.warc.gz", assets)
    assert import_paths(lib, [src]).outcomes[0].state is OutcomeState.IMPORTED
    with sqlite3.connect(lib.db_path) as conn:
        (file_id,) = conn.execute("SELECT id FROM files WHERE kind = 'warc'").fetchone()
    return lib, int(file_id)


def _counts(lib: Library) -> tuple[int, int, int, int]:
    """Rows of records, snapshots, files and settings (but the note that records were
    removed, which an undo leaves as every removal does: replayers read it)."""
    with sqlite3.connect(lib.db_path) as conn:
        return tuple(  # type: ignore[return-value]
            conn.execute(
                f"SELECT count(*) FROM {table}"
                + (f" WHERE key != '{RECORDS_CHANGED_KEY}'" if table == "settings" else "")
            ).fetchone()[0]
            for table in ("records", "snapshots", "files", "settings")
        )


def _index_names(lib: Library) -> set[str]:
    with sqlite3.connect(lib.db_path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}


def _steps_to_undo(lib: Library, file_id: int) -> int:
    """SQLite virtual machine steps (in hundreds) the undo takes: deterministic, unlike
    its time."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    def on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        dbapi_connection.set_progress_handler(count, 100)

    lib.engine.dispose()  # every connection from here on counts
    event.listen(lib.engine, "connect", on_connect)
    incomplete.forget_file(lib, file_id)
    return steps[0]


@pytest.mark.parametrize("older", [False, True], ids=["new library", "older library"])
def test_undoing_an_import_is_linear_in_its_records(tmp_path: Path, older: bool) -> None:
    """Each deleted record used to read the whole ``records`` table (its
    ``revisit_of_id`` had no index): 4x the records took 16x the work. An older library,
    whose table had rows when it was upgraded, gets the index before its first undo."""
    steps, indexed = [], []
    for n in (300, 1200):
        lib, file_id = _imported(tmp_path / f"lib{n}", n, tmp_path)
        try:
            if older:  # as migration 0012 leaves a library that already had records
                with sqlite3.connect(lib.db_path) as conn:
                    conn.execute("DROP INDEX ix_records_revisit_of_id")
            steps.append(_steps_to_undo(lib, file_id))
            assert _counts(lib)[:2] == (0, 0)
            indexed.append("ix_records_revisit_of_id" in _index_names(lib))
        finally:
            lib.close()
    assert steps[1] < 8 * steps[0], steps  # linear: 4x (4.0 measured); quadratic: 16x (13.4)
    assert indexed == [True, True]


def test_an_undo_commits_in_batches_and_one_stopped_partway_is_finished_by_the_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib, file_id = _imported(tmp_path / "lib", 450, tmp_path)
    empty = Library.open(tmp_path / "empty")
    try:
        with lib.write() as s:  # as a killed import leaves it: marked incomplete
            s.add(Setting(key=incomplete.incomplete_key(file_id), value="x"))
        monkeypatch.setattr(incomplete, "UNDO_BATCH", 100)
        commits = [0]

        def stop_after_three(_conn: Any) -> None:
            commits[0] += 1
            if commits[0] == 3:
                raise RuntimeError("killed")

        event.listen(lib.engine, "commit", stop_after_three)
        with pytest.raises(RuntimeError, match="killed"):
            incomplete.forget_file(lib, file_id)
        event.remove(lib.engine, "commit", stop_after_three)
        records, snapshots, files, _ = _counts(lib)
        assert 0 < records < 451 - 100 and snapshots == 1  # some batches of records are gone
        assert files >= 1 and _counts(lib)[3] > _counts(empty)[3]  # still marked: resumable
        assert incomplete.sweep_interrupted_imports(lib) == 1
        assert _counts(lib) == _counts(empty)
        with lib.session() as s:  # a replayer running meanwhile drops what it held of them
            assert s.get(Setting, RECORDS_CHANGED_KEY) is not None
        assert not list((lib.root / "collections").rglob("*.warc.gz"))
    finally:
        lib.close()
        empty.close()
