"""Where a capture's browser ended, and how that changed between two captures.

A page that starts redirecting (it moved, or a login page took its place) is named as such
wherever two captures are compared: ``archiver diff``, ``watch changes``, ``watch run`` and
the Changes view all use :func:`redirect_note`'s words. Where the browser landed is kept
with each attempt (``page_attempts.final_url``); a capture imported from a WARC has none,
so nothing is said of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlalchemy import select

from archiver_app.library import Library
from archiver_app.store.models import PageAttempt, Snapshot


def elsewhere(url: str, final: str | None) -> str | None:
    """``final`` when the browser landed somewhere else than ``url``."""
    from archiver_app.urls import normalize_url

    if not final:
        return None
    return final if (normalize_url(final) or final) != (normalize_url(url) or url) else None


def landed(lib: Library, snapshot_ids: Iterable[int | None]) -> dict[int, str | None]:
    """For each of these captures whose landing is known (made here, not imported): the
    address its browser ended at when another than its own, else None."""
    ids = [sid for sid in set(snapshot_ids) if sid is not None]
    if not ids:
        return {}
    with lib.session() as s:
        rows = s.execute(
            select(PageAttempt.snapshot_id, PageAttempt.final_url, Snapshot.url)
            .join(Snapshot, Snapshot.id == PageAttempt.snapshot_id)
            .where(PageAttempt.snapshot_id.in_(ids))
        ).all()
    return {sid: elsewhere(url, final) for sid, final, url in rows if sid is not None}


def redirect_note(where: Mapping[int, str | None], old_id: int | None, new_id: int) -> str | None:
    """What the address's redirect does in capture ``new_id`` against ``old_id`` (``where``:
    :func:`landed` of both): "now redirects to X", "no longer redirects to Y", "now
    redirects to X, not Y", or "redirects to X" when nothing is known of the older one (a
    first capture, an import); None when it is as before or the newer one is not known."""
    if new_id not in where:
        return None
    new = where[new_id]
    if old_id is None or old_id not in where:
        return f"redirects to {new}" if new else None
    old = where[old_id]
    if old == new:
        return None
    if new is None:
        return f"no longer redirects to {old}"
    return f"now redirects to {new}" + (f", not {old}" if old else "")
