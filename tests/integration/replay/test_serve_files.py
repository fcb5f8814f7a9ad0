"""Captures that are files, opened through ``archiver serve`` in real Chromium.

Every archived page is framed sandboxed, and Chromium runs no PDF viewer in a sandboxed
document and drops a sandboxed document's downloads: a PDF showed the sad-page icon and a
.docx or a file of unknown type a blank frame, with nothing downloaded.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Response, sync_playwright

from archiver_app.capture.browser import launch_options, require_browser
from archiver_app.library import Library
from archiver_app.replay.server import ReplayServer
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.testsite import pdf

PDF = "https://docs.example/paper.pdf"
DOCX = "https://docs.example/files/report.docx"
BLOB = "https://docs.example/get/blob"
INDEX = "https://docs.example/"
DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
DOCX_BYTES = b"PK\x03\x04" + os.urandom(3000)
BLOB_BYTES = bytes(range(256)) * 20


@pytest.fixture
def served(library: Library):  # type: ignore[no-untyped-def]
    w = ArchiveWriter(library)
    w.response(PDF, pdf("Archived paper"), at=at(2025), mime="application/pdf", page=True)
    w.response(DOCX, DOCX_BYTES, at=at(2025), mime=DOCX_TYPE, page=True)
    w.response(BLOB, BLOB_BYTES, at=at(2025), mime="application/octet-stream", page=True)
    w.response(INDEX, '<!doctype html><iframe src="/files/report.docx"></iframe>', at=at(2025))
    w.commit()
    server = ReplayServer(library).start()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**launch_options(require_browser()))  # type: ignore[arg-type]
        try:
            yield server, browser
        finally:
            browser.close()
            server.close()


def test_an_archived_pdf_is_shown_by_the_browsers_pdf_viewer(
    served: tuple[ReplayServer, Browser],
) -> None:
    server, browser = served
    page = browser.new_page()
    responses: list[Response] = []
    page.on("response", lambda r: responses.append(r))  # noqa: PLW0108 (a bound builtin breaks playwright)
    page.goto(server.url_for(PDF), wait_until="load")
    page.wait_for_timeout(1500)
    content = server.content_url(PDF, "20250101000000")
    framed = [r for r in responses if r.url == content]
    assert framed, [r.url for r in responses]
    headers = framed[0].all_headers()
    assert headers["content-type"] == "application/pdf"
    policy = framed[0].header_values("content-security-policy")
    assert not any("sandbox" in p for p in policy), policy
    assert any("connect-src" in p for p in policy), policy  # the rest of it stays
    assert headers["x-content-type-options"] == "nosniff"
    urls = [f.url for f in page.frames]
    assert not any(u.startswith("chrome-error:") for u in urls), urls
    assert any(u.startswith("chrome-extension://") for u in urls), urls  # the PDF viewer
    frame = next(f for f in page.frames if f.url == framed[0].url)
    assert frame.evaluate("document.contentType") == "application/pdf"


@pytest.mark.parametrize(
    ("url", "body", "name"), [(DOCX, DOCX_BYTES, "report.docx"), (BLOB, BLOB_BYTES, "blob")]
)
def test_an_archived_file_is_offered_as_a_download_of_its_exact_bytes(
    served: tuple[ReplayServer, Browser], tmp_path: Path, url: str, body: bytes, name: str
) -> None:
    server, browser = served
    page = browser.new_page(accept_downloads=True)
    page.goto(server.url_for(url), wait_until="load")
    assert page.locator("h1").inner_text() == "This capture is a file"
    with page.expect_download() as started:
        page.click("#download")
    download = started.value
    assert download.suggested_filename == name
    saved = tmp_path / name
    download.save_as(saved)
    assert saved.read_bytes() == body


def test_only_files_are_downloaded_from_the_shell(served: tuple[ReplayServer, Browser]) -> None:
    server, browser = served
    page = browser.new_page()
    page.goto(server.url_for(PDF), wait_until="load")  # sets the token cookie
    answer = page.request.get(f"{server.origin}/download/20250101000000/{PDF}")
    assert answer.status == 404


def test_a_file_in_a_frame_of_an_archived_page_names_its_own_address(
    served: tuple[ReplayServer, Browser],
) -> None:
    """The page's sandbox refuses downloads: the frame says where the file is offered."""
    server, browser = served
    page = browser.new_page(accept_downloads=True)
    downloads: list[object] = []
    page.on("download", lambda d: downloads.append(d))  # noqa: PLW0108
    page.goto(server.url_for(INDEX), wait_until="load")
    inner = page.main_frame.child_frames[0].child_frames[0]
    inner.wait_for_selector("#own-address")
    assert inner.locator("h1").inner_text() == "This capture is a file"
    assert server.page_url(DOCX, "20250101000000") in inner.locator("#own-address").inner_text()
    assert downloads == []
