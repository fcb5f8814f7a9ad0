"""The sidebar's right-click menu renames and deletes tags, collections and saved searches;
the table leaves a deleted entry for All captures."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QInputDialog, QMessageBox
from pytestqt.qtbot import QtBot

from archiver_app.gui.main_window import MainWindow
from archiver_app.library import Library
from tests.helpers.gui_fixtures import answer_next_box
from tests.helpers.snapshots import add_snapshot


def _entry(window: MainWindow, kind: str, label: str) -> object:
    return next(e for e in window.sidebar.entries() if e.kind == kind and e.label == label)


def test_a_tag_is_renamed_then_deleted_from_its_menu(
    qtbot: QtBot, main_window: MainWindow, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = main_window
    sid = add_snapshot(library, "https://a.example/", title="A", tags=("ferry",))
    window.refresh_all()
    tag = _entry(window, "tag", "ferry")
    item = next(i for i, e in window.sidebar._entry_items() if e == tag)
    window.sidebar_menu._requested(window.sidebar.visualItemRect(item).center())
    menu = window.sidebar_menu.menu
    assert menu is not None and [a.text() for a in menu.actions()] == ["&Rename…", "&Delete…"]
    menu.close()

    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: ("Ferries", True))
    window.sidebar_menu.rename_entry(tag)  # type: ignore[arg-type]
    assert [e.label for e in window.sidebar.entries() if e.kind == "tag"] == ["Ferries"]
    detail = library.snapshots.detail(sid)
    assert detail is not None and detail.tags == ["Ferries"]

    renamed = _entry(window, "tag", "Ferries")
    assert window.sidebar.select_key(renamed.key)  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: window.model.query.tag_id is not None)
    seen: list[QMessageBox] = []
    answer_next_box(lambda box: box.button(QMessageBox.StandardButton.Yes).click(), seen)
    window.sidebar_menu.delete_entry(renamed)  # type: ignore[arg-type]
    assert "comes off 1 capture; the captures stay" in seen[0].text()
    assert [e for e in window.sidebar.entries() if e.kind == "tag"] == []
    assert window.model.query.tag_id is None  # the table lists All captures again
    assert library.snapshots.detail(sid) is not None


def test_a_collection_is_renamed_and_an_empty_one_deleted(
    qtbot: QtBot, main_window: MainWindow, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(A collection with captures: tests/gui/test_collections_menu.py.)"""
    window = main_window
    add_snapshot(library, "https://a.example/", title="A", collection="trips")
    library.ensure_collection("spare")
    window.refresh_all()
    answer_next_box(lambda box: box.button(QMessageBox.StandardButton.Yes).click(), [])
    window.sidebar_menu.delete_entry(_entry(window, "collection", "Spare"))  # type: ignore[arg-type]
    assert [e.label for e in window.sidebar.entries() if e.kind == "collection"] == ["Trips"]
    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: ("Harbour trips", True))
    window.sidebar_menu.rename_entry(_entry(window, "collection", "Trips"))  # type: ignore[arg-type]
    assert [e.label for e in window.sidebar.entries() if e.kind == "collection"] == [
        "Harbour trips"
    ]


def test_a_tag_renamed_into_another_while_listed_lists_the_merged_tag(
    qtbot: QtBot, main_window: MainWindow, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Renaming the listed tag to the name of another merges them: the table lists the
    merged tag's captures, selected in the sidebar (it listed none, under All captures)."""
    window = main_window
    add_snapshot(library, "https://a.example/", title="A", tags=("secret",))
    add_snapshot(library, "https://b.example/", title="B", tags=("Members",))
    add_snapshot(library, "https://c.example/", title="C")
    window.refresh_all()
    secret = _entry(window, "tag", "secret")
    assert window.sidebar.select_key(secret.key)  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: window.model.query.tag_id is not None and not window.model.loading)
    assert window.model.rowCount() == 1

    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: ("members", True))
    window.sidebar_menu.rename_entry(secret)  # type: ignore[arg-type]
    merged = _entry(window, "tag", "Members")
    current = window.sidebar.current_entry()
    assert current is not None and current.key == merged.key  # type: ignore[attr-defined]
    assert window.model.query.tag_id == merged.value  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)


def test_a_listed_entry_gone_from_the_sidebar_gives_way_to_all_captures(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """A tag deleted elsewhere while the table lists it: the sidebar shows All captures and
    the table lists them (it went on filtering on the tag that is gone)."""
    window = main_window
    add_snapshot(library, "https://a.example/", title="A", tags=("gone",))
    add_snapshot(library, "https://b.example/", title="B")
    window.refresh_all()
    gone = _entry(window, "tag", "gone")
    assert window.sidebar.select_key(gone.key)  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: window.model.query.tag_id is not None and not window.model.loading)
    library.tags.delete(int(gone.value))  # type: ignore[attr-defined]
    window.reload_sidebar()
    current = window.sidebar.current_entry()
    assert current is not None and current.key == "view:all"
    assert window.model.query.tag_id is None
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)


def test_a_listed_saved_search_follows_its_tag_merged_into_another(
    qtbot: QtBot, main_window: MainWindow, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A saved search filtering on tag crawled, listed while crawled is renamed into Members:
    it lists the merged tag's captures, and is kept so (it listed nothing, and kept the
    name of a tag that was gone)."""
    from archiver_app.api.settings import SAVED_SEARCHES_KEY
    from archiver_app.api.table import Filters

    window = main_window
    add_snapshot(library, "https://a.example/", title="A", tags=("crawled",))
    add_snapshot(library, "https://b.example/", title="B", tags=("Members",))
    add_snapshot(library, "https://c.example/", title="C")
    window.filter_bar.set_filters(Filters(tag="crawled"))
    window.model.set_query(window.model.query.with_(filters=Filters(tag="crawled")))
    window.add_saved_search("Crawl")
    saved = _entry(window, "saved", "Crawl")
    assert window.sidebar.select_key(saved.key)  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)

    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: ("members", True))
    window.sidebar_menu.rename_entry(_entry(window, "tag", "crawled"))  # type: ignore[arg-type]
    current = window.sidebar.current_entry()
    assert current is not None and current.key == saved.key  # type: ignore[attr-defined]
    assert window.model.query.filters.tag == "Members"
    assert window.filter_bar.filters().tag == "Members"
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)
    (kept,) = library.settings.get(SAVED_SEARCHES_KEY)
    assert kept["filters"]["tag"] == "Members"


def test_a_saved_search_whose_tag_was_deleted_says_so(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """A saved search filtering on a tag deleted since lists nothing: the table says the tag
    is gone (it said only that nothing matched)."""
    from archiver_app.api.table import Filters

    window = main_window
    add_snapshot(library, "https://a.example/", title="A", tags=("crawled",))
    window.refresh_all()
    window.filter_bar.set_filters(Filters(tag="crawled"))
    window.model.set_query(window.model.query.with_(filters=Filters(tag="crawled")))
    window.add_saved_search("Crawl")
    tag = _entry(window, "tag", "crawled")
    answer_next_box(lambda box: box.button(QMessageBox.StandardButton.Yes).click(), [])
    window.sidebar_menu.delete_entry(tag)  # type: ignore[arg-type]
    assert window.sidebar.select_key(_entry(window, "saved", "Crawl").key)  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 0)
    assert window.empty_table_text() == (
        "No tag is named “crawled”. Clear the tag filter to list the rest."
    )
    window.filter_bar.set_filters(Filters(tag="CRAWLED"))  # any letter case of a listed tag
    add_snapshot(library, "https://b.example/", title="B", tags=("Crawled",))
    window.refresh_all()
    window.model.set_query(window.model.query.with_(filters=Filters(tag="CRAWLED")))
    qtbot.waitUntil(lambda: not window.model.loading)
    assert window.sidebar.has_tag("CRAWLED")


def test_a_search_saved_within_a_tag_or_a_collection_keeps_it(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """A search saved with tag gamma (or a collection) selected in the sidebar listed the
    matches of the whole library when opened: 3 captures, not the 1 it was saved with."""
    from archiver_app.api.table import Filters

    window = main_window
    tagged = add_snapshot(library, "https://a.example/", title="Zebra A", tags=("gamma",))
    add_snapshot(library, "https://b.example/", title="Zebra B")
    filed = add_snapshot(library, "https://c.example/", title="Zebra C", collection="field")
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 3)
    scopes = [e for e in window.sidebar.entries() if e.kind == "collection" and e.value != 1]
    for entry, expected in ((_entry(window, "tag", "gamma"), tagged), (scopes[0], filed)):
        assert window.sidebar.select_key(entry.key)  # type: ignore[attr-defined]
        window.filter_bar.set_filters(Filters())  # the tag filter the first one showed
        window.search.set_search("zebra")
        window.model.set_query(window.model.query.with_(search="zebra", filters=Filters()))
        qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
        name = f"Zebras in {entry.label}"  # type: ignore[attr-defined]
        window.add_saved_search(name)
        assert window.sidebar.select_key("view:all")
        window.model.set_query(window.model.query.with_(search=""))
        qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 3)
        assert window.sidebar.select_key(_entry(window, "saved", name).key)  # type: ignore[attr-defined]
        qtbot.waitUntil(lambda: not window.model.loading)
        assert [window.model.snapshot_id(r) for r in range(window.model.rowCount())] == [
            expected
        ], name
