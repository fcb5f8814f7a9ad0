"""A real capture records the digest of each file it writes; ``archiver verify`` then
finds them as captured, and names a text file changed afterwards."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import select

from archiver_app import cli
from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.library import Library
from archiver_app.store.models import File, FileKind, Origin
from tests.helpers.webserver import LocalServer

pytestmark = pytest.mark.slow


def test_capture_records_digests_and_verify_tells_a_later_change(
    library: Library, local_server: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    local_server.add_static(
        "/", "<!doctype html><title>Quay</title><p>The ferry leaves at nine.</p>"
    )
    [result] = capture_urls(
        library, [local_server.url("/")], rules=PageRules(page_timeout=40, settle_seconds=0.2)
    )
    assert result.ok, result.error
    with library.session() as s:
        rows = {r.kind: r for r in s.scalars(select(File))}
    for kind in (FileKind.WARC, FileKind.SCREENSHOT, FileKind.DOM, FileKind.TEXT):
        row = rows[kind]
        data = (library.root / row.path).read_bytes()
        assert row.origin == Origin.CAPTURE, kind
        assert row.origin_sha256 == hashlib.sha256(data).hexdigest(), kind
    assert rows[FileKind.SIDECAR].origin is None  # rewritten legitimately: not checked
    root = str(library.root)
    assert cli.main(["verify", "--library", root]) == 0
    assert "4 files checked: 4 intact; all as captured" in capsys.readouterr().out
    text = library.root / rows[FileKind.TEXT].path
    text.write_text(text.read_text() + " (edited)")
    assert cli.main(["verify", "--library", root]) == 1
    out = capsys.readouterr().out
    assert f"altered after capture: {rows[FileKind.TEXT].path}:" in out
