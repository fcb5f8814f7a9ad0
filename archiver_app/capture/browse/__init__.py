"""Capture while browsing: a visible browser in which every page the user visits is saved.

ArchiveWeb.page's model from the desktop app. The user browses in a headed Chromium
(optionally on one of the library's logged-in profiles); every page they open, scroll,
click or expand is recorded, and each page visited becomes a snapshot (WARC with every
response it received, screenshot, DOM and text as it was when they left it). The whole
session is one job of kind ``browse``.

- :mod:`.session`: the browser, its tabs, Stop and closing, the sync entry point;
- :mod:`.tab`: one tab's recorder, its page boundaries and snapshots;
- :mod:`.visit`: one page visited, and how it is saved as a snapshot;
- :mod:`.inpage`: the script inside each page that reports the page as it is left.
"""

from archiver_app.capture.browse.session import (
    BrowseOptions,
    BrowseReport,
    BrowseSession,
    StopReason,
    browse,
)
from archiver_app.capture.browse.visit import SavedPage, ViewsFrom

__all__ = [
    "BrowseOptions",
    "BrowseReport",
    "BrowseSession",
    "SavedPage",
    "StopReason",
    "ViewsFrom",
    "browse",
]
