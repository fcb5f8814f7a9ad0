"""An imported page's text: the text its capture recorded (a ``urn:text:`` record), else the
text its pages list gives, else its response's (an HTML document's, a PDF's text layer)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.search import Query, search
from archiver_app.store.files import register_file
from archiver_app.store.models import FileKind, Snapshot
from archiver_app.warc.indexer import IndexTarget, Pipeline, WarcIndexer
from tests.helpers.corpus import PDF_TITLE, PDF_WORD, REPORT_PDF
from tests.unit.importers.test_bad_input import make_wacz

HOME = "https://orchard.example/"
FRAME = "https://widgets.example/frame"
GONE = "https://orchard.example/gone"
LATER = "https://orchard.example/later"
REPORT = "https://orchard.example/report.pdf"
PEAR = "https://pear.example/"
#: What the page's HTML says before its script loads its words.
RAW = "<html><head><title>Orchard</title></head><body><p>JSON not loaded yet</p></body></html>"


@dataclass(frozen=True)
class R:
    """A record to write: a response (``status``) or a ``resource`` (``status`` None)."""

    url: str
    body: bytes | str
    mime: str = "text/html; charset=utf-8"
    status: str | None = "200 OK"
    date: str = "2024-05-01T10:00:00Z"


def _warc(path: Path, records: list[R], revisits: dict[str, R] | None = None) -> Path:
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="WARC/1.1")
        for r in records:
            data = r.body.encode() if isinstance(r.body, str) else r.body
            if r.status is None:
                rec = writer.create_warc_record(
                    r.url,
                    "resource",
                    payload=io.BytesIO(data),
                    warc_content_type=r.mime,
                    warc_headers_dict={"WARC-Date": r.date},
                )
            else:
                http = StatusAndHeaders(r.status, [("Content-Type", r.mime)], protocol="HTTP/1.1")
                rec = writer.create_warc_record(
                    r.url,
                    "response",
                    payload=io.BytesIO(data),
                    http_headers=http,
                    warc_headers_dict={"WARC-Date": r.date},
                )
            writer.write_record(rec)
            if revisits and r.url in revisits:  # a later capture of the same payload
                again = revisits[r.url]
                http = StatusAndHeaders("200 OK", [("Content-Type", r.mime)], protocol="HTTP/1.1")
                writer.write_record(
                    writer.create_revisit_record(
                        again.url,
                        digest=rec.rec_headers.get_header("WARC-Payload-Digest"),
                        refers_to_uri=r.url,
                        refers_to_date=r.date,
                        http_headers=http,
                        warc_headers_dict={"WARC-Date": again.date},
                    )
                )
    return path


def _text(url: str, words: str, date: str = "2024-05-01T10:00:00Z") -> R:
    """The ``urn:text:`` record a capture of ``url`` writes after the page's records."""
    return R(f"urn:text:{url}", words, "text/plain; charset=utf-8", None, date)


def _found(lib: Library, words: str) -> list[str]:
    return [h.url for h in search(lib, Query(words, prefix_last=False))]


def _snippet(lib: Library, url: str) -> str:
    with lib.session() as s:
        return str(s.scalar(select(Snapshot.snippet).where(Snapshot.url == url)))


def _index(lib: Library, src: Path, *, batch_size: int, pipeline: Pipeline) -> None:
    lib.ensure_collection("default")
    with lib.write() as s:
        (lib.root / src.name).write_bytes(src.read_bytes())
        file_id = register_file(s, lib.root, src.name, FileKind.WARC).id
    target = IndexTarget(
        path=lib.root / src.name, file_id=file_id, warc_file=src.name, collection_id=1
    )
    WarcIndexer(lib, target, batch_size=batch_size, pipeline=pipeline).run()


def test_a_pdf_without_a_recorded_text_is_found_by_the_words_of_its_text_layer(
    library: Library, tmp_path: Path
) -> None:
    src = _warc(
        tmp_path / "w.warc.gz",
        [R(HOME, RAW), R(REPORT, REPORT_PDF, "application/pdf", date="2024-05-01T10:01:00Z")],
    )
    outcome = import_warc_file(library, src)
    assert outcome.state is OutcomeState.IMPORTED and outcome.pages == 2, outcome.reason
    assert _found(library, PDF_WORD) == [REPORT]
    [hit] = search(library, Query(PDF_WORD))
    assert hit.title == PDF_TITLE  # the title its metadata gives
    assert PDF_WORD in _snippet(library, REPORT)


@pytest.mark.parametrize(
    ("batch_size", "pipeline"),
    [(2000, True), (1, False), (1, "process")],
    ids=["one-batch", "record-by-record", "record-by-record-in-a-worker"],
)
def test_the_text_a_capture_recorded_is_its_page_text(
    any_library: Library, tmp_path: Path, batch_size: int, pipeline: Pipeline
) -> None:
    library = any_library
    src = _warc(
        tmp_path / "w.warc.gz",
        [
            R(HOME, RAW),
            R(FRAME, "<p>a frame of the page</p>"),  # a page of its own: no list says
            _text(FRAME + "#top", "the frame as shown"),
            _text(HOME, "Orchard\nfetched zwetschge mirabelle items"),
            # a capture of a 404 (no page) writes its text too: no other page takes it
            R(GONE, "<p>not here</p>", status="404 Not Found", date="2024-05-01T10:02:00Z"),
            _text(GONE, "gone quince", "2024-05-01T10:02:00Z"),
            # a script changed the address the page shows: its text names that address
            R(LATER, RAW, date="2024-05-01T10:03:00Z"),
            _text(LATER + "?tab=autumn", "autumn medlar", "2024-05-01T10:03:05Z"),
            # ...but a text naming another site is no text of this page
            R(PEAR, "<p>pear trees</p>", date="2024-05-01T10:04:00Z"),
            _text("https://elsewhere.example/", "elsewhere rowan", "2024-05-01T10:04:05Z"),
            # ...nor one written with the time of a page before it (ArchiveWeb.page writes
            # them all at the end)
            _text("https://pear.example/old", "stale sorb", "2024-05-01T09:00:00Z"),
        ],
    )
    _index(library, src, batch_size=batch_size, pipeline=pipeline)
    assert _found(library, "zwetschge mirabelle") == [HOME]
    assert _found(library, "loaded") == []  # what the HTML said before its script ran
    assert _snippet(library, HOME) == "Orchard fetched zwetschge mirabelle items"
    assert _found(library, "shown") == [FRAME]
    assert _found(library, "quince") == []
    assert _found(library, "medlar") == [LATER]
    assert _found(library, "rowan") == []
    assert _found(library, "sorb") == []
    assert _found(library, "pear trees") == [PEAR]


def test_a_revisited_page_takes_the_text_its_own_capture_recorded(
    library: Library, tmp_path: Path
) -> None:
    later = R(LATER, "", date="2024-06-01T10:00:00Z")
    src = _warc(
        tmp_path / "w.warc.gz",
        [R(HOME, RAW), _text(LATER, "plum harvest", "2024-06-01T10:00:00Z")],
        revisits={HOME: later},
    )
    # the revisit is written right after its original, the text after both
    import_warc_file(library, src)
    assert _found(library, "plum harvest") == [LATER]
    assert _found(library, "loaded") == [HOME]


@pytest.mark.parametrize("fmt", ["wacz", "folder"])
def test_a_page_takes_the_text_its_pages_list_gives(
    library: Library, tmp_path: Path, fmt: str
) -> None:
    broken_pdf = b"%PDF-1.4 cut short"
    warc = _warc(
        tmp_path / "w.warc.gz",
        [
            R(HOME, RAW),
            R(REPORT, broken_pdf, "application/pdf", date="2024-05-01T10:01:00Z"),
            R(LATER, RAW, date="2024-05-01T10:02:00Z"),
            _text(LATER, "recorded damson", "2024-05-01T10:02:00Z"),
        ],
    ).read_bytes()
    pages = b"".join(
        json.dumps(line).encode() + b"\n"
        for line in (
            {"format": "json-pages-1.0", "id": "pages", "hasText": True},
            {"url": HOME, "ts": "2024-05-01T10:00:00Z", "text": "listed zwetschge"},
            {"url": REPORT, "title": "Report", "text": "listed greengage"},
            {"url": LATER, "ts": "2024-05-01T10:02:00Z", "text": "listed sloe"},
        )
    )
    if fmt == "wacz":
        source = make_wacz(tmp_path / "x.wacz", warc, extra={"pages/pages.jsonl": pages})
    else:  # a folder export's WARC, its pages list beside its folder
        source = tmp_path / "export" / "archive" / "data.warc.gz"
        source.parent.mkdir(parents=True)
        source.write_bytes(warc)
        (tmp_path / "export" / "pages.jsonl").write_bytes(pages)
    outcome = import_paths(library, [source]).outcomes[0]
    assert outcome.state is OutcomeState.IMPORTED and outcome.pages == 3, outcome.reason
    assert _found(library, "zwetschge") == [HOME]
    assert _found(library, "greengage") == [REPORT]
    assert _found(library, "damson") == [LATER]  # the recorded text comes first
    assert _found(library, "sloe") == []
    assert _found(library, "loaded") == []
    # the texts set aside while the list was read are gone with the import
    assert not [p.name for p in library.root.iterdir() if "pagetexts" in p.name]
