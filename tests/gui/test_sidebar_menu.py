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
    assert menu is not None and [a.text() for a in menu.actions()] == ["Rename…", "Delete…"]
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


def test_a_collection_with_captures_is_not_deleted_and_an_empty_one_is(
    qtbot: QtBot, main_window: MainWindow, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = main_window
    add_snapshot(library, "https://a.example/", title="A", collection="trips")
    library.ensure_collection("spare")
    window.refresh_all()
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda _p, _t, text: told.append(text))
    for label in ("Trips", "Spare"):
        answer_next_box(lambda box: box.button(QMessageBox.StandardButton.Yes).click(), [])
        window.sidebar_menu.delete_entry(_entry(window, "collection", label))  # type: ignore[arg-type]
    assert told == ["Collection 'Trips' holds 1 capture: delete them first."]
    assert [e.label for e in window.sidebar.entries() if e.kind == "collection"] == ["Trips"]
    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: ("Harbour trips", True))
    window.sidebar_menu.rename_entry(_entry(window, "collection", "Trips"))  # type: ignore[arg-type]
    assert [e.label for e in window.sidebar.entries() if e.kind == "collection"] == [
        "Harbour trips"
    ]
