"""The sidebar's right-click menu: rename or delete a tag, make, rename or delete a
collection (its captures moved to another first: gui/collection_actions.py), delete a saved
search. Each asks first where it cannot be undone."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtWidgets import QInputDialog, QMenu, QMessageBox

from archiver_app.api.changes import Changes
from archiver_app.api.settings import SAVED_SEARCHES_KEY
from archiver_app.errors import InputError
from archiver_app.gui.collection_actions import CollectionActions
from archiver_app.gui.errors import question_box
from archiver_app.gui.sidebar import SidebarEntry
from archiver_app.library import DEFAULT_COLLECTION
from archiver_app.units import counted, upper_first

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow


class SidebarMenu(QObject):
    """Right-click on a tag, a collection or a saved search. Threading: GUI thread only
    (each edit is a few rows)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.menu: QMenu | None = None
        self.collections = CollectionActions(window)  # New Collection…, Move to Collection
        sidebar = window.sidebar
        sidebar.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        sidebar.customContextMenuRequested.connect(self._requested)

    def _requested(self, pos: QPoint) -> None:
        item = self.window.sidebar.itemAt(pos)
        entry = self.window.sidebar.entry_of(item) if item is not None else None
        menu = QMenu(self.window.sidebar)
        if entry is not None and entry.kind in ("tag", "collection", "saved"):
            if entry.kind != "saved":
                menu.addAction("&Rename…", lambda: self.rename_entry(entry))
            menu.addAction("&Delete…", lambda: self.delete_entry(entry))
        if entry is None or entry.kind in ("collection", "edition"):  # or a group, or blank
            if menu.actions():
                menu.addSeparator()
            menu.addAction(self.collections.new_action)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.menu = menu
        menu.popup(self.window.sidebar.viewport().mapToGlobal(pos))

    def rename_entry(self, entry: SidebarEntry) -> None:
        kind = "tag" if entry.kind == "tag" else "collection"
        name, ok = QInputDialog.getText(
            self.window, f"Rename {kind.title()}", f"New name of the {kind} {entry.label}:",
            text=entry.label,
        )  # fmt: skip
        if ok and name.strip() and name.strip() != entry.label:
            labels = self.window.library.tags if kind == "tag" else self.window.library.collections
            listing = self.window.sidebar.current_entry()
            self._apply(lambda: labels.rename(int(entry.value), name))
            if listing is not None and listing.key == entry.key:
                self._follow_merge(entry, name.strip())

    def _follow_merge(self, entry: SidebarEntry, name: str) -> None:
        """The listed tag, renamed to another tag's name, was merged into it: list that."""
        sidebar = self.window.sidebar
        if entry.kind != "tag" or sidebar.select_key(entry.key, emit=False):
            return  # renamed in place
        merged = [e for e in sidebar.entries() if e.kind == "tag"]
        found = next((e for e in merged if e.label.casefold() == name.casefold()), None)
        if found is not None:
            sidebar.select_key(found.key)  # emits: the table lists the merged tag

    def delete_entry(self, entry: SidebarEntry) -> None:
        lib = self.window.library
        if entry.kind == "tag":
            n = lib.tags.counts().get(int(entry.value), 0)
            text = f"Delete the tag {entry.label}? It comes off {counted(n, 'capture')}; the "
            text += "captures stay."
        elif entry.kind == "collection":
            self._delete_collection(entry)
            return
        else:
            text = f"Delete the saved search {entry.label}?"
        box = question_box(self.window, QMessageBox.Icon.Warning, "Delete", text, "Delete")
        if box.exec() != QMessageBox.StandardButton.Yes:
            return
        if entry.kind == "tag":
            self._apply(lambda: lib.tags.delete(int(entry.value)), leave=entry)
        else:
            saved = [s for s in lib.settings.get(SAVED_SEARCHES_KEY, []) or []
                     if s.get("name") != entry.label]  # fmt: skip
            self._apply(lambda: lib.settings.put(SAVED_SEARCHES_KEY, saved), leave=entry)

    def _delete_collection(self, entry: SidebarEntry) -> None:
        """The default collection is refused at once; another asks where its captures go."""
        lib = self.window.library
        coll = next((c for c in lib.collections.all() if c.id == int(entry.value)), None)
        if coll is None:
            self.window.reload_sidebar()  # gone meanwhile
            return
        if coll.slug == DEFAULT_COLLECTION:
            text = f"{coll.name} is the default collection: captures go there when no other "
            text += "is chosen, so it stays. Its captures can be moved to another collection "
            text += "(right-click them in the table: Move to Collection)."
            QMessageBox.information(self.window, "Not deleted", text)
            return
        answer = self.collections.delete_collection(coll)
        if answer is None:
            return
        into = answer.into  # None: it was empty
        move_to = into.collection_id if into is not None else None
        to_default = into is not None and into.collection_id is None  # made as they move
        changes = self._apply(
            lambda: lib.collections.delete(coll.id, move_to=move_to, to_default=to_default),
            entry,
        )
        if changes is not None:
            said = answer.done_text(coll.name, len(changes.snapshot_ids))
            self.window.statusBar().showMessage(said, 8000)

    def _apply(
        self, edit: Callable[[], Changes], leave: SidebarEntry | None = None
    ) -> Changes | None:
        """Run ``edit`` (a call returning :class:`Changes`); show its refusal plainly (None).
        A deleted entry the table was listing gives way to All captures."""
        window = self.window
        try:
            changes = edit()
        except InputError as exc:
            QMessageBox.information(window, "Not changed", upper_first(str(exc)) + ".")
            return None
        listing = window.sidebar.current_entry()
        window.apply_changes(changes)
        if leave is not None and listing is not None and listing.key == leave.key:
            window.sidebar.select_key("view:all", emit=False)  # maybe in front already
            if (everything := window.sidebar.current_entry()) is not None:
                window.sidebar.entry_selected.emit(everything)
        elif listing is not None:
            window.sidebar.select_key(listing.key, emit=False)
        return changes
