"""Two processes creating the same new tag or collection at once: each gets the row, the
second reads the first's (a capture with a new tag failed with IntegrityError uq_tags_name
and stayed pending; a new collection crashed with UniqueViolation uq_collections_slug)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select, text

from archiver_app.library import Library
from archiver_app.store.models import Collection, SnapshotTag, Tag
from tests.helpers.snapshots import add_snapshot


@pytest.fixture(params=["sqlite", "postgresql"])
def two_processes(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Library, Library]]:
    """The same library opened twice (two engines, two connection pools), as by two
    processes."""
    url = request.getfixturevalue("postgres_url") if request.param == "postgresql" else None
    first = Library.open(tmp_path / "lib", database_url=url)
    second = Library.open(tmp_path / "lib", database_url=url)
    try:
        yield first, second
    finally:
        first.close()
        second.close()


def _in_thread(work: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(work())
        except BaseException as exc:
            out.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def _until_waiting_on_a_lock(engine: Engine, thread: threading.Thread) -> None:
    """Until another connection waits on a row lock (PostgreSQL: the second insert of a
    unique name waits for the first's transaction to end)."""
    sql = text(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    deadline = time.monotonic() + 20
    with engine.connect() as conn:
        while not conn.scalar(sql):
            assert thread.is_alive() and time.monotonic() < deadline
            time.sleep(0.01)


def _interleaved(first: Library, second: Library, row: Any, work: Callable[[], Any]) -> Any:
    """``work`` on ``second`` looks for a row ``first`` has inserted and not yet committed,
    inserts it too, and (PostgreSQL) waits until ``first`` commits: the race, every time.
    On SQLite the writers queue, so ``work`` runs after the commit."""
    with first.write() as s:
        s.add(row)
        s.flush()
        made = row.id
        thread, out = _in_thread(work)
        if first.engine.dialect.name == "postgresql":
            _until_waiting_on_a_lock(first.engine, thread)
    thread.join(30)
    assert not thread.is_alive()
    [result] = out
    if isinstance(result, BaseException):
        raise result
    return made, result


def test_a_collection_created_at_once_by_two_processes_is_one(
    two_processes: tuple[Library, Library],
) -> None:
    first, second = two_processes
    made, got = _interleaved(
        first,
        second,
        Collection(slug="colr1", name="Colr1"),
        lambda: second.ensure_collection("colr1"),
    )
    assert got == made
    with second.session() as s:
        assert s.scalars(select(Collection.id).where(Collection.slug == "colr1")).all() == [made]


def test_a_tag_created_at_once_by_two_processes_is_one(
    two_processes: tuple[Library, Library],
) -> None:
    first, second = two_processes
    sid = add_snapshot(second, "https://harbour.example/")
    made, _ = _interleaved(
        first, second, Tag(name="g3"), lambda: second.tags.add([sid], ["g3", "other"])
    )
    with second.session() as s:
        assert s.scalars(select(Tag.id).where(Tag.name == "g3")).all() == [made]
        tagged = s.scalars(select(SnapshotTag.tag_id).where(SnapshotTag.snapshot_id == sid))
        assert made in set(tagged)
    assert sorted(second.tags.names()) == ["g3", "other"]


def test_many_threads_creating_the_same_labels_agree(
    two_processes: tuple[Library, Library],
) -> None:
    first, second = two_processes
    sids = [add_snapshot(first, f"https://harbour.example/{i}") for i in range(4)]
    start = threading.Barrier(4)

    def work(i: int) -> int:
        lib = (first, second)[i % 2]
        start.wait()
        lib.tags.add([sids[i]], ["fresh"])
        return lib.ensure_collection("together")

    threads = [_in_thread(lambda i=i: work(i)) for i in range(4)]
    for thread, _ in threads:
        thread.join(60)
    results = [out[0] for _, out in threads]
    assert not any(isinstance(r, BaseException) for r in results), results
    assert len(set(results)) == 1
    assert first.tags.counts() == {first.tags.all()[0].id: 4}


def test_a_tag_created_at_once_in_two_cases_is_one(
    two_processes: tuple[Library, Library],
) -> None:
    """'Climate' and 'climate' are one tag even when two processes make them at once (on
    PostgreSQL both looked, found none, and each inserted its own spelling)."""
    first, second = two_processes
    sid = add_snapshot(second, "https://climate.example/")
    made, _ = _interleaved(
        first, second, Tag(name="Climate"), lambda: second.tags.add([sid], ["climate"])
    )
    assert [(t.id, t.name) for t in second.tags.all()] == [(made, "Climate")]
    assert second.tags.counts() == {made: 1}
