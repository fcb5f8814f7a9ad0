"""Text served without a charset is stored with the bytes that were served.

DevTools gives a text body back decoded; with no charset in the header (nor in the body)
the browser guessed one. A PDF, UTF-8 and windows-1252 text, all sent as ``text/plain``
with no charset, are captured with real Chromium: each stored payload is the file itself.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from archiver_app.capture.engine import Capturer, CaptureResult, PageRules
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.testsite import pdf_file
from tests.helpers.warcs import read_warc
from tests.helpers.webserver import LocalServer

pytestmark = pytest.mark.slow

#: A PDF whose binary-marker comment and stream hold bytes above 0x7F (0x81 and 0x8D are
#: undefined in windows-1252), as every real PDF does.
BINARY_PDF = pdf_file(b"BT /F1 24 Tf 72 720 Td (plain) Tj ET").replace(
    b"%PDF-1.4\n", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n%\x81\x8d\x8f\x90\x9d\x00\xff\n", 1
)
FILES = {
    "/report.txt": BINARY_PDF,
    "/utf8.txt": "A na\u00efve caf\u00e9 \u2014 \u201cquoted\u201d\n".encode(),
    "/cp1252.txt": "\u201ccurly\u201d \u2018quotes\u2019 \u20ac5 caf\u00e9\n".encode("cp1252"),
    # says UTF-8 but is not (DevTools gives such a body as bytes)
    "/liar.txt": b"caf\xe9 au lait\n",
}
TYPES = {"/liar.txt": "text/plain; charset=utf-8"}


def _payloads(tmp_path: Path) -> dict[str, tuple[bytes, str | None, dict[str, object]]]:
    server = LocalServer().start()
    for path, body in FILES.items():
        server.add_static(path, body, TYPES.get(path, "text/plain"))
    lib = Library.open(tmp_path / "lib")
    found: dict[str, tuple[bytes, str | None, dict[str, object]]] = {}
    try:

        async def run() -> list[CaptureResult]:
            async with Capturer(lib, concurrency=1, screenshots=False) as cap:
                rules = PageRules(settle_seconds=0.1)
                return [await cap.capture(server.url(p), rules=rules) for p in FILES]

        for path, result in zip(FILES, asyncio.run(run()), strict=True):
            assert result.ok, result.error
            with lib.session() as s:
                snap = s.get(Snapshot, result.snapshot_id)
                assert snap is not None
                warc = lib.abspath(snap.folder) / "capture.warc.gz"
                provenance = dict(snap.provenance)
                fidelity = snap.capture_fidelity
            for rec in read_warc(warc):
                if rec.type == "response" and rec.uri.endswith(path):
                    found[path] = (rec.payload, rec.header("Content-Type"), provenance)
                    provenance["fidelity"] = fidelity
    finally:
        lib.close()
        server.stop()
    return found


def test_text_without_a_charset_is_stored_as_served(tmp_path: Path) -> None:
    found = _payloads(tmp_path)
    for path, body in FILES.items():
        payload, ctype, provenance = found[path]
        assert hashlib.sha256(payload).hexdigest() == hashlib.sha256(body).hexdigest(), (
            path,
            payload[:40],
            provenance["notes"],
        )
        assert ctype == TYPES.get(path, "text/plain"), path
        assert provenance["fidelity"] == "high", (path, provenance)
