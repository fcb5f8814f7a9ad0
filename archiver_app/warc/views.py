"""What a capture kept of the page it showed: ``resource`` records beside the page's own.

A capture writes its screenshot, its rendered DOM and its text into its WARC as
``urn:view:<page URL>``, ``urn:dom:<page URL>`` and ``urn:text:<page URL>`` (UTF-8 text:
what the browser showed, text loaded by scripts and a PDF's text layer included), after the
page's records (:func:`archiver_app.capture.persist.write_views`). Browsertrix writes
``urn:text:`` records the same way. They are read back here by name: replay and compare
find a capture's own (:func:`archiver_app.replay.index.view_record`), and an import gives
each page the text recorded for it (:mod:`archiver_app.warc.batches`). An imported capture
has no screenshot file: its ``urn:view:`` record is its screenshot
(:func:`archiver_app.compare.snapshots.screenshot`).
"""

from __future__ import annotations

#: The page text a capture recorded.
TEXT = "text"
#: The screenshot a capture took (PNG).
VIEW = "view"


def view_url(view: str, page_url: str) -> str:
    """The address of the ``view`` record (``view``, ``dom``, ``text``) of ``page_url``."""
    return f"urn:{view}:{page_url}"


def view_prefix(view: str) -> str:
    """How the address of every ``view`` record starts."""
    return f"urn:{view}:"


def viewed_page(url: str, view: str) -> str | None:
    """The page address a ``view`` record's address names, or None when ``url`` is not the
    address of a ``view`` record."""
    prefix = view_prefix(view)
    return url[len(prefix) :] if url.startswith(prefix) else None


def view_text(data: bytes) -> str:
    """A text record's payload as text (UTF-8, a bad byte replaced, never an error)."""
    return data.decode("utf-8", errors="replace")


__all__ = ["TEXT", "VIEW", "view_prefix", "view_text", "view_url", "viewed_page"]
