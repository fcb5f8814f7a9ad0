"""An accepted edition to test releases, citations and verification on: collection "c",
edition "c-2024" of two imported pages (one WARC file)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.store.models import File, FileKind
from tests.helpers.warcs import site, write_warc


def accepted_edition(library: Library, tmp_path: Path) -> Path:
    """Make edition c-2024 of two imported pages and accept it; the path of their WARC."""
    import_warc_file(library, write_warc(tmp_path / "site.warc.gz", site(2)), collection="c")
    pages = "".join(f"https://example.org/page{i}\n" for i in range(2))
    library.editions.create("c", "c-2024", year=2024, targets_text=pages)
    assert not library.editions.accept("c-2024").refused
    with library.session() as s:
        return library.abspath(s.scalars(select(File.path).where(File.kind == FileKind.WARC)).one())
