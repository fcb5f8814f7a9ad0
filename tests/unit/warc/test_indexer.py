"""Indexing an imported WARC: records, page snapshots, text, revisits, batching."""

from __future__ import annotations

import base64
import hashlib
import os
import sqlite3
from pathlib import Path

import pytest

from archiver_app.importers.warcs import import_warc_file
from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.library import Library
from archiver_app.search import Query, search
from archiver_app.tasks import ProgressUpdate
from archiver_app.warc.batches import Batch, BatchBuilder
from archiver_app.warc.htmltext import extract_html, extract_plain
from archiver_app.warc.indexer import IndexTarget, WarcIndexer
from archiver_app.warc.reader import read_record_at
from archiver_app.warc.scan import ScannedRecord, scan_records
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
    # the folder belongs to the first page and its index.json reads like any snapshot's
    from archiver_app.layout.sidecar import read_index

    first_uid = _rows(library, "SELECT uid FROM snapshots ORDER BY id LIMIT 1")[0][0]
    assert first_uid == str(folder).rsplit("/", 1)[1]
    parsed = read_index(library.abspath(str(folder)))
    assert (parsed.url, parsed.fs_version) == ("https://example.org/page0", CURRENT_FS_VERSION)
    assert parsed.title == "Page 0 of example.org" and parsed.captured_at.year == 2024
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
        tmp_path / "dedup.warc.gz",
        pages,
        revisit_of={
            "https://example.org/page0": pages[0],
            "https://example.org/page1": pages[2],
            "https://example.org/img0.png": pages[1],  # a subresource revisit after page1's
        },
    )
    outcome = import_warc_file(library, src)
    assert outcome.pages == 4
    rows = _rows(
        library,
        "SELECT r.record_type, o.record_type, o.url FROM records r "
        "JOIN records o ON o.id = r.revisit_of_id",
    )
    assert sorted(rows) == [
        ("revisit", "response", "https://example.org/img0.png"),
        ("revisit", "response", "https://example.org/page0"),
        ("revisit", "response", "https://example.org/page1"),
    ]
    # the image revisit did not give page1's revisit the text of the image's page (page0)
    titles = _rows(library, "SELECT url, title FROM snapshots ORDER BY id")
    assert titles[-1] == ("https://example.org/page1", "Page 1 of example.org")
    # the revisited capture is found by the original's words and carries its title
    hits = search(library, Query("word0"))
    assert len(hits) == 2
    assert {h.title for h in hits} == {"Page 0 of example.org"}
    assert sorted(h.captured_at.month for h in hits) == [3, 6]


def _sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def test_content_hash_is_the_main_records_payload_digest(library: Library, tmp_path: Path) -> None:
    pages = site(2)
    src = write_warc(
        tmp_path / "dedup.warc.gz", pages, revisit_of={"https://example.org/page0": pages[0]}
    )
    # and a response whose record carries no WARC-Payload-Digest (older writers, ARC files)
    body = html_page("No digest", "undigested words")
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
    bare = tmp_path / "bare.warc"
    bare.write_bytes(
        b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://example.net/\r\n"
        b"WARC-Date: 2024-05-01T10:00:00Z\r\n"
        b"WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-0000000000ff>\r\n"
        b"Content-Type: application/http; msgtype=response\r\n"
        + f"Content-Length: {len(http)}\r\n\r\n".encode()
        + http
        + b"\r\n\r\n"
    )
    import_warc_file(library, src)
    import_warc_file(library, bare)
    hashes = dict(_rows(library, "SELECT url || ' ' || captured_at, content_hash FROM snapshots"))
    by_url: dict[str, list[str]] = {}
    for key, value in hashes.items():
        by_url.setdefault(key.split(" ", 1)[0], []).append(value)
    # the revisit carries its original's hash: an unchanged page, without reading it
    assert by_url["https://example.org/page0"] == [_sha1_b32(pages[0].body)] * 2
    assert by_url["https://example.org/page1"] == [_sha1_b32(pages[2].body)]
    assert by_url["https://example.net/"] == [_sha1_b32(body)]
    # it is the records' own digest where there is one
    digests = _rows(
        library,
        "SELECT s.content_hash, r.digest FROM snapshots s JOIN records r "
        "ON r.file_id = (SELECT id FROM files WHERE path = s.warc_file) "
        "AND r.offset = s.warc_offset WHERE r.digest IS NOT NULL",
    )
    assert len(digests) == 3 and all(a == b for a, b in digests)


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


@pytest.mark.parametrize("charset", ["hex", "base64", "rot13", "zlib", "idna", "undefined"])
def test_a_charset_that_is_no_text_encoding_is_read_as_utf8(charset: str) -> None:
    body = "<html><title>Caf\u00e9</title>d\u00e9j\u00e0 \xff</html>".encode() + b"\xff"
    for page in (extract_html(body, charset), extract_plain(body, charset)):
        assert "d\u00e9j\u00e0" in page.text and page.text.endswith("\ufffd")
    meta = f'<html><head><meta charset="{charset}"><title>Caf\u00e9</title></head>hi</html>'
    assert extract_html(meta.encode()).title == "Caf\u00e9"


def test_a_page_naming_a_non_text_codec_does_not_stop_its_warc(
    library: Library, tmp_path: Path
) -> None:
    src = write_warc(
        tmp_path / "site.warc.gz",
        [
            Resp("https://good.example/1", html_page("Good one", "before")),
            Resp(
                "https://evil.example/",
                b'<html><head><meta charset="hex"><title>Evil</title></head>hi</html>',
                mime="text/html",
            ),
            Resp(
                "https://good.example/2",
                html_page("Good two", "after"),
                mime="text/html; charset=zlib",
            ),
        ],
    )
    outcome = import_warc_file(library, src)
    assert (outcome.records, outcome.pages) == (3, 3)
    assert _rows(library, "SELECT title FROM snapshots ORDER BY id") == [
        ("Good one",),
        ("Evil",),
        ("Good two",),
    ]


def _index_into(
    root: Path, src: Path, database_url: str | None = None, **kwargs: object
) -> tuple[Library, object]:
    from archiver_app.store.files import register_file
    from archiver_app.store.models import FileKind

    lib = Library.open(root, create=True, database_url=database_url)
    lib.ensure_collection("default")
    with lib.write() as s:
        (lib.root / src.name).write_bytes(src.read_bytes())
        file_id = register_file(s, lib.root, src.name, FileKind.WARC).id
    target = IndexTarget(
        path=lib.root / src.name, file_id=file_id, warc_file=src.name, collection_id=1
    )
    return lib, WarcIndexer(lib, target, **kwargs)  # type: ignore[arg-type]


def _dedup_warc(tmp_path: Path) -> Path:
    pages = site(6)
    return write_warc(
        tmp_path / "dedup.warc.gz",
        pages,
        with_requests=True,
        revisit_of={
            "https://example.org/page0": pages[0],
            "https://example.org/page3": pages[8],
            "https://example.org/img1.png": pages[3],
        },
    )


def test_pipeline_writes_the_same_rows_as_one_thread(tmp_path: Path) -> None:
    src = _dedup_warc(tmp_path)
    tables = {
        "records": "SELECT * FROM records ORDER BY id",
        "snapshots": "SELECT id, url, url_key, url_group, title, snippet, language, "
        "content_hash, warc_offset, http_status, mime FROM snapshots ORDER BY id",
        "fts": "SELECT rowid, title, url, body, tags FROM snapshot_fts ORDER BY rowid",
    }
    results: dict[object, list[object]] = {}
    for pipeline in (False, "thread", True):
        for batch_size in (1, 3, 5, 1000):
            lib, indexer = _index_into(
                tmp_path / f"lib-{pipeline}-{batch_size}",
                src,
                pipeline=pipeline,
                batch_size=batch_size,
            )
            try:
                report = indexer.run()  # type: ignore[attr-defined]
                rows = {name: _rows(lib, sql) for name, sql in tables.items()}
                results.setdefault(pipeline, []).append(
                    (batch_size, report.revisits_resolved, report.records, report.pages, rows)
                )
            finally:
                lib.close()
    serial = results[False]
    assert results["thread"] == serial
    assert results[True] == serial
    assert all(r[1] == 3 for r in serial)
    assert all(r[4] == serial[-1][4] for r in serial)  # the batch size changes nothing
    assert len(serial[-1][4]["records"]) == serial[-1][2] > 20


def test_worker_process_is_reused_from_file_to_file(tmp_path: Path) -> None:
    from archiver_app.warc.workers import idle_workers

    src = _dedup_warc(tmp_path)
    pids = []
    for n in range(2):
        lib, indexer = _index_into(tmp_path / f"lib-{n}", src)
        try:
            report = indexer.run()  # type: ignore[attr-defined]
        finally:
            lib.close()
        assert report.records > 20 and report.worker_cpu > 0
        pids.append(idle_workers())
    assert len(pids[0]) == 1 and pids[0] == pids[1]


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="Unix priorities")
def test_the_reading_worker_runs_below_the_writer(tmp_path: Path) -> None:
    from archiver_app.warc.batches import READER_NICE
    from archiver_app.warc.workers import idle_workers

    lib, indexer = _index_into(tmp_path / "lib", _dedup_warc(tmp_path))
    try:
        assert indexer.run().records > 20  # type: ignore[attr-defined]
    finally:
        lib.close()
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert [os.getpriority(os.PRIO_PROCESS, pid) for pid in idle_workers()] == [
        min(19, mine + READER_NICE)
    ]


def test_record_tuples_match_the_records_columns() -> None:
    from archiver_app.warc import records
    from archiver_app.warc.batches import RECORD_COLUMNS

    assert records._FIELDS == RECORD_COLUMNS


def test_indexed_records_read_back_what_was_written(library: Library, tmp_path: Path) -> None:
    """Replay and export read ``records`` rows as IndexedRecord through SELECT_COLUMNS."""
    from dataclasses import fields

    from archiver_app.warc.records import _FIELDS, SELECT_COLUMNS, IndexedRecord

    assert tuple(f.name for f in fields(IndexedRecord)) == (*_FIELDS, "id")
    src = write_warc(tmp_path / "site.warc.gz", site(2), with_requests=True)
    import_warc_file(library, src)
    read = [
        IndexedRecord.from_row(r)
        for r in _rows(library, f"SELECT {SELECT_COLUMNS} FROM records ORDER BY id")
    ]
    scanned = list(scan_records(src))
    assert [(r.url, r.record_type, r.offset, r.length) for r in read] == [
        (s.url, s.rec_type, s.offset, s.length) for s in scanned
    ]
    pages = [r for r in read if r.record_type == "response" and r.mime == "text/html"]
    assert len(pages) == 2 and all(r.snapshot_id is not None for r in pages)
    assert all(r.url_key.startswith("org,example)/") for r in read)


class FailingBuilder(BatchBuilder):
    """Fails closing its third batch, after the sixth record (importable by name: the
    worker process gets it so). An error in one record is that record's problem, see
    :class:`BadRecordBuilder`; this is one in the builder itself."""

    def _close(self, batch: Batch) -> Batch:
        if self.records == 6:
            raise RuntimeError("parse failure")
        return super()._close(batch)


class BadRecordBuilder(BatchBuilder):
    """Raises on the third page after adding its snapshot (a half-added record)."""

    def _page(self, batch: Batch, rec: ScannedRecord, at: object) -> None:
        super()._page(batch, rec, at)  # type: ignore[arg-type]
        if rec.url.endswith("/page2"):
            raise KeyError("no such thing")


@pytest.mark.parametrize("pipeline", [False, "thread", True])
def test_an_error_in_one_record_skips_that_record_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pipeline: object
) -> None:
    from archiver_app.warc.indexer import IndexReport

    src = write_warc(tmp_path / "s.warc", site(4), gz=False)
    offsets = [r.offset for r in scan_records(src)]
    monkeypatch.setattr(WarcIndexer, "builder", BadRecordBuilder)
    lib, indexer = _index_into(tmp_path / "lib", src, batch_size=2, pipeline=pipeline)
    try:
        report: IndexReport = indexer.run()  # type: ignore[attr-defined]
        assert (report.records, report.pages) == (7, 3)
        assert [(p.offset, p.reason) for p in report.problems] == [
            (
                offsets[4],
                "response for 'https://example.org/page2' skipped: KeyError: 'no such thing'",
            )
        ]
        assert _rows(lib, "SELECT url FROM snapshots ORDER BY id") == [
            ("https://example.org/page0",),
            ("https://example.org/page1",),
            ("https://example.org/page3",),
        ]
        # the records after it belong to the right pages
        assert _rows(
            lib,
            "SELECT r.url, s.url FROM records r JOIN snapshots s ON s.id = r.snapshot_id"
            " ORDER BY r.offset",
        ) == [
            ("https://example.org/page0", "https://example.org/page0"),
            ("https://example.org/img0.png", "https://example.org/page0"),
            ("https://example.org/page1", "https://example.org/page1"),
            ("https://example.org/img1.png", "https://example.org/page1"),
            ("https://example.org/img2.png", "https://example.org/page1"),
            ("https://example.org/page3", "https://example.org/page3"),
            ("https://example.org/img3.png", "https://example.org/page3"),
        ]
    finally:
        lib.close()


def test_a_record_with_a_bad_url_or_date_does_not_stop_its_file(
    library: Library, tmp_path: Path
) -> None:
    src = write_warc(
        tmp_path / "bad.warc.gz",
        [
            Resp("https://good.example/1", html_page("Good one", "before")),
            Resp("http://[::1/page#x", html_page("Bad URL", "x")),
            Resp(
                "https://ok.example/d", html_page("Bad date", "x"), date="0001-01-01T00:00:00+01:00"
            ),
            Resp("https://good.example/2", html_page("Good two", "after")),
        ],
    )
    outcome = import_warc_file(library, src)
    assert (outcome.records, outcome.pages) == (4, 3) and not outcome.problems
    assert _rows(library, "SELECT url, domain, url_group FROM snapshots ORDER BY id") == [
        ("https://good.example/1", "good.example", "example,good)/1"),
        ("http://[::1/page#x", "", "::1)/page"),
        ("https://good.example/2", "good.example", "example,good)/2"),
    ]
    # the undated record is kept (replay can find it), as records without a date are
    assert _rows(library, "SELECT ts FROM records WHERE url = 'https://ok.example/d'") == [
        ("00000000000000000",)
    ]


def _workers_and_threads() -> list[object]:
    """Producer threads and busy worker processes (idle ones wait for the next file)."""
    import multiprocessing
    import threading

    from archiver_app.warc.workers import idle_workers

    idle = set(idle_workers())
    return [
        *(
            t
            for t in threading.enumerate()
            if t.name in ("warc-index-scan", "warc-index-receive", "sqlite-checkpoint")
        ),
        *(
            p
            for p in multiprocessing.active_children()
            if p.name == "warc-index-worker" and p.pid not in idle
        ),
    ]


@pytest.mark.parametrize("pipeline", [False, "thread", True])
def test_pipeline_raises_producer_errors_in_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pipeline: object
) -> None:
    src = write_warc(tmp_path / "s.warc", site(4), gz=False)
    monkeypatch.setattr(WarcIndexer, "builder", FailingBuilder)
    lib, indexer = _index_into(tmp_path / "lib", src, batch_size=2, pipeline=pipeline)
    try:
        with pytest.raises(RuntimeError, match="parse failure") as caught:
            indexer.run()  # type: ignore[attr-defined]
        if pipeline is True:  # the worker's own traceback comes along as the cause
            assert "test_indexer.py" in str(caught.value.__cause__)
        assert not _workers_and_threads()
        # the batches before the failure were written, as without the pipeline
        assert _rows(lib, "SELECT count(*) FROM records") == [(4,)]
    finally:
        lib.close()


@pytest.mark.parametrize("pipeline", ["thread", True])
def test_pipeline_cancel_stops_the_producer(tmp_path: Path, pipeline: object) -> None:
    from archiver_app.tasks import CancelToken
    from archiver_app.tasks.progress import Cancelled

    responses = [Resp(f"https://c.example/{i}", html_page(f"T{i}", f"w{i}")) for i in range(60)]
    src = write_warc(tmp_path / "many.warc", responses, gz=False)
    token = CancelToken()
    updates: list[ProgressUpdate] = []

    def progress(update: ProgressUpdate) -> None:
        updates.append(update)
        token.cancel()

    lib, indexer = _index_into(
        tmp_path / "lib", src, batch_size=5, progress=progress, cancel=token, pipeline=pipeline
    )
    try:
        with pytest.raises(Cancelled):
            indexer.run()  # type: ignore[attr-defined]
        assert [u.done for u in updates] == [5]
        assert not _workers_and_threads()
        assert _rows(lib, "SELECT count(*) FROM records") == [(5,)]
    finally:
        lib.close()


class DyingBuilder(BatchBuilder):
    """The worker process dies outright on the fifth record (as on a crash or a kill)."""

    def add(self, batch: Batch, rec: ScannedRecord) -> None:
        import os

        if self.records == 4:
            os._exit(3)
        super().add(batch, rec)


def test_a_worker_that_dies_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from archiver_app.warc.indexer import IndexWorkerError

    src = write_warc(tmp_path / "s.warc", site(4), gz=False)
    monkeypatch.setattr(WarcIndexer, "builder", DyingBuilder)
    lib, indexer = _index_into(tmp_path / "lib", src, batch_size=2)
    try:
        with pytest.raises(IndexWorkerError, match=r"stopped unexpectedly \(exit code 3\)"):
            indexer.run()  # type: ignore[attr-defined]
        assert not _workers_and_threads()
        # whole batches only (those the worker had sent before it died are written)
        [(written,)] = _rows(lib, "SELECT count(*) FROM records")
        assert written in (0, 2, 4)
    finally:
        lib.close()


@pytest.mark.parametrize("pipeline", [False, True])
def test_not_an_archive_is_raised_from_the_worker(tmp_path: Path, pipeline: object) -> None:
    from archiver_app.warc.scan import NotAnArchiveError

    src = tmp_path / "fake.warc"
    src.write_bytes(b"<html>not a WARC at all</html>\n" * 10)
    lib, indexer = _index_into(tmp_path / "lib", src, pipeline=pipeline)
    try:
        with pytest.raises(NotAnArchiveError, match="neither a WARC nor an ARC"):
            indexer.run()  # type: ignore[attr-defined]
        assert not _workers_and_threads()
        assert _rows(lib, "SELECT count(*) FROM records") == [(0,)]
    finally:
        lib.close()


def test_pipeline_on_postgresql(tmp_path: Path, postgres_url: str) -> None:
    from sqlalchemy import text

    src = _dedup_warc(tmp_path)
    expected = []
    for pipeline, url in ((False, None), (True, postgres_url)):
        lib, indexer = _index_into(
            tmp_path / f"lib-{pipeline}", src, url, pipeline=pipeline, batch_size=3
        )
        try:
            report = indexer.run()  # type: ignore[attr-defined]
            assert report.revisits_resolved == 3
            with lib.engine.connect() as conn:
                rows = conn.execute(
                    text(
                        'SELECT r.url, r.record_type, r."offset", r.length, s.url, o.url '
                        "FROM records r LEFT JOIN snapshots s ON s.id = r.snapshot_id "
                        "LEFT JOIN records o ON o.id = r.revisit_of_id ORDER BY r.id"
                    )
                ).all()
            expected.append([tuple(r) for r in rows])
        finally:
            lib.close()
    assert expected[0] == expected[1]
    assert len(expected[0]) > 20


def test_a_worker_that_cannot_start_falls_back_to_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import os

    from archiver_app.warc import workers

    # The child runs os._exit(conn, 60.0): a TypeError before it ever says it is ready.
    while workers._idle:  # no ready worker from an earlier test
        workers._idle.pop().close()
    monkeypatch.setattr(workers, "serve", os._exit)
    src = _dedup_warc(tmp_path)
    lib, indexer = _index_into(tmp_path / "lib", src, batch_size=3)
    try:
        report = indexer.run()  # type: ignore[attr-defined]
        assert report.records > 20 and report.revisits_resolved == 3
        assert report.worker_cpu == 0.0  # read in this process
        assert "reading in a thread" in caplog.text
        assert not _workers_and_threads()
    finally:
        lib.close()


def test_self_check_reads_its_file_in_another_process(tmp_path: Path) -> None:
    from archiver_app.warc import workers

    assert workers.self_check(tmp_path) == 1
    idle = workers.idle_workers()
    assert idle and os.getpid() not in idle  # the worker that read it waits for a next file
