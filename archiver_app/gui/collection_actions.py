"""Collections made, emptied and deleted, and captures moved between them, in the app.

New Collection… (File menu and the sidebar's menu) asks a name; the captures table's
Move to Collection ▸ lists the collections; deleting a collection that holds captures asks
where they go (the default collection first; made as they move in when the library has no
other collection), naming the watches and jobs that go along to save there, and then
deletes it, and an empty one asks only "Delete?". What keeps a collection (for an empty
one a watch or a job saving into it; for one holding captures a job at work now; for
either an import saving into it or an edition of it) is said at once, with no Delete
button. Every edit is a call of ``lib.collections`` whose :class:`Changes` the window
applies. Threading: GUI thread only (each edit is a few rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QInputDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from archiver_app.api.collection_moves import KeptBy, KeptCode, SavesInto
from archiver_app.api.labels import CollectionView
from archiver_app.errors import InputError
from archiver_app.gui.errors import question_box
from archiver_app.gui.fitting import as_typed
from archiver_app.gui.window_menus import add_after_export
from archiver_app.library import DEFAULT_COLLECTION
from archiver_app.units import counted, upper_first
from archiver_app.urls import display_url

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow


@dataclass(frozen=True)
class Destination:
    """Where a deleted collection's captures go: collection ``collection_id``, called
    ``name``; ``collection_id`` None: the default collection, made as they move in (the
    library has no other collection)."""

    name: str
    collection_id: int | None


@dataclass(frozen=True)
class Deletion:
    """The user's yes to deleting a collection: where its captures go (None: it holds
    none), and the watches and jobs that go along with them, as the dialog said."""

    into: Destination | None
    along: tuple[SavesInto, ...] = ()

    def done_text(self, name: str, moved: int) -> str:
        """The status bar's line once the collection ``name`` is deleted, ``moved``
        captures moved."""
        said = f"Deleted the collection {name}"
        if self.into is not None:
            said += f"; its {counted(moved, 'capture')} {'is' if moved == 1 else 'are'} in "
            said += self.into.name
            if self.along:
                one = len(self.along) == 1
                said += f", and {along_text(self.along)} {'saves' if one else 'save'} there now"
        return said + "."


#: The one place left for a collection's captures when the library has no other.
NEW_DEFAULT = Destination(DEFAULT_COLLECTION.title(), None)


class DeleteCollectionDialog(QDialog):
    """ "Delete the collection X? It holds N captures": where they go (another collection,
    the default one chosen first; the default one, made now, when there is no other), then
    *Move and Delete* or *Cancel*."""

    def __init__(
        self,
        parent: QWidget,
        doomed: CollectionView,
        held: int,
        others: list[CollectionView],
        default: CollectionView | None,
        *,
        along: tuple[SavesInto, ...] = (),
    ) -> None:
        super().__init__(parent)
        self.setObjectName("delete_collection")
        self.setWindowTitle("Delete Collection")
        layout = QVBoxLayout(self)
        text = QLabel(
            f"Delete the collection <b>{_html(doomed.name)}</b>? It holds "
            f"{counted(held, 'capture')}: they move to the collection chosen below, "
            "then the collection is deleted. Their files stay where they are.",
            self,
        )
        text.setWordWrap(True)
        text.setMinimumWidth(360)
        layout.addWidget(text)
        self.destinations = [Destination(c.name, c.id) for c in others] or [NEW_DEFAULT]
        if not others:
            note = QLabel(
                f"There is no other collection, so they move to a new one, {NEW_DEFAULT.name}"
                ", where captures go when no other collection is chosen.",
                self,
            )
            note.setObjectName("no_other_collection")
            note.setWordWrap(True)
            layout.addWidget(note)
        form = QFormLayout()
        self.target = QComboBox(self)
        self.target.setObjectName("move_to")
        for d in self.destinations:
            self.target.addItem(d.name if d.collection_id is not None else f"{d.name} (new)")
        if default is not None:
            ids = [d.collection_id for d in self.destinations]
            self.target.setCurrentIndex(ids.index(default.id) if default.id in ids else 0)
        form.addRow(f"Move the {'capture' if held == 1 else 'captures'} to", self.target)
        layout.addLayout(form)
        self.along = along
        self.along_label = QLabel(self)  # the watches and jobs that go along, if any
        self.along_label.setObjectName("going_along")
        self.along_label.setWordWrap(True)
        self.along_label.setVisible(bool(along))
        layout.addWidget(self.along_label)
        self.target.currentIndexChanged.connect(lambda _i: self._say_along(doomed.name))
        self._say_along(doomed.name)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.delete_button = buttons.addButton(
            "Move and Delete", QDialogButtonBox.ButtonRole.AcceptRole
        )
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def chosen(self) -> Destination | None:
        index = self.target.currentIndex()
        return self.destinations[index] if 0 <= index < len(self.destinations) else None

    def _say_along(self, doomed: str) -> None:
        """Name the watches and jobs that go along with the captures, and where to."""
        if not self.along or (into := self.chosen()) is None:
            return
        one = len(self.along) == 1
        self.along_label.setText(
            f"{upper_first(along_text(self.along, pages=True))} {'saves' if one else 'save'} "
            f"into {doomed}: {'it goes' if one else 'they go'} along with the captures and "
            f"{'saves' if one else 'save'} into {into.name} from then on."
        )


def along_text(along: tuple[SavesInto, ...], *, pages: bool = False) -> str:
    """ "watch 3 and job 7": the watches and jobs ``along``, with each watch's first page
    and each job's status when ``pages``; past four, the first three and how many more."""
    named: list[str] = []
    for a in along:
        if not a.watch:
            named.append(f"job {a.job_id}" + (f" ({a.status})" if pages else ""))
            continue
        of = ""
        if pages and a.pages:
            of = display_url(a.pages[0])
            if len(a.pages) > 1:
                of += f" and {counted(len(a.pages) - 1, 'other page')}"
            of = f" (of {of})"
        named.append(f"watch {a.job_id}{of}")
    if len(named) > 4:
        named = [*named[:3], f"{len(named) - 3} more"]
    return ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else named[0]


def kept_text(kept: KeptBy) -> str:
    """Why an empty collection cannot be deleted, and what to do first, as the app says it."""
    said = f"The collection {kept.collection} cannot be deleted while"
    if kept.code is KeptCode.WATCH:
        pages = kept.pages[0] if kept.pages else ""
        if len(kept.pages) > 1:
            pages += f" and {counted(len(kept.pages) - 1, 'other page')}"
        of = f" (the watch of {pages})" if pages else ""
        return (
            f"{said} watch {kept.job_id} saves into it{of}. To delete it, first stop the "
            "watch in View > Changes (select it, then Stop Watching…)."
        )
    if kept.code is KeptCode.JOB:
        return (
            f"{said} job {kept.job_id} ({kept.status}) saves into it. To delete it, let the "
            "job finish or cancel it in the Jobs panel first."
        )
    if kept.code is KeptCode.IMPORT:
        return (
            f"{said} the ArchiveBox folder {kept.folder} is still being imported into it. "
            "To delete it, let that import finish first: the app imports it while idle "
            "(Upgrading folders in the status bar)."
        )
    return f"{said} the edition {kept.edition} is of it."


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class CollectionActions:
    """The window's collection edits (see the module docstring)."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.dialog: DeleteCollectionDialog | None = None
        self.new_action = QAction("New &Collection…", window)
        self.new_action.setObjectName("new_collection")
        self.new_action.setToolTip("An empty collection, to move captures into or capture into")
        self.new_action.triggered.connect(self.new_collection)
        add_after_export(window, self.new_action)  # File > New Collection…

    def new_collection(self) -> None:
        """Ask a name; make the collection and list it (refusals said plainly)."""
        if (view := self._create()) is not None:
            self.window.sidebar.select_key(f"collection:{view.id}")

    def _create(self) -> CollectionView | None:
        """A new collection of the name asked for (None: cancelled, or refused and said)."""
        window = self.window
        name, ok = QInputDialog.getText(window, "New Collection", "Name of the new collection:")
        if not ok:
            return None
        try:
            view, changes = window.library.collections.create(name)
        except InputError as exc:
            QMessageBox.information(window, "No collection made", upper_first(str(exc)) + ".")
            window.reload_sidebar()  # the clash may be one another process made meanwhile
            return None
        window.apply_changes(changes)
        return view

    def delete_collection(self, coll: CollectionView) -> Deletion | None:
        """Ask whether to delete ``coll`` and where its captures go (None: not to delete
        it). The caller deletes it and applies the changes."""
        lib, window = self.window.library, self.window
        held = lib.collections.counts().get(coll.id, 0)
        if (kept := lib.collections.kept_by(coll.id, with_captures=held > 0)) is not None:
            QMessageBox.information(window, "Cannot Delete Collection", kept_text(kept))
            return None  # no Delete to click
        if held == 0:
            text = f"Delete the collection {coll.name}? It holds no captures."
            box = question_box(window, QMessageBox.Icon.Warning, "Delete", text, "Delete")
            return Deletion(None) if box.exec() == QMessageBox.StandardButton.Yes else None
        others = [c for c in lib.collections.all() if c.id != coll.id]
        along = tuple(lib.collections.saving_into(coll.id))
        self.dialog = DeleteCollectionDialog(
            window, coll, held, others, lib.collections.default(), along=along
        )
        answer = self.dialog.exec()
        into = self.dialog.chosen() if answer == QDialog.DialogCode.Accepted else None
        self.dialog = None
        return Deletion(into, along) if into is not None else None

    def move_menu(self, parent: QWidget) -> QMenu:
        """Move to Collection ▸: every collection; the one all the selection is in, off."""
        window = self.window
        menu = QMenu("&Move to Collection", parent)
        menu.setObjectName("move_to_collection")
        ids = window.selected_ids()
        menu.setEnabled(bool(ids))
        shared = window.library.snapshots.shared_collection(ids) if ids else None
        for c in window.library.collections.all():
            action = menu.addAction(as_typed(c.name), partial(self.move, ids, c.id))
            action.setEnabled(c.slug != shared)
        menu.addSeparator()
        menu.addAction("&New Collection…", lambda: self.move_to_new(ids))
        return menu

    def move(self, ids: list[int], collection_id: int) -> None:
        window = self.window
        try:
            changes = window.library.collections.move(ids, collection_id)
        except InputError as exc:
            QMessageBox.information(window, "Not moved", upper_first(str(exc)) + ".")
            return
        window.apply_changes(changes)
        name = next((c.name for c in window.library.collections.all() if c.id == collection_id), "")
        n = len(changes.snapshot_ids)
        window.statusBar().showMessage(f"Moved {counted(n, 'capture')} to {name}.", 4000)

    def move_to_new(self, ids: list[int]) -> None:
        """A new collection, named now, and the captures ``ids`` moved into it."""
        if (view := self._create()) is not None:
            self.move(ids, view.id)
