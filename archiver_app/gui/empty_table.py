"""What the captures table says when it lists nothing: how to begin, or why this view is
empty (an empty collection, a search with no word, a deleted tag, nothing matching)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from archiver_app.api.table import Filters, View

if TYPE_CHECKING:
    from archiver_app.gui.main_window import MainWindow

EMPTY_LIBRARY_TEXT = (
    "Nothing saved yet.\n\n"
    "Paste a web address in the box above and press Capture (or Ctrl+N for a capture or a "
    "crawl).\n"
    "Drop WARC, WACZ or ARC files, or a folder of them, on this window, or choose File > "
    "Import Web Archives… (Ctrl+I).\n"
    "Coming from ArchiveBox? Choose File > Import ArchiveBox Folder…"
)

EMPTY_COLLECTION_TEXT = (
    "The collection {name} holds no captures yet.\n\n"
    "Paste a web address in the box above and press Capture to save it here (Ctrl+N "
    "captures into this collection too).\n"
    "To move captures here, right-click them in another view and choose Move to Collection."
)

NOTHING_MATCHES_TEXT = "No captures match this view or search."


def empty_table_text(window: MainWindow) -> str | None:
    """What ``window``'s captures table says when it has no rows (None while they load)."""
    if window.model.loading:
        return None
    q = window.model.query
    unfiltered = (
        q.view == View.ALL and q.tag_id is None and not q.search.strip() and q.filters == Filters()
    )
    if unfiltered and q.collection_id is None:
        return EMPTY_LIBRARY_TEXT
    if unfiltered:
        name = next(
            (c.name for c in window.library.collections.all() if c.id == q.collection_id), None
        )
        if name is not None:
            return EMPTY_COLLECTION_TEXT.format(name=name)
    if q.search.strip() and (problem := window.library.table.search_problem(q.search)):
        return problem[0].upper() + problem[1:] + "."
    if q.filters.tag and not window.sidebar.has_tag(q.filters.tag):  # deleted, mistyped
        return f"No tag is named “{q.filters.tag}”. Clear the tag filter to list the rest."
    return NOTHING_MATCHES_TEXT
