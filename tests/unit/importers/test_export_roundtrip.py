"""Export then import keeps each page the capture it was: the pages list's times pick the
records (a library holding several captures of one URL exports several records of it),
and its titles stand in where the records give none (a redirect, a PDF)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from archiver_app.export import Selection, export
from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.wacz import import_wacz_file
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter

DEEP = "https://site.example/sub/deep.html"
PDF = "https://site.example/report.pdf"
MOVED = "https://site.example/old"
EARLY = datetime(2024, 5, 6, 1, 10, 14, tzinfo=UTC)
LATE = datetime(2024, 5, 6, 1, 11, 22, tzinfo=UTC)

Page = tuple[str, datetime, str | None]


def _original(library: Library) -> dict[str, int]:
    """Two captures of DEEP (the later a revisit of the earlier), a PDF and a redirect,
    titled as the capture pipeline titles them; the snapshot ids by name."""
    one = ArchiveWriter(library, "imports/one.warc.gz")
    first = one.response(DEEP, "<title>Deep</title><p>deep words</p>", at=EARLY, page=True)
    one.commit()
    two = ArchiveWriter(library, "imports/two.warc.gz")
    two.revisit(DEEP, first, at=LATE, page=True)
    two.response(PDF, b"%PDF-1.4 not much of a report", at=LATE, mime="application/pdf", page=True)
    two.response(MOVED, b"", at=LATE, status=301, headers=[("Location", DEEP)], page=True)
    ids = two.commit()
    with library.write() as s:
        conn = s.connection()
        conn.execute(
            text("UPDATE records SET revisit_of_id = :o WHERE id = :r"),
            {"o": conn.scalar(text("SELECT MIN(id) FROM records")), "r": ids[0]},
        )
        for url, title in ((DEEP, "Deep"), (PDF, "Annual report"), (MOVED, "Old address")):
            conn.execute(
                text("UPDATE snapshots SET title = :t WHERE url = :u"), {"t": title, "u": url}
            )
        rows = conn.execute(text("SELECT id, url, captured_at FROM snapshots")).all()
    names = {"pdf": PDF, "moved": MOVED}
    out = {name: next(i for i, u, _ in rows if u == url) for name, url in names.items()}
    deep = sorted((str(at), i) for i, u, at in rows if u == DEEP)
    out["early"], out["late"] = deep[0][1], deep[1][1]
    return out


def _pages(lib: Library, ids: list[int] | None = None) -> list[Page]:
    with lib.engine.connect() as conn:
        rows = conn.execute(text("SELECT id, url, captured_at, title FROM snapshots")).all()
    return sorted(
        (url, datetime.fromisoformat(str(at)).replace(tzinfo=UTC), title)
        for i, url, at, title in rows
        if ids is None or i in ids
    )


def _import(tmp_path: Path, name: str, exported: Path, fmt: str) -> list[Page]:
    lib = Library.open(tmp_path / name, create=True)
    try:
        if fmt == "wacz":
            outcome = import_wacz_file(lib, exported)
        else:
            outcome = import_warc_file(lib, exported / "archive" / "data.warc.gz")
        assert outcome.state is OutcomeState.IMPORTED, outcome.reason
        return _pages(lib)
    finally:
        lib.close()


@pytest.mark.parametrize("fmt", ["wacz", "folder"])
@pytest.mark.parametrize("chosen", [("early", "late", "pdf", "moved"), ("late", "pdf", "moved")])
def test_export_then_import_keeps_each_pages_capture_and_title(
    library: Library, tmp_path: Path, fmt: str, chosen: tuple[str, ...]
) -> None:
    ids = _original(library)
    picked = [ids[name] for name in chosen]
    dest = tmp_path / ("out.wacz" if fmt == "wacz" else "out")
    export(library, Selection(snapshot_ids=tuple(picked)), dest, fmt=fmt)
    # exporting only the later capture of DEEP brings its revisit original along, an
    # earlier record of the same URL
    assert _import(tmp_path, "again", dest, fmt) == _pages(library, picked)
