"""Indexing an imported WARC: records, page snapshots, text, revisits, batching."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from archiver_app.importers.warcs import import_warc_file
from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.library import Library
from archiver_app.search import Query, search
from archiver_app.tasks import ProgressUpdate
from archiver_app.warc.htmltext import extract_html
from archiver_app.warc.indexer import IndexTarget, WarcIndexer
from archiver_app.warc.reader import read_record_at
from archiver_app.warc.scan import scan_records
from tests.helpers.warcs import Resp, html_page, site, write_warc


def _rows(lib: Library, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(lib.db_path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_records_pages_and_text(library: Library, tmp_path: Path) -> None:
    src = write_warc(tmp_path / "site.warc.gz", site(3), with_requests=True)
    outcome = import_warc_file(library, src)
    assert (outcome.records, outcome.pages) == (12, 3)
    recs = _rows(
        library,
        "SELECT url_key, ts, url, record_type, status, mime, offset, length "
        "FROM records ORDER BY id",
    )
    assert [(r[2], r[6], r[7]) for r in recs] == [
        (r.url, r.offset, r.length) for r in scan_records(src)
    ]
    assert recs[0][:6] == (
        "org,example)/page0",
        "20240301100000000",
        "https://example.org/page0",
        "response",
        200,
        "text/html",
    )
    snaps = _rows(
        library,
        "SELECT url, title, language, capture_fidelity, fs_version, folder, warc_file, "
        "warc_offset, snippet FROM snapshots ORDER BY id",
    )
    assert [s[0] for s in snaps] == [f"https://example.org/page{i}" for i in range(3)]
    url, title, lang, fidelity, fs_version, folder, warc_file, offset, snippet = snaps[1]
    assert title == "Page 1 of example.org" and lang == "en"
    assert (fidelity, fs_version) == ("imported", CURRENT_FS_VERSION)
    assert str(folder).startswith("collections/default/2024/03/") and str(warc_file).startswith(
        str(folder)
    )
    assert "scriptword" not in str(snippet) and "color:red" not in str(snippet)
    # the stored location reads back the page itself
    stored = read_record_at(library.abspath(str(warc_file)), int(str(offset)))
    assert stored.uri == url and b"Page 1" in stored.payload
    # text is searchable, scripts are not
    assert [h.url for h in search(library, Query("word1 museum"))] == ["https://example.org/page1"]
    assert search(library, Query("scriptword")) == []
    # subresources and requests belong to their page's snapshot
    owners = _rows(
        library, "SELECT r.url, s.url FROM records r JOIN snapshots s ON s.id = r.snapshot_id"
    )
    assert ("https://example.org/img2.png", "https://example.org/page2") in owners


def test_revisit_resolves_to_original(library: Library, tmp_path: Path) -> None:
    pages = site(2)
    src = write_warc(
        tmp_path / "dedup.warc.gz", pages, revisit_of={"https://example.org/page0": pages[0]}
    )
    outcome = import_warc_file(library, src)
    assert outcome.pages == 3
    rows = _rows(
        library,
        "SELECT r.record_type, o.record_type, o.url FROM records r "
        "JOIN records o ON o.id = r.revisit_of_id",
    )
    assert rows == [("revisit", "response", "https://example.org/page0")]
    # the revisited capture is found by the original's words and carries its title
    hits = search(library, Query("word0"))
    assert len(hits) == 2
    assert {h.title for h in hits} == {"Page 0 of example.org"}
    assert sorted(h.captured_at.month for h in hits) == [3, 6]


def test_batches_progress_and_constant_batches(library: Library, tmp_path: Path) -> None:
    responses = [Resp(f"https://b.example/{i}", html_page(f"T{i}", f"w{i}")) for i in range(25)]
    src = write_warc(tmp_path / "many.warc", responses, gz=False)
    library.ensure_collection("default")
    with library.write() as s:
        from archiver_app.store.files import register_file
        from archiver_app.store.models import FileKind

        src_rel = "many.warc"
        (library.root / src_rel).write_bytes(src.read_bytes())
        file_id = register_file(s, library.root, src_rel, FileKind.WARC).id
    updates: list[ProgressUpdate] = []
    target = IndexTarget(
        path=library.root / src_rel, file_id=file_id, warc_file=src_rel, collection_id=1
    )
    report = WarcIndexer(library, target, progress=updates.append, batch_size=7).run()
    assert (report.records, report.pages) == (25, 25)
    assert len(set(report.snapshot_ids)) == 25
    assert [u.done for u in updates] == [7, 14, 21, 25]
    assert updates[-1].fraction == 1.0
    # every record points at its own page, across batch boundaries
    rows = _rows(
        library, "SELECT r.url, s.url FROM records r JOIN snapshots s ON s.id = r.snapshot_id"
    )
    assert len(rows) == 25 and all(a == b for a, b in rows)
    fts = _rows(library, "SELECT count(*) FROM snapshot_fts")
    assert fts == [(25,)]


def test_extract_html_charset_and_entities() -> None:
    doc = (
        "<html LANG=fr-CA><head><meta charset='iso-8859-1'><title>Caf&eacute; é</title>"
        "</head><body><p>d&eacute;j&agrave;</p><!-- hidden --></body></html>"
    )
    page = extract_html(doc.encode("latin-1"))
    assert page.title == "Café é" and page.language == "fr-ca"
    assert page.text == "déjà"
