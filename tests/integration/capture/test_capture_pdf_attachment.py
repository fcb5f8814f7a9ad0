"""A PDF sent as an attachment is still read as a PDF: its own title, its first page."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from archiver_app.capture.engine import Capturer, CaptureResult, PageRules
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.corpus import PDF_TITLE, PDF_WORD, REPORT_PDF
from tests.helpers.webserver import LocalServer, Response

pytestmark = pytest.mark.slow


def test_a_pdf_attachment_has_its_own_title_and_a_first_page_picture(tmp_path: Path) -> None:
    server = LocalServer().start()
    disposition = ("Content-Disposition", 'attachment; filename="Annual Report 2025.pdf"')
    server.routes["/dl"] = lambda _q: Response(200, REPORT_PDF, [disposition], "application/pdf")
    lib = Library.open(tmp_path / "lib")
    try:

        async def run() -> CaptureResult:
            async with Capturer(lib, concurrency=1) as cap:
                return await cap.capture(server.url("/dl"), rules=PageRules(settle_seconds=0.1))

        result = asyncio.run(run())
        assert result.ok, result.error
        with lib.session() as s:
            snap = s.get(Snapshot, result.snapshot_id)
            assert snap is not None
            folder = lib.abspath(snap.folder)
            assert snap.title == PDF_TITLE  # the document's own title, not the file name
        assert (folder / "screenshot.png").read_bytes().startswith(b"\x89PNG")
        assert PDF_WORD in (folder / "text.txt").read_text()
    finally:
        lib.close()
        server.stop()
