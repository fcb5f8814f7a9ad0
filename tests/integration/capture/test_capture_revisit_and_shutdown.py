"""A page whose main response is a revisit is captured completely; a page that keeps
fetching until it is closed leaves no task writing after its WARC is closed.

Real Chromium against the local test site (tests/helpers/testsite.py).
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text

from archiver_app.capture.engine import Capturer, CaptureResult, PageRules, capture_urls
from archiver_app.capture.recorder import NetworkRecorder
from archiver_app.library import Library
from archiver_app.store.models import Record, Snapshot
from tests.helpers.testsite import LocalSite, start_site
from tests.helpers.warcs import read_warc, warcio_check

pytestmark = pytest.mark.slow

RULES = PageRules(page_timeout=40, settle_seconds=0.2)
#: the late page never goes quiet: keep its waits short (its wait for quiet ends a quarter
#: of the page time before the deadline; its tiny page loads in well under a second)
LATE_RULES = PageRules(page_timeout=8, settle_seconds=0, autoscroll=False)


@pytest.fixture
def site() -> Iterator[LocalSite]:
    s = start_site()
    try:
        yield s
    finally:
        s.close()


def _assert_complete(lib: Library, result: CaptureResult, title: str) -> Snapshot:
    assert result.ok and result.fidelity == "high", (result.error, result.fidelity)
    assert result.outlinks, "no outlinks"
    with lib.session() as s:
        snap = s.get(Snapshot, result.snapshot_id)
        assert snap is not None
        assert snap.title == title
        body = s.execute(
            text("SELECT body FROM snapshot_fts WHERE rowid = :id"), {"id": snap.id}
        ).scalar_one()
        assert "Benchmark page number" in body
        folder = lib.abspath(snap.folder)
        assert "Benchmark page number" in (folder / "dom.html").read_text("utf-8")
        assert (folder / "screenshot.png").read_bytes().startswith(b"\x89PNG")
        s.expunge(snap)
        return snap


def _main_record(lib: Library, snap: Snapshot) -> Record:
    with lib.session() as s:
        row = s.scalars(
            select(Record).where(
                Record.snapshot_id == snap.id,
                Record.offset == snap.warc_offset,
                Record.record_type.in_(["response", "revisit"]),
            )
        ).one()
        s.expunge(row)
        return row


def test_a_revisit_main_response_gives_a_complete_snapshot(site: LocalSite, tmp_path: Path) -> None:
    lib = Library.open(tmp_path / "library")
    try:
        first_url = site.page_url(7)
        same_body = site.page_url(7) + "&utm=x"  # another URL serving identical HTML

        async def run() -> tuple[CaptureResult, ...]:  # one browser for the three
            async with Capturer(lib, concurrency=2) as cap:
                first = await cap.capture(first_url, rules=RULES)  # stored before the others
                again, twin = await asyncio.gather(
                    cap.capture(first_url, rules=RULES), cap.capture(same_body, rules=RULES)
                )
                return first, again, twin

        first, again, twin = asyncio.run(run())
        original = _main_record(lib, _assert_complete(lib, first, "Page 7"))
        assert original.record_type == "response"
        for result in (again, twin):
            snap = _assert_complete(lib, result, "Page 7")
            main = _main_record(lib, snap)
            assert main.record_type == "revisit"
            assert main.revisit_of_id == original.id
            assert first.snapshot_id in snap.provenance["revisit_of_snapshots"]
    finally:
        lib.close()


def test_the_page_is_extracted_even_when_its_main_record_is_written_late(
    site: LocalSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The main record is written by a task of its own (body fetch, dedup lookup); a slow
    one used to skip extraction and still report ok/high with no title, DOM or screenshot."""
    body = NetworkRecorder._body

    async def slow_main_body(self: NetworkRecorder, ex: Any, hop: Any) -> Any:
        if ex.request_id == self.main.request_id:
            await asyncio.sleep(2.5)
        return await body(self, ex, hop)

    monkeypatch.setattr(NetworkRecorder, "_body", slow_main_body)
    lib = Library.open(tmp_path / "library")
    try:
        (result,) = capture_urls(
            lib,
            [site.page_url(4)],
            rules=PageRules(page_timeout=40, settle_seconds=0, autoscroll=False),
        )
        _assert_complete(lib, result, "Page 4")
    finally:
        lib.close()


def test_late_requests_never_write_after_the_warc_is_closed(
    site: LocalSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lib = Library.open(tmp_path / "library")
    problems: list[dict[str, Any]] = []

    async def run() -> list[CaptureResult]:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: problems.append(ctx))
        async with Capturer(lib, concurrency=2) as cap:
            results = await asyncio.gather(
                *(cap.capture(site.url(f"/late.html?n={n}"), rules=LATE_RULES) for n in range(2))
            )
        await asyncio.sleep(0.2)  # late events and tasks get their chance to run
        gc.collect()  # an unretrieved task exception is reported when the task is collected
        return list(results)

    caplog.set_level(logging.ERROR, logger="asyncio")
    try:
        results = asyncio.run(run())
        gc.collect()
        assert not problems, [str(p.get("exception") or p.get("message")) for p in problems]
        assert "never retrieved" not in caplog.text
        assert "already closed" not in caplog.text
        for result in results:
            assert result.ok, result.error
            with lib.session() as s:
                snap = s.get(Snapshot, result.snapshot_id)
                assert snap is not None
                warc = lib.abspath(snap.warc_file or "")
            check = warcio_check(warc)
            assert check.returncode == 0, check.stdout + check.stderr
            records = read_warc(warc)
            assert records[-1].type == "metadata"  # nothing was appended after the page info
            ticks = [r for r in records if r.type == "response" and "tick=" in r.uri]
            assert ticks, "the page's repeated requests were recorded"
            longpoll = [r for r in records if "/longpoll" in r.uri and r.type == "response"]
            assert longpoll and longpoll[0].warc["WARC-Truncated"] == "time"
    finally:
        lib.close()


def test_a_record_failing_at_shutdown_does_not_leave_the_recorder_open(
    site: LocalSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One pending record failing to write (fault injected) must not keep the recorder
    accepting events: the page's requests go on while its WARC is being closed."""
    write_hop = NetworkRecorder._write_hop

    def failing(self: NetworkRecorder, ex: Any, **kw: Any) -> None:
        if kw.get("truncated") == "time" and "/longpoll" in kw["hop"].url:
            raise RuntimeError("injected write failure")
        write_hop(self, ex, **kw)

    monkeypatch.setattr(NetworkRecorder, "_write_hop", failing)
    lib = Library.open(tmp_path / "library")
    problems: list[dict[str, Any]] = []

    async def run() -> list[CaptureResult]:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: problems.append(ctx))
        async with Capturer(lib, concurrency=2) as cap:
            results = await asyncio.gather(
                *(cap.capture(site.url(f"/late.html?f={n}"), rules=LATE_RULES) for n in range(2))
            )
            await asyncio.sleep(1.0)  # the browser is still up: late events may arrive
        gc.collect()
        return list(results)

    try:
        results = asyncio.run(run())
        gc.collect()
        assert not problems, [str(p.get("exception") or p.get("message")) for p in problems]
        for result in results:
            assert result.ok, result.error
            with lib.session() as s:
                snap = s.get(Snapshot, result.snapshot_id)
                assert snap is not None
                assert any("could not be written" in n for n in snap.provenance["notes"])
                warc = lib.abspath(snap.warc_file or "")
            assert read_warc(warc)[-1].type == "metadata"
    finally:
        lib.close()
