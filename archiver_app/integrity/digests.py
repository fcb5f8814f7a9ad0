"""Which archive files carry a capture-time digest.

A snapshot's WARC(s), screenshot, DOM, text and PDF are what it saw: their hash and size at
capture (or import) go into ``files.origin_sha256``/``origin_size`` and are never updated
by a later write. ``index.json`` (the sidecar) is left out: it describes the snapshot and
is rewritten legitimately (tags, titles, layout upgrades), so a change there means nothing.
"""

from __future__ import annotations

from archiver_app.store.models import FileKind, Origin

#: The kinds of file whose capture-time digest is recorded and checked.
CHECKED_KINDS = frozenset(
    {FileKind.WARC, FileKind.SCREENSHOT, FileKind.DOM, FileKind.TEXT, FileKind.PDF}
)


def capture_origin(kind: FileKind | str) -> Origin | None:
    """``Origin.CAPTURE`` for a kind whose digest a capture records, else None."""
    return Origin.CAPTURE if kind in CHECKED_KINDS else None
