"""What workers fetch is recorded once; what the browser's cache answers is not recorded again.

Real Chromium captures pages of the local corpus (tests/helpers/corpus.py): a page with a
dedicated, a shared and a service worker that each fetch a file, and a page that fetches
one cacheable file twice.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from archiver_app.capture.engine import Capturer, CaptureResult, PageRules
from archiver_app.capture.targets import WorkerAttacher
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.corpus import Corpus
from tests.helpers.warcs import Rec, read_warc

pytestmark = pytest.mark.slow

RULES = PageRules(page_timeout=40, settle_seconds=1.0)


def _capture(lib: Library, urls: list[str]) -> list[CaptureResult]:
    async def run() -> list[CaptureResult]:
        async with Capturer(lib, concurrency=1, screenshots=False) as cap:
            return [await cap.capture(u, rules=RULES) for u in urls]

    return asyncio.run(run())


def _records(lib: Library, result: CaptureResult) -> list[Rec]:
    with lib.session() as s:
        snap = s.get(Snapshot, result.snapshot_id)
        assert snap is not None and snap.warc_file
        return read_warc(lib.abspath(snap.warc_file))


def _responses(records: list[Rec]) -> Counter[str]:
    return Counter(r.uri for r in records if r.type in ("response", "revisit"))


def test_requests_of_dedicated_shared_and_service_workers_are_recorded(
    corpus: Corpus, tmp_path: Path
) -> None:
    lib = Library.open(tmp_path / "lib")
    try:
        (result,) = _capture(lib, [corpus.url("/workers/")])
        assert result.ok, result.error
        records = _records(lib, result)
    finally:
        lib.close()
    got = _responses(records)
    for path in (
        "/workers/dedicated.js",
        "/workers/dedicated-lib.js",  # importScripts of a dedicated worker
        "/workers/dedicated.json",  # fetch of a dedicated worker
        "/workers/shared.js",
        "/workers/shared.json",  # fetch of a shared worker
        "/workers/sw.js",  # the service worker's own script
        "/workers/sw-lib.js",  # its importScripts
        "/workers/sw.json",  # its fetch while installing
        "/workers/offline.css",  # what it put in its cache
    ):
        assert got[corpus.url(path)] == 1, (path, sorted(got.items()), result.resources)
    body = {r.uri: r.payload for r in records if r.type == "response"}
    assert body[corpus.url("/workers/shared.json")] == b'{"from": "shared worker"}'
    assert body[corpus.url("/workers/dedicated-lib.js")] == b"self.lib = 'dedicated';"
    assert body[corpus.url("/workers/sw-lib.js")] == b"self.lib = 'service';"
    # the stream of a fetch into a cache goes to the cache: DevTools gives back an empty body
    assert body[corpus.url("/workers/offline.css")] == b"h1 { color: teal }"
    # the worker scripts the page asked for were answered (fetched again), not missing
    assert result.fidelity == "high", [r for r in result.resources if r.outcome != "complete"]


def test_a_file_fetched_twice_from_the_cache_is_recorded_once(
    corpus: Corpus, tmp_path: Path
) -> None:
    lib = Library.open(tmp_path / "lib")
    try:
        before = len(corpus.main.requested("/cache/data.json"))
        (result,) = _capture(lib, [corpus.url("/cache/")])
        assert result.ok, result.error
        # the page asked twice; the browser went to the network once
        assert len(corpus.main.requested("/cache/data.json")) - before == 1
        records = _records(lib, result)
    finally:
        lib.close()
    got = _responses(records)
    assert got[corpus.url("/cache/data.json")] == 1, got
    assert got[corpus.url("/cache/pic.png")] == 1, got
    requests = Counter(r.uri for r in records if r.type == "request")
    assert requests[corpus.url("/cache/data.json")] == 1


def test_what_no_recorded_session_reported_is_fetched_again_once(
    corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When a worker runs before its session is recorded (Playwright resumes dedicated and
    service workers itself), what Playwright saw it request is fetched again and written
    once. Attaching to no worker at all makes every such worker request a case of it."""

    async def attach_nothing(self: WorkerAttacher, cdp: object) -> None:
        return None

    monkeypatch.setattr(WorkerAttacher, "watch_page", attach_nothing)
    lib = Library.open(tmp_path / "lib")
    try:
        (result,) = _capture(lib, [corpus.url("/workers/")])
        assert result.ok, result.error
        records = _records(lib, result)
        with lib.session() as s:
            snap = s.get(Snapshot, result.snapshot_id)
            assert snap is not None
            notes = snap.provenance["notes"]
    finally:
        lib.close()
    got = _responses(records)
    for path in (
        "/workers/dedicated-lib.js",
        "/workers/dedicated.json",
        "/workers/sw-lib.js",
        "/workers/sw.json",
    ):
        assert got[corpus.url(path)] == 1, (path, got)
        assert any(n.startswith(corpus.url(path) + ": fetched again") for n in notes), notes
    body = {r.uri: r.payload for r in records if r.type == "response"}
    assert body[corpus.url("/workers/dedicated.json")] == b'{"from": "dedicated worker"}'
