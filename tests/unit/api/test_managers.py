"""The application API's managers: frozen views out, ``Changes`` back from every edit."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest

from archiver_app.api import Changes
from archiver_app.api.labels import parse_tags
from archiver_app.api.settings import SAVED_SEARCHES_KEY
from archiver_app.library import Library
from tests.helpers.snapshots import add_snapshot


def _fts_tags(library: Library, sid: int) -> str:
    conn = sqlite3.connect(library.db_path)
    try:
        return str(
            conn.execute("SELECT tags FROM snapshot_fts WHERE rowid = ?", (sid,)).fetchone()[0]
        )
    finally:
        conn.close()


def test_tag_edits_say_what_changed_and_keep_search_in_step(library: Library) -> None:
    a = add_snapshot(library, "https://a.example/", title="A", body="alpha")
    b = add_snapshot(library, "https://b.example/", title="B", body="beta", tags=("old",))
    changes = library.tags.set([a], ["climate", "river"])
    assert changes == Changes(snapshots=True, tags=True, snapshot_ids=frozenset({a}))
    assert _fts_tags(library, a) == "climate river"
    changes = library.tags.add([a, b], ["river", "new"])
    assert changes.tags and changes.snapshot_ids == {a, b}
    assert _fts_tags(library, b) == "new old river"
    assert library.tags.names() == ["climate", "new", "old", "river"]
    detail = library.snapshots.detail(b)
    assert detail is not None and detail.tags == ["new", "old", "river"]
    assert parse_tags(" river ,, Big  Data,river") == ["river", "Big Data"]


def test_notes_for_a_capture_deleted_meanwhile_are_refused_not_dropped(
    library: Library,
) -> None:
    """Deleted from another window, then its notes saved: nothing was saved and nothing
    said, so the window took the save for done (and, its details gone, saved again)."""
    from archiver_app.errors import InputError

    sid = add_snapshot(library, "https://a.example/x", title="A page")
    library.snapshots.delete([sid])
    with pytest.raises(InputError) as refused:
        library.snapshots.set_notes(sid, "ask the harbour office")
    assert str(refused.value) == (
        f"capture {sid} was deleted (perhaps from another window or machine); the note was"
        " not saved"
    )
    assert "ask the harbour office" in (refused.value.details or "")


def test_notes_settings_and_views(library: Library) -> None:
    sid = add_snapshot(library, "https://a.example/x", title="A page")
    changes = library.snapshots.set_notes(sid, "check later")
    assert changes.snapshots and not changes.tags and changes.snapshot_ids == {sid}
    detail = library.snapshots.detail(sid)
    assert detail is not None and detail.notes == "check later"
    with pytest.raises(dataclasses.FrozenInstanceError):
        detail.notes = "x"  # type: ignore[misc]
    target = library.snapshots.replay_target(sid)
    assert target is not None and (target.url, target.title) == ("https://a.example/x", "A page")
    shot = library.snapshots.screenshot_path(sid)
    assert shot is not None and shot.is_file()
    assert library.snapshots.detail(sid + 1) is None and library.snapshots.replay_target(99) is None
    assert library.settings.get(SAVED_SEARCHES_KEY, []) == []
    assert library.settings.put(SAVED_SEARCHES_KEY, [{"name": "n"}]) == Changes(settings=True)
    assert library.settings.get(SAVED_SEARCHES_KEY) == [{"name": "n"}]
    (coll,) = library.collections.all()
    assert library.collections.slug_of(coll.id) == coll.slug == "default"
    assert library.snapshots is library.snapshots  # built once


def test_changes_combine() -> None:
    both = Changes.of_snapshots([1]) | Changes(tags=True, snapshot_ids=frozenset({2}))
    assert both == Changes(snapshots=True, tags=True, snapshot_ids=frozenset({1, 2}))
    assert both.any and not Changes().any


def test_drives_list_without_a_scan_reads_only_where_each_drive_was(
    library: Library, tmp_path: Path
) -> None:
    from archiver_app.mirror import add_destination

    add_snapshot(library, "https://a.example/", title="A")
    (tmp_path / "media" / "usb").mkdir(parents=True)
    add_destination(library, tmp_path / "media" / "usb", "blue")
    (tmp_path / "media" / "usb").rename(tmp_path / "media" / "usb2")  # mounted elsewhere
    (quiet,) = library.drives.list(scan_roots=[tmp_path / "media"], scan=False)
    assert not quiet.mounted  # not looked for: the timer's cheap refresh
    (found,) = library.drives.list(scan_roots=[tmp_path / "media"])
    assert found.mount_path == tmp_path / "media" / "usb2"
    (again,) = library.drives.list(scan=False)  # now where it was last seen
    assert again.mount_path == found.mount_path and again.missing == quiet.missing > 0


def test_a_tag_is_one_tag_whatever_its_case(library: Library) -> None:
    from archiver_app.search import Query, search

    a = add_snapshot(library, "https://a.example/", title="A", body="alpha", tags=("Harbour",))
    b = add_snapshot(library, "https://b.example/", title="B", body="beta")
    library.tags.add([a, b], ["harbour", "élan"])
    library.tags.add([b], ["ÉLAN", "HARBOUR"])
    assert library.tags.names() == ["Harbour", "élan"]  # kept as first given
    for sid in (a, b):
        detail = library.snapshots.detail(sid)
        assert detail is not None and detail.tags == ["Harbour", "élan"]
    assert _fts_tags(library, b) == "Harbour élan"
    assert {h.url for h in search(library, Query("", tag="HARBOUR"))} == {
        "https://a.example/",
        "https://b.example/",
    }
    assert parse_tags("Harbour, harbour ,HARBOUR") == ["Harbour"]


def test_tags_are_renamed_merged_and_deleted_and_search_follows(library: Library) -> None:
    from archiver_app.errors import InputError
    from archiver_app.search import Query, search

    a = add_snapshot(library, "https://a.example/", title="A", body="alpha", tags=("ferry",))
    b = add_snapshot(library, "https://b.example/", title="B", body="beta", tags=("boats",))
    ids = {t.name: t.id for t in library.tags.all()}
    assert library.tags.counts() == {ids["ferry"]: 1, ids["boats"]: 1}
    changes = library.tags.rename(ids["ferry"], "Ferries")
    assert changes.tags and changes.snapshot_ids == {a}
    assert library.tags.names() == ["boats", "Ferries"] and _fts_tags(library, a) == "Ferries"
    library.tags.rename(ids["boats"], "ferries")  # another tag's name: one tag, both captures
    assert [(t.id, t.name) for t in library.tags.all()] == [(ids["ferry"], "Ferries")]
    assert {h.url for h in search(library, Query("", tag="ferries"))} == {
        "https://a.example/",
        "https://b.example/",
    }
    with pytest.raises(InputError, match="needs a name"):
        library.tags.rename(ids["ferry"], "  ")
    changes = library.tags.delete(ids["ferry"])
    assert changes.snapshot_ids == {a, b} and library.tags.names() == []
    assert _fts_tags(library, b) == "" and library.snapshots.detail(b) is not None


def test_saved_searches_follow_a_tag_renamed_or_merged(library: Library) -> None:
    """A saved search filtering on a tag renamed (or merged into another) filters on it
    under its new name: it went on naming the old one and matched nothing."""
    from archiver_app.api.table import Filters
    from archiver_app.search import Query, search

    add_snapshot(library, "https://a.example/", title="A", tags=("crawled",))
    add_snapshot(library, "https://b.example/", title="B", tags=("Members",))
    add_snapshot(library, "https://c.example/", title="C", tags=("draft",))
    ids = {t.name: t.id for t in library.tags.all()}
    saved = [
        {"name": "Crawl", "search": "", "filters": Filters(tag="Crawled").to_json()},
        {"name": "Drafts", "search": "x", "filters": Filters(tag="draft").to_json()},
        {"name": "Old"},
    ]
    library.settings.put(SAVED_SEARCHES_KEY, saved)
    changes = library.tags.rename(ids["crawled"], "members")  # merged into Members
    assert changes.settings and changes.tags
    after = library.settings.get(SAVED_SEARCHES_KEY)
    assert after[0] == {**saved[0], "filters": Filters(tag="Members").to_json()}
    assert after[1:] == saved[1:]
    query = Query("", tag=Filters.from_json(after[0]["filters"]).tag)
    assert {h.url for h in search(library, query)} == {"https://a.example/", "https://b.example/"}
    assert library.tags.rename(ids["draft"], "Drafts").settings  # renamed in place
    assert library.settings.get(SAVED_SEARCHES_KEY)[1]["filters"]["tag"] == "Drafts"
    add_snapshot(library, "https://d.example/", title="D", tags=("loose",))
    loose = next(t.id for t in library.tags.all() if t.name == "loose")
    assert not library.tags.rename(loose, "Free").settings  # named by no saved search


def test_collections_are_renamed_and_an_empty_one_deleted(library: Library) -> None:
    from archiver_app.errors import InputError

    add_snapshot(library, "https://a.example/", title="A", collection="trips")
    library.ensure_collection("spare")
    library.ensure_collection()
    by_slug = {c.slug: c.id for c in library.collections.all()}
    assert library.collections.rename(by_slug["trips"], " Harbour  trips ").collections
    names = {c.slug: c.name for c in library.collections.all()}
    assert names["trips"] == "Harbour trips"  # the slug stays
    with pytest.raises(InputError, match="already a collection called 'Spare'"):
        library.collections.rename(by_slug["trips"], "SPARE")  # two of one name: refused
    assert library.collections.rename(by_slug["trips"], "harbour TRIPS").collections  # itself
    with pytest.raises(InputError, match="holds 1 capture"):
        library.collections.delete(by_slug["trips"])
    with pytest.raises(InputError, match="default collection stays"):
        library.collections.delete(by_slug["default"])
    library.collections.delete(by_slug["spare"])
    assert "spare" not in {c.slug for c in library.collections.all()}
