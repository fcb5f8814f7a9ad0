"""A PDF is a page: captured at a top-level URL or linked from a crawled page, it has its
response record, a picture of its first page, its text (searchable) and its own title."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import select

from archiver_app.cli import main
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.corpus import PDF_TITLE, PDF_WORD, REPORT_PDF, Corpus
from tests.helpers.warcs import read_warc

pytestmark = pytest.mark.slow


def _snapshots(lib_path: Path) -> list[Snapshot]:
    lib = Library.open(lib_path)
    try:
        with lib.session() as s:
            rows = list(s.scalars(select(Snapshot).order_by(Snapshot.id)))
            s.expunge_all()
        return rows
    finally:
        lib.close()


def test_a_pdf_url_is_captured_as_a_searchable_page(
    corpus: Corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib_path = tmp_path / "lib"
    url = corpus.url("/files/report.pdf")
    assert main(["--library", str(lib_path), "capture", "--timeout", "40", url]) == 0
    capsys.readouterr()
    [snap] = _snapshots(lib_path)
    assert snap.state == "complete" and snap.mime == "application/pdf"
    assert snap.title == PDF_TITLE  # from the document's metadata, not its file name
    folder = lib_path / snap.folder
    assert PDF_WORD in (folder / "text.txt").read_text()
    with Image.open(folder / "screenshot.png") as shot:  # the first page, rendered
        assert shot.width == 1280 and shot.height > 1280
        assert shot.convert("L").getextrema()[0] < 64  # dark text on the white page
    records = read_warc(folder / "capture.warc.gz")
    [response] = [r for r in records if r.type == "response" and r.uri == url]
    assert response.payload == REPORT_PDF
    views = {r.uri: r for r in records if r.type == "resource"}
    assert views[f"urn:view:{url}"].payload.startswith(b"\x89PNG")
    assert PDF_WORD.encode() in views[f"urn:text:{url}"].payload

    # the word is only inside the PDF: search finds the capture by it
    assert main(["--library", str(lib_path), "search", PDF_WORD, "--json"]) == 0
    [hit] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert hit["url"] == url and hit["title"] == PDF_TITLE


def test_a_pdf_linked_from_a_crawled_page_becomes_a_page(
    corpus: Corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib_path = tmp_path / "lib"
    seed = corpus.url("/docs/")
    code = main(
        ["--library", str(lib_path), "crawl", seed, "--scope", "host", "--depth", "1",
         "--timeout", "40", "--attempts", "1"]
    )  # fmt: skip
    capsys.readouterr()
    assert code == 0
    by_url = {s.url: s for s in _snapshots(lib_path)}
    pdf = by_url[corpus.url("/files/report.pdf")]
    assert pdf.state == "complete" and pdf.title == PDF_TITLE
    assert main(["--library", str(lib_path), "search", PDF_WORD, "--json"]) == 0
    hits = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [h["url"] for h in hits] == [corpus.url("/files/report.pdf")]
