"""Collections in the app: New Collection…, Move to Collection ▸ on the captures table, and
a collection with captures deleted after they move to the collection the user chooses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, QTimer
from PySide6.QtWidgets import QApplication, QInputDialog, QMenu, QMessageBox
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from archiver_app.gui import collection_actions
from archiver_app.gui.collection_actions import DeleteCollectionDialog
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.table_menu import table_menu
from archiver_app.layout.archivebox import register_archivebox
from archiver_app.library import Library
from archiver_app.store.models import Job
from archiver_app.watch.runner import add_watch
from tests.helpers.gui_fixtures import answer_next_box
from tests.helpers.snapshots import add_snapshot

#: set to a folder to keep screenshots of the dialog and the menu there
SHOTS = os.environ.get("ARCHIVER_SHOTS", "")


def _collections(window: MainWindow) -> list[str]:
    return [e.label for e in window.sidebar.entries() if e.kind == "collection"]


def _entry(window: MainWindow, label: str) -> object:
    return next(e for e in window.sidebar.entries() if e.kind == "collection" and e.label == label)


def _shot(widget: object, name: str) -> None:
    if SHOTS:
        widget.grab().save(str(Path(SHOTS) / name))  # type: ignore[attr-defined]


def _answer_boxes(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[list[str], list[tuple[str, str]]]:
    """The texts of the questions asked before a deletion (each answered with its action,
    Delete) and the (title, text) of the boxes that only tell."""
    asked: list[str] = []
    told: list[tuple[str, str]] = []

    class Yes:
        def exec(self) -> QMessageBox.StandardButton:
            return QMessageBox.StandardButton.Yes

    def question(_parent: object, _icon: object, _title: str, text: str, _action: str) -> Yes:
        asked.append(text)
        return Yes()

    monkeypatch.setattr(collection_actions, "question_box", question)
    monkeypatch.setattr(
        QMessageBox, "information", lambda _p, title, text: told.append((title, text))
    )
    return asked, told


def test_a_collection_with_captures_is_deleted_once_they_move_where_chosen(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    window = main_window
    a = add_snapshot(library, "https://a.example/", title="A", collection="trips")
    add_snapshot(library, "https://b.example/", title="B", collection="trips")
    add_snapshot(library, "https://c.example/", title="C", collection="research")
    library.ensure_collection()
    window.refresh_all()
    assert window.sidebar.select_key(f"collection:{_entry(window, 'Trips').value}")  # type: ignore[attr-defined]
    seen: list[DeleteCollectionDialog] = []

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, DeleteCollectionDialog):
            QTimer.singleShot(20, answer)
            return
        seen.append(dialog)
        _shot(dialog, "delete_collection.png")
        assert dialog.target.currentText() == "Default"  # the default collection first
        assert [dialog.target.itemText(i) for i in range(dialog.target.count())] == [
            "Default",
            "Research",
        ]
        dialog.delete_button.click()

    QTimer.singleShot(0, answer)
    window.sidebar_menu.delete_entry(_entry(window, "Trips"))  # type: ignore[arg-type]
    assert seen, "no dialog asked where the captures go"
    assert _label_text(seen[0], "Delete the collection <b>Trips</b>? It holds 2 captures")
    assert _collections(window) == ["Default", "Research"]
    detail = library.snapshots.detail(a)
    assert detail is not None and detail.collection == "Default"
    assert window.model.query.collection_id is None  # the table lists All captures again


def test_the_only_collection_moves_its_captures_into_a_new_default_one(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """With no other collection, the dialog's list was empty and Move and Delete raised a
    TypeError (int(None)). Now the default collection is offered, made as they move in."""
    window = main_window
    a = add_snapshot(library, "https://a.example/", title="A", collection="trips")
    window.refresh_all()
    assert _collections(window) == ["Trips"]
    seen: list[DeleteCollectionDialog] = []

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, DeleteCollectionDialog):
            QTimer.singleShot(20, answer)
            return
        seen.append(dialog)
        offered.extend(dialog.target.itemText(i) for i in range(dialog.target.count()))
        _shot(dialog, "delete_only_collection.png")
        dialog.delete_button.click()  # (an assertion failing here would leave it open)

    offered: list[str] = []
    QTimer.singleShot(0, answer)
    window.sidebar_menu.delete_entry(_entry(window, "Trips"))  # type: ignore[arg-type]
    assert seen, "no dialog asked where the captures go"
    assert offered == ["Default (new)"]
    assert _label_text(seen[0], "There is no other collection, so they move to a new one")
    assert _collections(window) == ["Default"]
    detail = library.snapshots.detail(a)
    assert detail is not None and detail.collection == "Default"
    said = window.statusBar().currentMessage()
    assert said == "Deleted the collection Trips; its 1 capture is in Default."


def test_deleting_a_collection_says_which_watches_and_jobs_go_along_before_and_after(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """Its watches and unfinished jobs moved into the chosen collection with its captures
    and nothing said so. Now the dialog names them and where they will save, following
    the choice, and the status bar says it after."""
    window = main_window
    add_snapshot(library, "https://a.example/", title="A", collection="trips")
    library.ensure_collection()
    research = library.ensure_collection("research")
    watch = add_watch(library, ["https://a.example/", "https://b.example/"], collection="trips")
    ids = {c.slug: c.id for c in library.collections.all()}
    with library.write() as s:
        for status in ("queued", "completed"):
            now = library.clock()
            s.add(Job(collection_id=ids["trips"], kind="crawl", name=status, status=status,
                      config={}, created_at=now, updated_at=now))  # fmt: skip
    with library.session() as s:
        queued = s.scalar(select(Job.id).where(Job.name == "queued"))
    window.refresh_all()
    said: list[str] = []

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, DeleteCollectionDialog):
            QTimer.singleShot(20, answer)
            return
        try:  # (a failure here must not leave the dialog open)
            said.append(dialog.along_label.text() if dialog.along_label.isVisible() else "")
            dialog.target.setCurrentIndex(dialog.target.findText("Research"))
            said.append(dialog.along_label.text())
            _shot(dialog, "delete_collection_along.png")
        finally:
            dialog.delete_button.click()

    QTimer.singleShot(0, answer)
    trips = _entry(window, "Trips")
    window.sidebar_menu.delete_entry(trips)  # type: ignore[arg-type]
    assert said == [
        f"Watch {watch} (of https://a.example/ and 1 other page) and job {queued} (queued) "
        "save into Trips: they go along with the captures and save into Default from then on.",
        f"Watch {watch} (of https://a.example/ and 1 other page) and job {queued} (queued) "
        "save into Trips: they go along with the captures and save into Research from then on.",
    ]
    assert window.statusBar().currentMessage() == (
        f"Deleted the collection Trips; its 1 capture is in Research, and watch {watch} and "
        f"job {queued} save there now."
    )
    with library.session() as s:
        assert s.scalar(select(Job.collection_id).where(Job.id == watch)) == research


def _label_text(dialog: DeleteCollectionDialog, words: str) -> bool:
    from PySide6.QtWidgets import QLabel

    return any(words in label.text() for label in dialog.findChildren(QLabel))


def test_an_empty_collection_asks_only_delete_and_the_default_one_is_refused_at_once(
    main_window: MainWindow, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = main_window
    add_snapshot(library, "https://a.example/", title="A")
    library.ensure_collection("spare")
    window.refresh_all()
    seen: list[QMessageBox] = []
    answer_next_box(lambda box: box.button(QMessageBox.StandardButton.Yes).click(), seen)
    window.sidebar_menu.delete_entry(_entry(window, "Spare"))  # type: ignore[arg-type]
    assert seen[0].text() == "Delete the collection Spare? It holds no captures."
    assert _collections(window) == ["Default"]
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda _p, _t, text: told.append(text))
    window.sidebar_menu.delete_entry(_entry(window, "Default"))  # type: ignore[arg-type]
    assert told and told[0].startswith("Default is the default collection")
    assert _collections(window) == ["Default"]


def test_new_collection_is_named_listed_and_selected(
    main_window: MainWindow, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = main_window
    library.ensure_collection()
    window.refresh_all()
    actions = window.sidebar_menu.collections
    file_menu = next(
        a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "File"
    )
    assert actions.new_action in file_menu.actions()  # type: ignore[union-attr]
    names = iter(["Harbour trips", "harbour TRIPS", "  "])
    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: (next(names), True))
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda _p, _t, text: told.append(text))
    actions.new_action.trigger()
    assert _collections(window) == ["Default", "Harbour trips"]
    current = window.sidebar.current_entry()
    assert current is not None and current.label == "Harbour trips"
    actions.new_action.trigger()
    actions.new_action.trigger()
    assert told == [
        "There is already a collection called 'Harbour trips'.",
        "A collection needs a name.",
    ]
    assert _collections(window) == ["Default", "Harbour trips"]
    # the sidebar's menu offers it on a collection and on blank space
    window.sidebar_menu._requested(window.sidebar.viewport().rect().bottomLeft())
    menu = window.sidebar_menu.menu
    assert menu is not None and [a.text() for a in menu.actions()] == ["New &Collection…"]
    menu.close()


def test_selected_captures_move_to_a_collection_from_the_table_menu(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    window = main_window
    a = add_snapshot(library, "https://a.example/", title="A", collection="trips")
    b = add_snapshot(library, "https://b.example/", title="B", collection="trips")
    library.ensure_collection()
    window.refresh_all()
    assert window.sidebar.select_key(f"collection:{_entry(window, 'Trips').value}")  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 2)
    row = next(r for r in range(2) if window.model.snapshot_id(r) == a)
    flags = QItemSelectionModel.SelectionFlag
    window.table.selectionModel().select(window.model.index(row, 0), flags.Select | flags.Rows)
    menu = table_menu(window)
    move = next(a.menu() for a in menu.actions() if a.menu() is not None and
                a.menu().objectName() == "move_to_collection")  # fmt: skip
    assert isinstance(move, QMenu)
    entries = {a.text(): a for a in move.actions() if a.text()}
    assert list(entries) == ["Default", "Trips", "&New Collection…"]
    assert not entries["Trips"].isEnabled()  # where they are already
    if SHOTS:
        menu.popup(window.table.viewport().mapToGlobal(window.table.visualRect(
            window.model.index(row, 0)).center()))  # fmt: skip
        move.popup(menu.pos() + menu.actionGeometry(menu.actions()[-2]).topRight())
        qtbot.waitExposed(move)
        _shot(menu, "table_menu.png")
        _shot(move, "move_submenu.png")
        move.close()
        menu.close()
    entries["Default"].trigger()
    detail = library.snapshots.detail(a)
    assert detail is not None and detail.collection == "Default"
    # the table listing Trips loses the capture moved out
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
    assert window.model.snapshot_id(0) == b


def test_deleting_a_collection_says_where_its_captures_went(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    window = main_window
    add_snapshot(library, "https://a.example/", title="A", collection="trips")
    library.ensure_collection()
    library.ensure_collection("spare")
    window.refresh_all()

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, DeleteCollectionDialog):
            QTimer.singleShot(20, answer)
            return
        dialog.delete_button.click()

    QTimer.singleShot(0, answer)
    window.sidebar_menu.delete_entry(_entry(window, "Trips"))  # type: ignore[arg-type]
    said = window.statusBar().currentMessage()
    assert said == "Deleted the collection Trips; its 1 capture is in Default."
    answer_next_box(lambda box: box.button(QMessageBox.StandardButton.Yes).click(), [])
    window.sidebar_menu.delete_entry(_entry(window, "Spare"))  # type: ignore[arg-type]
    assert window.statusBar().currentMessage() == "Deleted the collection Spare."


def test_an_empty_collection_says_how_to_fill_it_and_the_address_field_captures_into_it(
    qtbot: QtBot, main_window: MainWindow, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listing an empty collection said "No captures match this view or search.", and an
    address typed in the toolbar while it was listed was captured into Default, out of
    sight (Ctrl+N's dialog already chose the listed collection)."""
    window = main_window
    add_snapshot(library, "https://a.example/", title="A")
    library.ensure_collection("spare")
    window.refresh_all()
    assert window.sidebar.select_key(f"collection:{_entry(window, 'Spare').value}")  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: not window.model.loading)
    assert window.model.rowCount() == 0
    text = window.empty_table_text()
    assert text is not None and text.startswith("The collection Spare holds no captures yet.")
    assert "Move to Collection" in text
    window.search.set_search("zzzznothing")
    qtbot.waitUntil(lambda: not window.model.loading)
    assert window.empty_table_text() == "No captures match this view or search."
    requests: list[object] = []
    monkeypatch.setattr(window.capture, "run", requests.append)
    window.url_field.setText("https://b.example/")
    window.capture.from_field()
    assert [r.collection for r in requests] == ["spare"]  # type: ignore[attr-defined]
    assert window.sidebar.select_key("view:all")
    window.url_field.setText("https://c.example/")
    window.capture.from_field()
    assert [r.collection for r in requests] == ["spare", "default"]  # type: ignore[attr-defined]


def test_an_empty_collection_a_job_saved_into_is_deleted_and_one_a_watch_saves_into_stays(
    main_window: MainWindow, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Delete… > Delete on an empty collection a finished job had saved into did nothing
    and said nothing (a foreign key refused it in a broken transaction). One a watch saves
    into asked "Delete the collection Field Notes? It holds no captures." and only after
    Delete was clicked said the watch keeps it; now the first box says so, and has no
    Delete button."""
    window = main_window
    default = library.ensure_collection()
    temp = add_snapshot(library, "https://a.example/", title="A", collection="temp")
    library.snapshots.delete([temp])
    library.ensure_collection("field-notes", "Field Notes")
    ids = {c.slug: c.id for c in library.collections.all()}
    with library.write() as s:
        s.add(Job(collection_id=ids["temp"], kind="capture", name="j", status="completed",
                  config={}, created_at=library.clock(), updated_at=library.clock()))  # fmt: skip
    pages = ["https://example.org/", "https://example.org/b"]
    watch = add_watch(library, pages, collection="field-notes")
    window.refresh_all()
    asked, told = _answer_boxes(monkeypatch)
    for name in ("Temp", "Field Notes"):
        window.sidebar_menu.delete_entry(_entry(window, name))  # type: ignore[arg-type]
    assert asked == ["Delete the collection Temp? It holds no captures."]
    assert told == [
        (
            "Cannot Delete Collection",
            f"The collection Field Notes cannot be deleted while watch {watch} saves into it"
            " (the watch of https://example.org/ and 1 other page). To delete it, first stop"
            " the watch in View > Changes (select it, then Stop Watching…).",
        )
    ]
    assert _collections(window) == ["Default", "Field Notes"]
    with library.session() as s:
        assert set(s.scalars(select(Job.collection_id).where(Job.schedule.is_(None)))) == {default}


def test_an_empty_collection_a_folder_is_being_imported_into_says_so_before_any_delete(
    main_window: MainWindow, library: Library, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Delete… > Delete on it said "Collection 'Boxed' is still named by a job, a watch, an
    edition or an import; it stays"; now the first box names the folder and what to do."""
    window = main_window
    window.migrator.stop()  # the folder stays to be imported (the app would, when idle)
    library.ensure_collection()
    folder = tmp_path / "abox"
    (folder / "archive").mkdir(parents=True)
    register_archivebox(library, folder, collection="boxed")
    window.refresh_all()
    asked, told = _answer_boxes(monkeypatch)
    window.sidebar_menu.delete_entry(_entry(window, "Boxed"))  # type: ignore[arg-type]
    assert asked == []
    assert told == [
        (
            "Cannot Delete Collection",
            f"The collection Boxed cannot be deleted while the ArchiveBox folder {folder} is"
            " still being imported into it. To delete it, let that import finish first: the"
            " app imports it while idle (Upgrading folders in the status bar).",
        )
    ]
    assert _collections(window) == ["Boxed", "Default"]


def test_a_collection_with_captures_an_edition_is_of_says_so_before_any_move(
    main_window: MainWindow, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Delete… asked where its captures go, then after Move and Delete said "Collection
    'Trips' is still named by a job, a watch, an edition or an import; it stays"; now the
    first box names the edition, with no Delete button."""
    window = main_window
    add_snapshot(library, "https://a.example/", title="A", collection="trips")
    library.ensure_collection()
    library.editions.create("trips", "trips-2024", year=2024)
    window.refresh_all()
    asked, told = _answer_boxes(monkeypatch)
    dialogs: list[str] = []

    def close_any() -> None:  # a dialog asking where the captures go must not have opened
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, DeleteCollectionDialog):
            dialogs.append(dialog.windowTitle())
            dialog.reject()

    timer = QTimer(window)
    timer.timeout.connect(close_any)
    timer.start(20)
    window.sidebar_menu.delete_entry(_entry(window, "Trips"))  # type: ignore[arg-type]
    timer.stop()
    assert (dialogs, asked) == ([], [])
    assert told == [
        (
            "Cannot Delete Collection",
            "The collection Trips cannot be deleted while the edition trips-2024 is of it.",
        )
    ]
    assert _collections(window) == ["Default", "Trips"]


def test_a_name_another_process_took_meanwhile_is_refused_and_listed(
    main_window: MainWindow, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal left the sidebar without the other process's collection until
    View > Refresh."""
    window = main_window
    library.ensure_collection()
    window.refresh_all()
    library.ensure_collection("field-notes", "Field Notes")  # another machine, meanwhile
    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: ("Field Notes", True))
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda _p, _t, text: told.append(text))
    assert _collections(window) == ["Default"]
    window.sidebar_menu.collections.new_action.trigger()
    assert told == ["There is already a collection called 'Field Notes'."]
    assert _collections(window) == ["Default", "Field Notes"]
