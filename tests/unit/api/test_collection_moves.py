"""Collections made empty, captures moved between them, a collection deleted with its
captures moved into another."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.api import Changes
from archiver_app.api.collection_moves import KeptBy, KeptCode, SavesInto
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.search import Query, matching_ids
from archiver_app.store.models import Job, Snapshot
from archiver_app.watch.runner import add_watch
from tests.helpers.snapshots import add_snapshot
from tests.unit.editions.accepted import accepted_edition


def _slugs(library: Library) -> dict[str, int]:
    return {c.slug: c.id for c in library.collections.all()}


def test_a_new_collection_needs_a_name_of_its_own(library: Library) -> None:
    view, changes = library.collections.create("  Harbour   Trips ")
    assert (view.name, view.slug) == ("Harbour Trips", "harbour-trips")
    assert changes == Changes(collections=True)
    assert library.collections.counts().get(view.id, 0) == 0
    with pytest.raises(InputError, match="already a collection called 'Harbour Trips'"):
        library.collections.create("harbour trips")
    with pytest.raises(InputError, match="needs a name"):
        library.collections.create("   ")
    other, _ = library.collections.create("Harbour-trips!")  # another name, same folder name
    assert other.slug == "harbour-trips-2"
    assert library.collections.create("Café ☕")[0].slug == "cafe"
    assert library.collections.create("☕")[0].slug == "collection"


def test_captures_move_and_the_search_filter_follows(library: Library) -> None:
    a = add_snapshot(library, "https://a.example/", body="rivers", collection="trips")
    b = add_snapshot(library, "https://b.example/", body="rivers", collection="trips")
    folder = library.snapshots.detail(a).folder  # type: ignore[union-attr]
    target, _ = library.collections.create("Research")
    changes = library.collections.move([a, 999], target.id)
    assert changes == Changes(snapshots=True, collections=True, snapshot_ids=frozenset({a}))
    counts = library.collections.counts()
    assert counts[target.id] == 1 and counts[_slugs(library)["trips"]] == 1
    assert matching_ids(library, Query(text="rivers", collection="research")) == [a]
    assert matching_ids(library, Query(text="rivers", collection="trips")) == [b]
    assert library.snapshots.detail(a).folder == folder  # type: ignore[union-attr]
    assert not library.collections.move([a], target.id).snapshot_ids  # already there
    with pytest.raises(InputError, match="no collection"):
        library.collections.move([a], 12345)


def test_a_collection_is_deleted_with_its_captures_and_jobs_moved(library: Library) -> None:
    a = add_snapshot(library, "https://a.example/", collection="trips")
    library.ensure_collection()
    ids = _slugs(library)
    with library.write() as s:
        job = Job(collection_id=ids["trips"], kind="capture", name="j", status="completed",
                  config={}, created_at=library.clock(), updated_at=library.clock())  # fmt: skip
        s.add(job)
        s.flush()
        job_id = job.id
    with pytest.raises(InputError, match="holds 1 capture"):
        library.collections.delete(ids["trips"])
    with pytest.raises(InputError, match="cannot move into it"):
        library.collections.delete(ids["trips"], move_to=ids["trips"])
    changes = library.collections.delete(ids["trips"], move_to=ids["default"])
    assert changes.collections and changes.snapshot_ids == {a}
    assert "trips" not in _slugs(library)
    with library.session() as s:
        assert s.scalar(select(Snapshot.collection_id).where(Snapshot.id == a)) == ids["default"]
        assert s.scalar(select(Job.collection_id).where(Job.id == job_id)) == ids["default"]


def test_the_only_collection_is_deleted_with_its_captures_moved_to_a_new_default(
    library: Library,
) -> None:
    a = add_snapshot(library, "https://a.example/", collection="trips")
    trips = _slugs(library)["trips"]
    assert list(_slugs(library)) == ["trips"]
    with pytest.raises(InputError, match="one collection, not two"):
        library.collections.delete(trips, move_to=trips, to_default=True)
    changes = library.collections.delete(trips, to_default=True)
    assert changes.snapshot_ids == {a}
    assert [(c.slug, c.name) for c in library.collections.all()] == [("default", "Default")]
    default = _slugs(library)["default"]
    with library.session() as s:
        assert s.scalar(select(Snapshot.collection_id).where(Snapshot.id == a)) == default
    add_snapshot(library, "https://b.example/", collection="spare")
    library.collections.delete(_slugs(library)["spare"], to_default=True)  # one is there now
    assert list(_slugs(library)) == ["default"]
    assert library.collections.counts() == {default: 2}


def test_what_saves_into_a_collection_is_known_before_it_goes_along(library: Library) -> None:
    add_snapshot(library, "https://a.example/", collection="trips")
    library.ensure_collection()
    ids = _slugs(library)
    watch = add_watch(library, ["https://a.example/"], collection="trips")
    made: dict[str, int] = {}
    with library.write() as s:
        for status in ("paused", "completed", "running", "queued"):
            now = library.clock()
            job = Job(collection_id=ids["trips"], kind="crawl", name=status, status=status,
                      config={}, created_at=now, updated_at=now)  # fmt: skip
            s.add(job)
            s.flush()
            made[status] = job.id
    assert library.collections.saving_into(ids["trips"]) == [
        SavesInto(watch, True, pages=("https://a.example/",)),
        SavesInto(made["paused"], False, status="paused"),
        SavesInto(made["queued"], False, status="queued"),
    ]  # the finished job is filed along too, but saves nothing; the running one refuses
    assert library.collections.saving_into(ids["default"]) == []
    assert library.collections.saving_into(12345) == []


def test_a_collection_a_running_job_saves_into_stays_whole(library: Library) -> None:
    a = add_snapshot(library, "https://a.example/", collection="trips")
    library.ensure_collection()
    ids = _slugs(library)
    with library.write() as s:
        s.add(Job(collection_id=ids["trips"], kind="crawl", name="j", status="running",
                  config={}, created_at=library.clock(), updated_at=library.clock()))  # fmt: skip
    with pytest.raises(InputError, match=r"job \d+ \(running\) saves into collection 'Trips'"):
        library.collections.delete(ids["trips"], move_to=ids["default"])
    assert library.collections.counts()[ids["trips"]] == 1
    with library.session() as s:
        assert s.scalar(select(Snapshot.collection_id).where(Snapshot.id == a)) == ids["trips"]


def test_what_keeps_a_collection_with_captures_is_known_before_they_move(
    library: Library,
) -> None:
    """Deleting a collection of an edition, its captures moved elsewhere, was refused only
    after the move was asked for, and vaguely: "Collection 'Trips' is still named by a job,
    a watch, an edition or an import; it stays"."""
    add_snapshot(library, "https://a.example/", collection="trips")
    library.ensure_collection()
    ids = _slugs(library)
    add_watch(library, ["https://a.example/"], collection="trips")
    assert library.collections.kept_by(ids["trips"], with_captures=True) is None  # it goes along
    library.editions.create("trips", "trips-2024", year=2024)
    kept = library.collections.kept_by(ids["trips"], with_captures=True)
    assert kept == KeptBy(KeptCode.EDITION, "Trips", edition="trips-2024")
    with pytest.raises(InputError) as refused:
        library.collections.delete(ids["trips"], move_to=ids["default"])
    assert str(refused.value) == kept.message
    assert library.collections.counts()[ids["trips"]] == 1


def test_a_capture_of_an_accepted_edition_does_not_move(library: Library, tmp_path: Path) -> None:
    accepted_edition(library, tmp_path)
    with library.session() as s:
        ids = list(s.scalars(select(Snapshot.id)))
    target, _ = library.collections.create("Elsewhere")
    with pytest.raises(InputError, match="in edition c-2024, which is accepted"):
        library.collections.move(ids, target.id)
    assert library.collections.counts().get(target.id, 0) == 0
