"""The collections sidebar: All / Recent / Failed / Untagged, collections (with their
editions under each), tags, saved searches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QWidget

from archiver_app.api.editions import EditionSummary
from archiver_app.api.labels import CollectionView, TagView
from archiver_app.api.table import View

ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1

VIEW_LABELS = {
    View.ALL: "All captures",
    View.RECENT: "Recent",
    View.FAILED: "Failed",
    View.UNTAGGED: "Untagged",
}


@dataclass(frozen=True)
class SidebarEntry:
    """What a sidebar item selects. ``key`` is stable across runs (saved in QSettings)."""

    kind: str  # "view" | "collection" | "edition" (value: its name) | "tag" | "saved"
    value: Any
    label: str

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.value if self.kind != 'saved' else self.label}"


class Sidebar(QTreeWidget):
    """Emits :attr:`entry_selected` when the user picks an entry."""

    entry_selected = Signal(object)  # SidebarEntry

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self.setHeaderHidden(True)
        self.setRootIsDecorated(False)
        self.setIndentation(12)
        self.setUniformRowHeights(True)
        # Uniform rows take the first row's height, a group title in a smaller font: every
        # entry was cramped to it. One height for all, with room around the text.
        self.row_height = self.fontMetrics().height() + 8
        self._saved: list[dict[str, Any]] = []
        self.currentItemChanged.connect(self._changed)

    def populate(
        self,
        collections: list[CollectionView],
        tags: list[TagView],
        saved: list[dict[str, Any]],
        editions: Sequence[EditionSummary] = (),
    ) -> None:
        """Rebuild the entries, keeping the current selection when it still exists."""
        current = self.current_entry()
        self.blockSignals(True)
        self.clear()
        library = self._group("Library")
        for view, label in VIEW_LABELS.items():
            self._add(library, SidebarEntry("view", view.value, label))
        if collections:
            group = self._group("Collections")
            for c in collections:
                parent = self._add(group, SidebarEntry("collection", c.id, c.name))
                for e in (e for e in editions if e.collection == c.slug):
                    edition = self._add(parent, SidebarEntry("edition", e.name, e.name))
                    state = e.state.value.replace("_", " ")
                    state += ", flagged for review" if e.flagged else ""
                    edition.setToolTip(0, f"Edition {e.name}: {e.period_label}, {state}")
        if tags:
            group = self._group("Tags")
            for t in tags:
                self._add(group, SidebarEntry("tag", t.id, t.name))
        self._saved = list(saved)
        if saved:
            group = self._group("Saved searches")
            for item in saved:
                self._add(group, SidebarEntry("saved", dict(item), str(item.get("name", "?"))))
        self.expandAll()
        self.blockSignals(False)
        if not current:
            self.select_key("view:all", emit=False)
        elif not self.select_key(current.key, emit=False):
            # what the table listed is gone (deleted, merged, elsewhere too): it follows
            self.select_key("view:all", emit=True)
        elif current.kind == "saved" and (now := self.current_entry()) != current:
            self.entry_selected.emit(now)  # the listed saved search changed (a tag renamed)

    def _group(self, title: str) -> QTreeWidgetItem:
        item = QTreeWidgetItem(self, [title.upper()])
        item.setFlags(Qt.ItemFlag.ItemIsEnabled)
        font = item.font(0)
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 0.85)
        item.setFont(0, font)
        item.setForeground(0, self.palette().placeholderText())
        item.setSizeHint(0, QSize(0, self.row_height))
        return item

    def _add(self, parent: QTreeWidgetItem, entry: SidebarEntry) -> QTreeWidgetItem:
        item = QTreeWidgetItem(parent, [entry.label])
        item.setData(0, ENTRY_ROLE, entry)
        item.setToolTip(0, entry.label)
        item.setSizeHint(0, QSize(0, self.row_height))
        return item

    def _entry_items(self) -> list[tuple[QTreeWidgetItem, SidebarEntry]]:
        out = []
        pending = [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        while pending:  # depth first, in order: groups, their entries, editions under those
            group = pending.pop(0)
            children = [group.child(j) for j in range(group.childCount())] if group else []
            for item in children:
                entry = item.data(0, ENTRY_ROLE) if item is not None else None
                if item is not None and isinstance(entry, SidebarEntry):
                    out.append((item, entry))
                    if item.childCount():
                        pending.append(item)
        return out

    def entries(self) -> list[SidebarEntry]:
        return [entry for _item, entry in self._entry_items()]

    def has_tag(self, name: str) -> bool:
        """Is a tag of that name listed (tags are one per letter case)?"""
        folded = name.casefold()
        return any(e.kind == "tag" and e.label.casefold() == folded for e in self.entries())

    def current_entry(self) -> SidebarEntry | None:
        return self.entry_of(self.currentItem())

    @staticmethod
    def entry_of(item: QTreeWidgetItem | None) -> SidebarEntry | None:
        entry = item.data(0, ENTRY_ROLE) if item is not None else None
        return entry if isinstance(entry, SidebarEntry) else None

    def select_key(self, key: str, *, emit: bool = True) -> bool:
        for item, entry in self._entry_items():
            if entry.key == key:
                self.blockSignals(not emit)
                self.setCurrentItem(item)
                self.blockSignals(False)
                return True
        return False

    def _changed(self, current: QTreeWidgetItem | None, _previous: object) -> None:
        entry = current.data(0, ENTRY_ROLE) if current is not None else None
        if isinstance(entry, SidebarEntry):
            self.entry_selected.emit(entry)
