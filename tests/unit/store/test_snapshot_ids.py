"""A capture's number is never given to another capture: after the newest capture was
deleted, SQLite gave its id to the next one (``archiver cite 8`` then cited another page,
an export queued with ``snapshot_ids [8]`` exported it); on PostgreSQL an import took the
ids after the largest present, so a deleted newest import's ids came back too, and the
next capture after any import failed on the sequence's duplicate id."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from archiver_app.capture.persist import create_pending
from archiver_app.importers.warcs import import_warc_file
from archiver_app.layout import snapshot_folder
from archiver_app.library import Library
from archiver_app.library_convert import convert_library
from archiver_app.store import schema
from tests.helpers.snapshots import add_snapshot
from tests.helpers.warcs import site, write_warc


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    return request.getfixturevalue("postgres_url") if request.param == "postgresql" else None


def _capture(lib: Library, url: str) -> int:
    """A capture's row, as ``archiver capture`` makes it before loading the page."""
    when = lib.clock()
    uid = lib.new_uid(when)
    return create_pending(
        lib,
        url=url,
        collection_id=lib.ensure_collection("default"),
        captured_at=when,
        uid=uid,
        folder=str(snapshot_folder("default", when, uid)),
        job_id=None,
    )


def _import(lib: Library, tmp_path: Path, host: str, pages: int = 3) -> list[int]:
    outcome = import_warc_file(lib, write_warc(tmp_path / f"{host}.warc.gz", site(pages, host)))
    assert len(outcome.snapshot_ids) == pages, outcome
    return outcome.snapshot_ids


def _delete(lib: Library, ids: list[int]) -> None:
    result, _changes = lib.snapshots.delete(ids)
    assert sorted(result.deleted) == sorted(ids), result


def test_a_deleted_newest_capture_s_number_is_not_given_again(
    tmp_path: Path, database_url: str | None
) -> None:
    with Library.open(tmp_path / "lib", database_url=database_url) as lib:
        first = [_capture(lib, f"https://a.example/{i}") for i in range(3)]
        _delete(lib, [first[-1]])
        again = [_capture(lib, f"https://b.example/{i}") for i in range(2)]
        assert min(again) > first[-1], (first, again)
        assert lib.snapshots.replay_target(first[-1]) is None  # "cite 3" finds no page


def test_imports_and_captures_never_take_a_deleted_number(
    tmp_path: Path, database_url: str | None
) -> None:
    with Library.open(tmp_path / "lib", database_url=database_url) as lib:
        seen = _import(lib, tmp_path, "one.example")
        seen.append(_capture(lib, "https://a.example/"))  # after an import (PostgreSQL too)
        _delete(lib, [seen[-1]])
        imported = _import(lib, tmp_path, "two.example")  # after a deleted capture
        assert min(imported) > max(seen), (seen, imported)
        seen += imported
        _delete(lib, imported)
        later = [_capture(lib, "https://b.example/"), *_import(lib, tmp_path, "three.example")]
        assert min(later) > max(seen), (seen, later)


_CAPTURES = """
import sys
from pathlib import Path
from archiver_app.capture.persist import create_pending, delete_pending
from archiver_app.layout import snapshot_folder
from archiver_app.library import Library

root, url, count = Path(sys.argv[1]), sys.argv[2] or None, int(sys.argv[3])
with Library.open(root, database_url=url) as lib:
    collection = lib.ensure_collection("default")
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(count):
        when = lib.clock()
        uid = lib.new_uid(when)
        folder = str(snapshot_folder("default", when, uid))
        sid = create_pending(lib, url=f"https://loop.example/{i}", collection_id=collection,
                             captured_at=when, uid=uid, folder=folder, job_id=None)
        print(sid, flush=True)
        if i % 2 == 0:  # a page that showed nothing: its row goes again
            delete_pending(lib, sid)
"""


def test_two_processes_capturing_and_importing_never_share_a_number(
    tmp_path: Path, database_url: str | None
) -> None:
    root = tmp_path / "lib"
    Library.open(root, database_url=database_url).close()
    count = 40
    with subprocess.Popen(
        [sys.executable, "-c", _CAPTURES, str(root), database_url or "", str(count)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
        imported: list[int] = []
        with Library.open(root, database_url=database_url) as lib:
            proc.stdin.write("go\n")
            proc.stdin.flush()
            for i in range(8):
                imported += _import(lib, tmp_path, f"h{i}.example", pages=2)
        captured = [int(line) for line in proc.stdout]
    assert proc.returncode == 0
    assert len(captured) == count
    given = captured + imported
    assert len(set(given)) == len(given), sorted(given)


def test_an_older_library_goes_on_from_its_largest_number(
    tmp_path: Path, database_url: str | None
) -> None:
    from alembic import command

    root = tmp_path / "lib"
    with Library.open(root, database_url=database_url) as lib:
        ids = [add_snapshot(lib, f"https://old.example/{i}") for i in range(3)]
        cfg = schema.alembic_config()
        with lib.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0013")
    with Library.open(root, database_url=database_url) as lib:  # upgraded as it opens
        assert schema.current_revision(lib.engine) == schema.SCHEMA_HEAD
        _delete(lib, [ids[-1]])
        assert _capture(lib, "https://new.example/") == ids[-1] + 1


def test_a_postgresql_library_whose_imports_left_its_sequence_behind_captures_again(
    tmp_path: Path, postgres_url: str
) -> None:
    from alembic import command
    from sqlalchemy import text

    root = tmp_path / "lib"
    with Library.open(root, database_url=postgres_url) as lib:
        imported = _import(lib, tmp_path, "old.example")
        cfg = schema.alembic_config()
        with lib.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0013")
            # as an import before 0014 left it: its explicit ids did not move the sequence
            conn.execute(text("SELECT setval(pg_get_serial_sequence('snapshots', 'id'), 1, false)"))
    with Library.open(root, database_url=postgres_url) as lib:  # upgraded as it opens
        assert _capture(lib, "https://new.example/") == max(imported) + 1


def test_a_converted_library_goes_on_from_the_numbers_its_database_gave(
    tmp_path: Path, postgres_url: str
) -> None:
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        ids = [_capture(lib, f"https://a.example/{i}") for i in range(3)]
        _delete(lib, [ids[-1]])
    convert_library(root, postgres_url)
    with Library.open(root, create=False) as lib:
        assert lib.engine.dialect.name == "postgresql"
        ids.append(_capture(lib, "https://b.example/"))
        assert ids[-1] == ids[-2] + 1, ids  # not the deleted one's
        _delete(lib, [ids[-1]])
    convert_library(root, "sqlite")
    with Library.open(root, create=False) as lib:
        assert lib.engine.dialect.name == "sqlite"
        imported = _import(lib, tmp_path, "c.example")
        assert min(imported) == ids[-1] + 1, (ids, imported)
