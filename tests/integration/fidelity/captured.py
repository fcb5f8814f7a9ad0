"""The fidelity suite's capture of the local corpus (tests/helpers/corpus.py), made once a
session and shared by its modules: each page captured with the system Chromium, in turn,
with the requests the corpus servers saw while it was captured."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from archiver_app.capture.engine import Capturer, CaptureResult, PageRules
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.corpus import Corpus, start_corpus

RULES = PageRules(page_timeout=45, settle_seconds=1.0)


@dataclass
class Captured:
    result: CaptureResult
    snapshot: Snapshot
    network: Counter[str]  # URL -> GET requests the corpus servers saw during its capture


@dataclass
class Suite:
    corpus: Corpus
    lib: Library
    pages: dict[str, Captured]


@pytest.fixture(scope="session")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Suite]:
    corpus = start_corpus()
    lib = Library.open(tmp_path_factory.mktemp("fidelity") / "library", create=True)
    pages: dict[str, Captured] = {}

    async def run() -> None:
        async with Capturer(lib, concurrency=1) as cap:
            for name, path in Corpus.PAGES.items():
                before = corpus.mark()
                result = await cap.capture(corpus.url(path), rules=RULES)
                seen = corpus.requests_since(before)
                network = Counter(
                    f"http://{r.host}{r.path}" for r in seen if r.method in ("GET", "HEAD")
                )
                with lib.session() as s:
                    snap = s.get(Snapshot, result.snapshot_id)
                    assert snap is not None
                    s.expunge(snap)
                pages[name] = Captured(result, snap, network)

    try:
        asyncio.run(run())
        yield Suite(corpus, lib, pages)
    finally:
        lib.close()
        corpus.close()
