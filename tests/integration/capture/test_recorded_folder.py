"""A capture whose files were all written but whose final transaction never ran (a shared
library's database went away at that moment) is completed from its folder later, not left
pending and invisible."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import delete, func, select

from archiver_app import cli
from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.capture.persist import mark_interrupted
from archiver_app.library import Library
from archiver_app.search import Query, matching_ids
from archiver_app.store.fulltext import delete_snapshot_text
from archiver_app.store.models import File, Record, Snapshot, SnapshotState
from tests.helpers.webserver import LocalServer

pytestmark = pytest.mark.slow


def _figures(lib: Library, sid: int) -> tuple[object, ...]:
    with lib.session() as s:
        snap = s.get(Snapshot, sid)
        assert snap is not None
        files = s.scalars(select(File.path).where(File.snapshot_id == sid).order_by(File.path))
        records = s.scalar(
            select(func.count()).select_from(Record).where(Record.snapshot_id == sid)
        )
        figures = (snap.state, snap.title, snap.http_status, snap.warc_offset, snap.captured_at)
        return (*figures, list(files), records)


def test_a_capture_written_but_never_recorded_is_completed_from_its_folder(
    library: Library, local_server: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    local_server.add_static("/", "<!doctype html><title>Quay</title><p>The ferry sails.</p>")
    [result] = capture_urls(
        library, [local_server.url("/")], rules=PageRules(page_timeout=40, settle_seconds=0.2)
    )
    assert result.ok and result.snapshot_id is not None, result.error
    sid = result.snapshot_id
    recorded = _figures(library, sid)
    assert recorded[0] == SnapshotState.COMPLETE and recorded[5] and recorded[6]
    # as if the last transaction had not run: the row pending, nothing registered
    with library.write() as s:
        s.execute(delete(Record).where(Record.snapshot_id == sid))
        s.execute(delete(File).where(File.snapshot_id == sid))
        delete_snapshot_text(s.connection(), sid)
        snap = s.get(Snapshot, sid)
        assert snap is not None
        snap.state, snap.title, snap.http_status = SnapshotState.PENDING, None, None
        snap.warc_file = snap.warc_offset = snap.warc_length = None
        snap.captured_at -= timedelta(hours=2)
    assert matching_ids(library, Query(text="ferry")) == []

    assert mark_interrupted(library) == []  # none failed: it was completed
    assert _figures(library, sid) == recorded  # its time too: its page's record's, not its row's
    assert matching_ids(library, Query(text="ferry")) == [sid]
    with library.session() as s:
        snap = s.get(Snapshot, sid)
        assert snap is not None and "recovered" in snap.provenance
    assert cli.main(["verify", "--library", str(library.root)]) == 0
    assert "all as captured" in capsys.readouterr().out
