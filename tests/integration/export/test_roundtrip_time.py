"""A capture's time is the time of its page's own record, and an export keeps it.

A capture's row (with its folder and uid) is made as the capture begins, before the browser
asks for the page. That time was the capture's time, so a page slow to answer was dated in
the library, its timeline, Memento headers, citations and an export's pages list a second or
more before any record of the capture: the import of the export, matching no record at the
listed time, dated the page by its record instead, a second off the first library's; tools
that look a page up by its listed time could pick another capture near it.

Real Chromium captures a page whose server waits 1.2 s before answering, so the capture's
start and its page's answer are at least a second apart.
"""

from __future__ import annotations

import json
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.export import Selection, export
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.warcs import read_warc
from tests.helpers.webserver import LocalServer, Request, Response

pytestmark = pytest.mark.slow

#: how long the server takes to answer the page: its answer comes a second or more after
#: the capture began
DELAY = 1.2
PAGE = b"<!doctype html><html><head><title>Tide tables</title></head><body>High water.</body>"


def _date(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The library and the capture's id."""

    def slow(_req: Request) -> Response:
        time.sleep(DELAY)
        return Response(200, PAGE)

    server = LocalServer({"/tides": slow}).start()
    root = tmp_path_factory.mktemp("captime") / "library"
    try:
        with Library.open(root, create=True) as lib:
            rules = PageRules(page_timeout=40, settle_seconds=0.2, autoscroll=False)
            [result] = capture_urls(lib, [server.url("/tides")], rules=rules)
    finally:
        server.stop()
    assert result.ok and result.snapshot_id is not None, result.error
    return root, result.snapshot_id


def _times(lib: Library, sid: int) -> tuple[datetime, datetime, str]:
    """The capture's time, the WARC-Date of the record it names as its page, its folder."""
    with lib.session() as s:
        snap = s.get(Snapshot, sid)
        assert snap is not None and snap.warc_file and snap.folder
        at, warc, offset, folder = snap.captured_at, snap.warc_file, snap.warc_offset, snap.folder
    [page] = [r for r in read_warc(lib.abspath(warc)) if r.offset == offset]
    assert page.type == "response" and page.uri.endswith("/tides"), page.uri
    return at.astimezone(UTC), _date(page.warc["WARC-Date"]), folder


def test_a_capture_is_dated_by_its_page_record(captured: tuple[Path, int]) -> None:
    root, sid = captured
    with Library.open(root) as lib:
        at, page_at, folder = _times(lib, sid)
        sidecar = json.loads((lib.abspath(folder) / "index.json").read_text(encoding="utf-8"))
    assert at == page_at, f"the capture is dated {at}, its page's record {page_at}"
    assert _date(sidecar["captured_at"]) == at  # its folder, alone, rebuilds the same row


@pytest.mark.parametrize("fmt", ["wacz", "folder"])
def test_an_export_lists_the_page_at_its_record_and_an_import_keeps_its_time(
    captured: tuple[Path, int], fmt: str, tmp_path: Path
) -> None:
    root, sid = captured
    dest = tmp_path / ("out.wacz" if fmt == "wacz" else "out")
    with Library.open(root) as lib:
        at, page_at, _folder = _times(lib, sid)
        result = export(lib, Selection(), dest, fmt=fmt)
    assert result.pages == 1 and not result.problems, result
    if fmt == "wacz":
        with zipfile.ZipFile(dest) as zf:
            lines = zf.read("pages/pages.jsonl").decode().splitlines()
        source = dest
    else:
        lines = (dest / "pages.jsonl").read_text(encoding="utf-8").splitlines()
        source = dest / "archive" / "data.warc.gz"
    [listed] = [json.loads(line) for line in lines[1:]]
    assert listed["ts"] == page_at.strftime("%Y-%m-%dT%H:%M:%SZ"), (listed, page_at)
    with Library.open(tmp_path / "other", create=True) as other:
        outcome = import_paths(other, [source])
        assert not outcome.failed, outcome.describe()
        [imported] = [s for f in outcome.outcomes for s in f.snapshot_ids]
        again, again_page_at, _ = _times(other, imported)
    assert again == at, f"imported as {again}, captured at {at}"
    assert again_page_at == page_at
