"""``archiver index rebuild`` on SQLite and PostgreSQL: pages with no indexed text become
searchable from their text.txt, nothing indexed is lost, and a stopped rebuild continues
where it stopped."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text, update

from archiver_app.cli import main
from archiver_app.importers.warcs import import_warc_file
from archiver_app.jobs import JobKind, default_registry, enqueue, run_job
from archiver_app.library import Library
from archiver_app.search import Query, search
from archiver_app.search import reindex as reindex_mod
from archiver_app.search.reindex import rebuild_index, reindex_config, unfinished_cursor
from archiver_app.store.models import Job, JobStatus
from archiver_app.tasks import CancelToken, ProgressUpdate
from tests.helpers.warcs import Resp, html_page, write_warc

PAGES = 7


@pytest.fixture(params=["sqlite", "postgresql"])
def library(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Library]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgresql" else None
    lib = Library.open(tmp_path / "lib", create=True, database_url=url)
    try:
        yield lib
    finally:
        lib.close()


def _fill(lib: Library, folder: Path) -> list[int]:
    """PAGES snapshots, each with a text.txt that says ``secretword<i>``, and an index that
    has lost every row (as on PostgreSQL before full-text search)."""
    resps = [
        Resp(f"https://a.example/{i}", html_page(f"Page {i}", "warc text"), date="2024-01-01")
        for i in range(PAGES)
    ]
    import_warc_file(lib, write_warc(folder / "pages.warc.gz", resps), tags=("kept",))
    with lib.engine.begin() as conn:
        ids = [int(r[0]) for r in conn.execute(text("SELECT id FROM snapshots ORDER BY id"))]
        for i, sid in enumerate(ids):
            rel = f"collections/default/2024/01/{sid}"
            (lib.root / rel).mkdir(parents=True)
            (lib.root / rel / "text.txt").write_text(f"page body secretword{i} here")
            conn.execute(
                text("UPDATE snapshots SET folder = :f WHERE id = :i"), {"f": rel, "i": sid}
            )
        conn.execute(text("DELETE FROM snapshot_fts"))
    return ids


def _found(lib: Library, words: str) -> list[str]:
    return [h.url for h in search(lib, Query(words, prefix_last=False))]


def test_rebuild_indexes_text_files_and_keeps_what_has_none(
    library: Library, tmp_path: Path
) -> None:
    ids = _fill(library, tmp_path)
    assert _found(library, "secretword3") == []
    # the last page has no text file but text in the index: that text stays
    last = library.root / f"collections/default/2024/01/{ids[-1]}/text.txt"
    last.unlink()
    with library.engine.begin() as conn:
        conn.execute(text("UPDATE snapshots SET title = 'Renamed' WHERE id = :i"), {"i": ids[0]})
    from archiver_app.store.fulltext import upsert_snapshot_text

    with library.engine.begin() as conn:
        upsert_snapshot_text(conn, ids[-1], title="t", url="u", body="indexed only here")

    report = rebuild_index(library)

    assert (report.checked, report.from_file, report.kept, report.without_text) == (PAGES, 6, 1, 0)
    assert _found(library, "secretword3") == ["https://a.example/3"]
    assert _found(library, "indexed only") == [f"https://a.example/{PAGES - 1}"]
    assert _found(library, "renamed secretword0") == ["https://a.example/0"]
    assert len(_found(library, "kept")) == PAGES  # tags come from the database


def test_missing_only_leaves_indexed_rows_alone(library: Library, tmp_path: Path) -> None:
    ids = _fill(library, tmp_path)
    from archiver_app.store.fulltext import upsert_snapshot_text

    with library.engine.begin() as conn:
        upsert_snapshot_text(conn, ids[2], title="x", url="y", body="hand written")
    report = rebuild_index(library, missing_only=True)
    assert report.checked == PAGES - 1
    assert _found(library, "hand written") == ["https://a.example/2"]
    assert _found(library, "secretword2") == []
    assert _found(library, "secretword4") == ["https://a.example/4"]


def test_a_cancelled_rebuild_continues_where_it_stopped(
    library: Library,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ids = _fill(library, tmp_path)
    monkeypatch.setattr(reindex_mod, "BATCH", 2)
    cancel = CancelToken()
    seen: list[int] = []

    def stop_after_two_batches(update: ProgressUpdate) -> None:
        seen.append(update.done)
        if update.done >= 4:
            cancel.cancel()

    job_id = enqueue(library, JobKind.REINDEX, reindex_config(), name="reindex")
    run = run_job(
        library, job_id, default_registry(), progress=stop_after_two_batches, cancel=cancel
    )
    assert run.status == JobStatus.ABORTED
    assert seen == [2, 4]
    assert unfinished_cursor(library) == ids[3]
    assert _found(library, "secretword3") == ["https://a.example/3"]
    assert _found(library, "secretword4") == []

    root = str(library.root)
    code = main(["--library", root, "index", "rebuild"])
    out, err = capsys.readouterr()
    assert code == 0
    assert f"continuing after snapshot {ids[3]}" in err
    assert f"indexed {PAGES - 4} snapshots: {PAGES - 4} from their text file" in out
    assert all(_found(library, f"secretword{i}") for i in range(PAGES))
    assert unfinished_cursor(library) == 0  # the last rebuild completed


def test_only_a_stopped_rebuild_of_the_same_kind_is_continued(
    library: Library, tmp_path: Path
) -> None:
    ids = _fill(library, tmp_path)
    job_id = enqueue(library, JobKind.REINDEX, reindex_config(), name="reindex")
    with library.engine.begin() as conn:
        conn.execute(update(Job).where(Job.id == job_id).values(result={"after_id": ids[2]}))
    assert unfinished_cursor(library) == 0  # queued: nobody stopped it
    later = library.clock() + timedelta(minutes=5)
    with library.engine.begin() as conn:  # running, its lease still held: live elsewhere
        conn.execute(
            update(Job).where(Job.id == job_id).values(status="running", lease_expires_at=later)
        )
    assert unfinished_cursor(library) == 0
    earlier = library.clock() - timedelta(minutes=5)
    with library.engine.begin() as conn:  # its process died
        conn.execute(update(Job).where(Job.id == job_id).values(lease_expires_at=earlier))
    assert unfinished_cursor(library) == ids[2]
    assert unfinished_cursor(library, missing_only=True) == 0  # another kind of rebuild


def test_a_killed_rebuild_resumes_from_its_own_cursor(library: Library, tmp_path: Path) -> None:
    """A job whose process died is queued again (resumable kind) and skips the batches
    it committed."""
    ids = _fill(library, tmp_path)
    job_id = enqueue(library, JobKind.REINDEX, reindex_config(), name="reindex")
    with library.engine.begin() as conn:  # as a dead process left it: cursor after 5 pages
        conn.execute(update(Job).where(Job.id == job_id).values(result={"after_id": ids[4]}))
    from archiver_app.jobs.kinds import RunningJob

    job = RunningJob(job_id, JobKind.REINDEX, reindex_config(), resumed=True)
    report = reindex_mod.run_reindex(library, job, lambda u: None, CancelToken())
    assert report.checked == PAGES - 5
    assert _found(library, "secretword4") == []
    assert _found(library, "secretword5") == ["https://a.example/5"]
