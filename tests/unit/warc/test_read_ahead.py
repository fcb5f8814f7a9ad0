"""Reading the next file ahead in a second worker while the current one is written."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app.library import Library
from archiver_app.store.files import register_file
from archiver_app.store.models import FileKind
from archiver_app.warc import workers
from archiver_app.warc.indexer import IndexTarget, index_warc
from archiver_app.warc.scan import scan_records
from tests.helpers.warcs import site, write_warc


@pytest.fixture(autouse=True)
def _no_leftover_workers() -> Iterator[None]:
    workers.drop_read_ahead()
    yield
    workers.drop_read_ahead()


def _library(tmp_path: Path, hosts: list[str]) -> tuple[Library, list[IndexTarget]]:
    lib = Library.open(tmp_path / "lib", create=True)
    lib.ensure_collection("default")
    targets = []
    for host in hosts:
        src = write_warc(tmp_path / f"{host}.warc.gz", site(5, host=host))
        (lib.root / src.name).write_bytes(src.read_bytes())
        with lib.write() as s:
            file_id = register_file(s, lib.root, src.name, FileKind.WARC).id
        targets.append(
            IndexTarget(
                path=lib.root / src.name, file_id=file_id, warc_file=src.name, collection_id=1
            )
        )
    return lib, targets


def _alive(pid: int | None) -> bool:
    """Is the (reaped or running) child ``pid`` still there?"""
    assert pid is not None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _records(lib: Library, file_id: int) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(lib.db_path)
    try:
        return conn.execute(
            'SELECT url, "offset", length, file_id FROM records WHERE file_id = ? ORDER BY id',
            (file_id,),
        ).fetchall()
    finally:
        conn.close()


def test_the_next_file_is_read_while_this_one_is_written(tmp_path: Path) -> None:
    lib, (a, b) = _library(tmp_path, ["a.example", "b.example"])
    try:
        index_warc(lib, a, then=b.path)  # (read ahead before b has a file id)
        ahead = workers._ahead
        assert ahead is not None and ahead.key[0] == b.path
        reader = ahead.worker.proc.pid
        report = index_warc(lib, b)
        assert workers._ahead is None  # claimed
        assert reader in workers.idle_workers()  # it read b, and waits for a next file
        assert report.worker_cpu > 0
        rows = _records(lib, b.file_id)
        expected = [(r.url, r.offset, r.length, b.file_id) for r in scan_records(b.path)]
        assert rows == expected and len(rows) == 10
        assert not _records(lib, 0)
    finally:
        lib.close()


def test_a_file_changed_since_reading_ahead_is_read_again(tmp_path: Path) -> None:
    lib, (a, b) = _library(tmp_path, ["a.example", "b.example"])
    try:
        index_warc(lib, a, then=b.path)
        ahead = workers._ahead
        assert ahead is not None
        old_reader = ahead.worker.proc.pid
        bigger = write_warc(tmp_path / "bigger.warc.gz", site(8, host="b.example"))
        b.path.write_bytes(bigger.read_bytes())
        report = index_warc(lib, b)
        assert report.pages == 8
        assert not _alive(old_reader)
        expected = [(r.url, r.offset, r.length, b.file_id) for r in scan_records(b.path)]
        assert _records(lib, b.file_id) == expected
    finally:
        lib.close()


def test_an_unclaimed_read_ahead_is_dropped(tmp_path: Path) -> None:
    lib, (a, b, c) = _library(tmp_path, ["a.example", "b.example", "c.example"])
    try:
        index_warc(lib, a, then=b.path)
        first = workers._ahead
        assert first is not None
        first_pid = first.worker.proc.pid
        index_warc(lib, c, then=a.path)  # b is not indexed after all; a newer hint replaces it
        assert not _alive(first_pid)
        second = workers._ahead
        assert second is not None and second.key[0] == a.path
        second_pid = second.worker.proc.pid
        workers.drop_read_ahead()
        assert workers._ahead is None and not _alive(second_pid)
        assert [r[1] for r in _records(lib, c.file_id)] == [r.offset for r in scan_records(c.path)]
    finally:
        lib.close()


@pytest.mark.parametrize("link", [False, True])
def test_a_folder_import_reads_each_next_file_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, link: bool
) -> None:
    from archiver_app.importers.run import import_paths

    folder = tmp_path / "warcs"
    folder.mkdir()
    sources = [write_warc(folder / f"{h}.warc.gz", site(4, host=f"{h}.example")) for h in "abc"]
    claimed: list[Path] = []
    real_claim = workers._claim

    def claim(key: tuple[object, ...], path: Path) -> object:
        ahead = real_claim(key, path)  # type: ignore[arg-type]
        if ahead is not None:
            claimed.append(path)
        return ahead

    monkeypatch.setattr(workers, "_claim", claim)
    lib = Library.open(tmp_path / "lib", create=True)
    try:
        report = import_paths(lib, [folder], link=link)
        assert [o.pages for o in report.outcomes] == [4, 4, 4]
        # Copies are read ahead from their originals, linked files from themselves.
        assert claimed == sources[1:]
        assert workers._ahead is None
        conn = sqlite3.connect(lib.db_path)
        try:
            for src in sources:
                rows = conn.execute(
                    'SELECT r."offset" FROM records r JOIN files f ON f.id = r.file_id '
                    "WHERE f.path LIKE ? ORDER BY r.id",
                    (f"%/{src.name}",),
                ).fetchall()
                assert [r[0] for r in rows] == [r.offset for r in scan_records(src)]
        finally:
            conn.close()
    finally:
        lib.close()


def test_an_import_starts_its_worker_while_it_hashes_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from archiver_app.importers import warcs

    while workers._idle:  # no idle worker from an earlier test
        workers._idle.pop().close()
    src = write_warc(tmp_path / "one.warc.gz", site(3))
    at_hashing: list[list[int]] = []
    real_sha = warcs.sha256_file

    def sha256_file(path: Path) -> str:
        at_hashing.append(workers.idle_workers())
        return real_sha(path)

    monkeypatch.setattr(warcs, "sha256_file", sha256_file)
    lib = Library.open(tmp_path / "lib", create=True)
    try:
        outcome = warcs.import_warc_file(lib, src)
        assert outcome.pages == 3
        started = at_hashing[0]
        assert len(started) == 1  # already starting when the file was hashed...
        assert workers.idle_workers() == started  # ...and it is the one that read the file
    finally:
        lib.close()


def test_a_cancelled_folder_import_leaves_no_reader_behind(tmp_path: Path) -> None:
    from archiver_app.importers.run import import_paths
    from archiver_app.tasks import CancelToken
    from archiver_app.tasks.progress import Cancelled

    folder = tmp_path / "warcs"
    folder.mkdir()
    for h in "abc":
        write_warc(folder / f"{h}.warc.gz", site(4, host=f"{h}.example"))
    cancel = CancelToken()
    readers: list[int | None] = []

    def after_first(outcome: object) -> None:
        ahead = workers._ahead
        readers.append(ahead.worker.proc.pid if ahead is not None else None)
        cancel.cancel()  # b.warc.gz is being read ahead and will not be imported

    lib = Library.open(tmp_path / "lib", create=True)
    try:
        with pytest.raises(Cancelled):
            import_paths(lib, [folder], cancel=cancel, on_outcome=after_first)
        assert readers and readers[0] is not None
        assert workers._ahead is None and not _alive(readers[0])
    finally:
        lib.close()
