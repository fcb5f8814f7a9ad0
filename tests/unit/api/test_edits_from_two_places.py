"""One capture's notes and tags edited from two places at once (two machines on a shared
library, two windows, the app and a terminal): the place whose view is stale never
undoes the other's edit without a word."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from archiver_app.api.snapshots import KEPT_BOTH_MARK, NotesChangedElsewhere, both_notes
from archiver_app.library import Library
from archiver_app.search import Query, search
from tests.helpers.snapshots import add_snapshot


@pytest.fixture
def machine_b(any_library: Library) -> Iterator[Library]:
    """The same library opened again, as by the second machine (its own engine)."""
    other = Library.open(any_library.root)
    try:
        yield other
    finally:
        other.close()


def _notes(lib: Library, sid: int) -> str:
    detail = lib.snapshots.detail(sid)
    assert detail is not None
    return detail.notes


def _tags(lib: Library, sid: int) -> list[str]:
    detail = lib.snapshots.detail(sid)
    assert detail is not None
    return detail.tags


def test_a_stale_note_is_refused_with_the_stored_one(
    any_library: Library, machine_b: Library
) -> None:
    """B saved over A's newer note from the text it had loaded: A's edit was gone and
    nobody was told."""
    a, b = any_library, machine_b
    sid = add_snapshot(a, "https://a.example/report", title="Report")
    a.snapshots.set_notes(sid, "Note from machine A about page 3")
    loaded_a, loaded_b = _notes(a, sid), _notes(b, sid)  # both open the capture
    a.snapshots.set_notes(sid, "A second edit, important", expected=loaded_a)
    with pytest.raises(NotesChangedElsewhere) as refused:
        b.snapshots.set_notes(sid, loaded_b + " + B addition", expected=loaded_b)
    assert refused.value.stored == "A second edit, important"
    assert refused.value.mine == "Note from machine A about page 3 + B addition"
    assert refused.value.snapshot_id == sid
    assert "changed elsewhere" in refused.value.message
    assert _notes(a, sid) == _notes(b, sid) == "A second edit, important"  # nothing written

    # B keeps both: saved against the note it was just shown
    kept = both_notes(refused.value.stored, refused.value.mine)
    b.snapshots.set_notes(sid, kept, expected=refused.value.stored)
    assert _notes(a, sid) == (
        f"A second edit, important\n\n{KEPT_BOTH_MARK}\n"
        "Note from machine A about page 3 + B addition"
    )
    assert [h.snapshot_id for h in search(a, Query("important addition"))] == [sid]


def test_a_note_saved_from_the_stored_text_is_written(
    any_library: Library, machine_b: Library
) -> None:
    a, b = any_library, machine_b
    sid = add_snapshot(a, "https://a.example/report", title="Report")
    b.snapshots.set_notes(sid, "first", expected="")
    a.snapshots.set_notes(sid, "second", expected="first")
    assert _notes(b, sid) == "second"
    b.snapshots.set_notes(sid, "second", expected="first")  # the same text: no conflict
    b.snapshots.set_notes(sid, "overwritten", expected=None)  # no view to be stale
    assert _notes(a, sid) == "overwritten"


def test_both_notes_keeps_each_text_once() -> None:
    assert both_notes("", "mine") == "mine"
    assert both_notes("theirs", "") == "theirs"
    assert both_notes("same", "same") == "same"
    assert both_notes("theirs\n", "mine") == f"theirs\n\n{KEPT_BOTH_MARK}\nmine"


def test_a_stale_tag_edit_keeps_the_other_machines_tags(
    any_library: Library, machine_b: Library
) -> None:
    """B added a tag from its stale list: A's tag, added meanwhile, was removed."""
    a, b = any_library, machine_b
    sid = add_snapshot(a, "https://a.example/report", title="Report", tags=("fromA", "sharedtag"))
    assert _tags(b, sid) == ["fromA", "sharedtag"]  # what B's pane shows from now on
    a.tags.change([sid], add=["tagA2"])
    changes = b.tags.change([sid], add=["tagB"])
    assert changes.tags and changes.snapshot_ids == {sid}
    assert _tags(a, sid) == ["fromA", "sharedtag", "tagA2", "tagB"]
    b.tags.change([sid], remove=["SHAREDTAG"], add=["tagb", "more"])  # any case
    assert _tags(a, sid) == ["fromA", "more", "tagA2", "tagB"]
    assert [h.snapshot_id for h in search(a, Query("tagA2"))] == [sid]  # indexed
    assert search(a, Query("sharedtag")) == []


def test_a_tag_change_skips_a_capture_deleted_meanwhile(any_library: Library) -> None:
    lib = any_library
    gone = add_snapshot(lib, "https://a.example/gone")
    kept = add_snapshot(lib, "https://a.example/kept")
    lib.snapshots.delete([gone])
    lib.tags.change([gone, kept], add=["river"])
    assert _tags(lib, kept) == ["river"]
