"""An empty collection deleted: its finished jobs and imports filed under the default
collection, and a watch, an unfinished job or an import saving into it refused by name
(on SQLite and PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.api import Changes
from archiver_app.api.collection_moves import KeptBy, KeptCode
from archiver_app.errors import InputError
from archiver_app.layout.archivebox import register_archivebox
from archiver_app.layout.migrator import run_migrator
from archiver_app.library import Library
from archiver_app.store.models import ImportSource, Job
from archiver_app.watch.runner import add_watch, list_watches
from tests.helpers.snapshots import add_snapshot


def _job(library: Library, collection_id: int, status: str) -> int:
    with library.write() as s:
        job = Job(collection_id=collection_id, kind="capture", name="j", status=status,
                  config={}, created_at=library.clock(), updated_at=library.clock())  # fmt: skip
        s.add(job)
        s.flush()
        return job.id


def test_an_empty_collection_a_finished_job_saved_into_is_deleted(any_library: Library) -> None:
    library = any_library
    default = library.ensure_collection()
    temp, _ = library.collections.create("Temp")
    done = _job(library, temp.id, "completed")
    failed = _job(library, temp.id, "failed")
    assert library.collections.delete(temp.id) == Changes(collections=True)
    assert [c.name for c in library.collections.all()] == ["Default"]
    with library.session() as s:
        filed = s.scalars(select(Job.collection_id).where(Job.id.in_([done, failed])))
        assert set(filed) == {default}


def test_an_empty_collection_a_watch_saves_into_stays(any_library: Library) -> None:
    library = any_library
    library.ensure_collection("field-notes", "Field Notes")
    watch = add_watch(library, ["https://example.org/"], collection="field-notes")
    coll = next(c for c in library.collections.all() if c.slug == "field-notes")
    with library.write() as s:  # its first run done: only the watch names it
        job = s.get(Job, watch)
        assert job is not None
        job.status = "completed"
    with pytest.raises(InputError, match=rf"watch {watch} saves into collection 'Field Notes'"):
        library.collections.delete(coll.id)
    assert coll in library.collections.all()
    assert [w.job_id for w in list_watches(library)] == [watch]


@pytest.mark.parametrize("status", ["queued", "running", "paused"])
def test_an_empty_collection_an_unfinished_job_saves_into_stays(
    any_library: Library, status: str
) -> None:
    library = any_library
    temp, _ = library.collections.create("Temp")
    job = _job(library, temp.id, status)
    with pytest.raises(InputError, match=rf"job {job} \({status}\) saves into collection 'Temp'"):
        library.collections.delete(temp.id)
    assert temp in library.collections.all()
    # the refusal left no broken transaction behind: the library still writes
    assert library.collections.create("Other")[0].name == "Other"


def test_what_keeps_an_empty_collection_is_known_before_it_is_deleted(
    any_library: Library,
) -> None:
    """A front end can say what keeps an empty collection before asking to delete it (the
    app asked "Delete?" and only then refused); the refusal says the same."""
    library = any_library
    library.ensure_collection("field-notes", "Field Notes")
    temp, _ = library.collections.create("Temp")
    spare, _ = library.collections.create("Spare")
    pages = ("https://example.org/", "https://example.org/b")
    watch = add_watch(library, list(pages), collection="field-notes")
    job = _job(library, temp.id, "paused")
    _job(library, spare.id, "completed")
    coll = next(c for c in library.collections.all() if c.slug == "field-notes")
    kept = library.collections.kept_by(coll.id)
    assert kept == KeptBy(KeptCode.WATCH, "Field Notes", job_id=watch, pages=pages)
    assert library.collections.kept_by(temp.id) == KeptBy(
        KeptCode.JOB, "Temp", job_id=job, status="paused"
    )
    assert library.collections.kept_by(spare.id) is None
    assert library.collections.kept_by(10_000) is None  # gone meanwhile
    with pytest.raises(InputError) as refused:
        library.collections.delete(coll.id)
    assert kept is not None and str(refused.value) == kept.message


def test_a_collection_an_archivebox_folder_is_imported_into_says_so_then_is_deleted(
    any_library: Library, tmp_path: Path
) -> None:
    """An empty collection an ArchiveBox folder was registered into (``archiver import
    --archivebox PATH --collection boxed``) could never be deleted: "collection 'Boxed' is
    still named by a job, a watch, an edition or an import; it stays", even once the folder
    was all in. Now, while it is being imported, the refusal names the folder and says to
    let the import finish; once it is, the collection is deleted and the import filed
    under the default collection (or where the captures go)."""
    library = any_library
    default = library.ensure_collection()
    folder = tmp_path / "abox"
    (folder / "archive").mkdir(parents=True)
    source = register_archivebox(library, folder, collection="boxed").id
    boxed = next(c for c in library.collections.all() if c.slug == "boxed")
    with pytest.raises(InputError) as refused:
        library.collections.delete(boxed.id)
    assert str(refused.value) == (
        f"the ArchiveBox folder {folder} (import source {source}) is still being imported"
        " into collection 'Boxed': let its import finish first (archiver migrate, or the app"
        " while it is idle); the collection stays"
    )
    kept = KeptBy(KeptCode.IMPORT, "Boxed", folder=str(folder), source_id=source)
    assert library.collections.kept_by(boxed.id) == kept  # the app says it before asking
    run_migrator(library)  # the folder is all in
    assert library.collections.kept_by(boxed.id) is None
    assert library.collections.delete(boxed.id) == Changes(collections=True)
    assert [c.name for c in library.collections.all()] == ["Default"]

    # one holding captures, its import done: deleted once they move
    other = tmp_path / "abox2"
    (other / "archive").mkdir(parents=True)
    source = register_archivebox(library, other, collection="trips").id
    run_migrator(library)
    add_snapshot(library, "https://a.example/", collection="trips")
    trips = next(c for c in library.collections.all() if c.slug == "trips")
    library.collections.delete(trips.id, move_to=default)
    assert [c.name for c in library.collections.all()] == ["Default"]
    with library.session() as s:
        assert set(s.scalars(select(ImportSource.collection_id))) == {default}
