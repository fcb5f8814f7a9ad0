"""A capture's notes are searched with its text and tags, on both databases, and stay
findable through tag edits and a rebuilt index."""

from __future__ import annotations

from archiver_app.library import Library
from archiver_app.search import Query, search
from archiver_app.search.reindex import rebuild_index
from tests.helpers.snapshots import add_snapshot


def _found(lib: Library, text: str) -> list[int]:
    return [h.snapshot_id for h in search(lib, Query(text))]


def test_notes_are_found_by_search(any_library: Library) -> None:
    lib = any_library
    sid = add_snapshot(lib, "https://a.example/cranes", title="Cranes", body="blue paint")
    other = add_snapshot(lib, "https://b.example/", title="Other", body="nothing here")
    assert _found(lib, "harbourmaster") == []
    lib.snapshots.set_notes(sid, "Checked with the harbourmaster in May.")
    assert _found(lib, "harbourmaster") == [sid]
    assert _found(lib, "harbourm") == [sid]  # as you type: the last word is a prefix
    (hit,) = search(lib, Query("harbourmaster"))  # the snippet shows the note, marked
    assert hit.snippet_marked() == "Checked with the [harbourmaster] in May."
    assert lib.table.snippets([sid], "harbourmaster") == {
        sid: "Checked with the <b>harbourmaster</b> in May."
    }  # the captures table's Match column
    lib.tags.set([sid, other], ["port"])  # a tag edit keeps the notes indexed
    assert _found(lib, "harbourmaster") == [sid] and _found(lib, "port") == [other, sid]
    rebuild_index(lib)
    assert _found(lib, "harbourmaster") == [sid]
    lib.snapshots.set_notes(sid, "")
    assert _found(lib, "harbourmaster") == [] and _found(lib, "port") == [other, sid]


def test_two_saves_of_one_note_at_once_do_not_clash(any_library: Library) -> None:
    """The same note saved at once from two windows (or machines): on PostgreSQL both
    re-indexed the capture and one failed on snapshot_fts's key (UniqueViolation)."""
    import threading

    lib = any_library
    sid = add_snapshot(lib, "https://a.example/cranes", title="Cranes", body="blue paint")
    other = Library.open(lib.root)  # the second window's
    start, failed = threading.Barrier(2), []

    def save(library: Library) -> None:
        start.wait()
        try:
            for _ in range(40):
                library.snapshots.set_notes(sid, "ask the harbourmaster")
        except Exception as exc:
            failed.append(exc)

    try:
        threads = [threading.Thread(target=save, args=(x,)) for x in (lib, other)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        other.close()
    assert failed == []
    assert _found(lib, "harbourmaster") == [sid]
