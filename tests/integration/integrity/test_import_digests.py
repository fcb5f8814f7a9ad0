"""ArchiveBox data folders and orphan folders record each file's digest as it comes in
(``origin = import``): the first ``archiver verify`` finds them as imported, not "recorded
later", and a change made after the import is found as altered."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from sqlalchemy import delete, select

from archiver_app.importers.warcs import import_warc_file
from archiver_app.integrity import CHECKED_KINDS, IntegrityCode, verify_snapshots
from archiver_app.layout.archivebox import register_archivebox
from archiver_app.layout.migrator import run_migrator
from archiver_app.layout.update import update_library
from archiver_app.library import Library
from archiver_app.store.models import File, Origin, Record, Snapshot
from tests.helpers.legacy import AbxSnapshot, write_archivebox_snapshot
from tests.helpers.warcs import site, write_warc


def _checked(library: Library) -> list[File]:
    with library.session() as s:
        rows = list(s.scalars(select(File).where(File.kind.in_([str(k) for k in CHECKED_KINDS]))))
        s.expunge_all()
    return rows


def _imported_as_they_are(library: Library) -> list[File]:
    rows = _checked(library)
    assert rows
    for row in rows:
        data = (library.root / row.path).read_bytes()
        assert row.origin == Origin.IMPORT, row.path
        assert (row.origin_sha256, row.origin_size) == (hashlib.sha256(data).hexdigest(), len(data))
    return rows


def _verify_finds_them_and_a_later_change(library: Library, rows: list[File]) -> None:
    report = verify_snapshots(library)
    assert report.ok and report.verdicts == [], report.verdicts  # none "recorded later"
    warc = next(r for r in rows if r.kind == "warc")
    path = library.root / warc.path
    path.write_bytes(path.read_bytes() + b"\n")
    [verdict] = verify_snapshots(library).verdicts
    assert (verdict.code, verdict.path) == (IntegrityCode.ALTERED, warc.path)


def test_an_archivebox_import_records_digests(library: Library, archivebox_factory: Any) -> None:
    source, _ = archivebox_factory("0.8", count=2)
    register_archivebox(library, source)
    assert run_migrator(library, batch_size=3).failed == []
    rows = _imported_as_they_are(library)
    assert {r.kind for r in rows} >= {"warc", "screenshot", "pdf"}
    _verify_finds_them_and_a_later_change(library, rows)


def test_orphan_folders_record_digests(library: Library, tmp_path: Path) -> None:
    """An ArchiveBox folder dropped into archive/ (migrated to the current layout) and a
    folder of the current layout whose rows were lost (registered where it is)."""
    import_warc_file(library, write_warc(tmp_path / "in.warc.gz", site(1)), collection="c")
    with library.write() as s:  # the rows are lost; the folder stays
        s.execute(delete(Record))
        s.execute(delete(File))
        s.execute(delete(Snapshot))
    abx = AbxSnapshot("https://orphan.example/a", "1633333333.5", "Orphan page", "x", "word")
    write_archivebox_snapshot(library.root / "archive", abx, "0.8")
    report = update_library(library, with_orphans=True)
    assert report.orphans is not None and report.orphans.imported == 2
    rows = _imported_as_they_are(library)
    with library.session() as s:
        urls = set(
            s.scalars(select(Snapshot.url).where(Snapshot.id.in_({r.snapshot_id for r in rows})))
        )
    assert len(urls) == 2 and "https://orphan.example/a" in urls  # both orphans have digests
    _verify_finds_them_and_a_later_change(library, rows)
