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
    _unrecord(library, sid)
    assert matching_ids(library, Query(text="ferry")) == []

    assert mark_interrupted(library) == []  # none failed: it was completed
    assert _figures(library, sid) == recorded  # its time too: its page's record's, not its row's
    assert matching_ids(library, Query(text="ferry")) == [sid]
    with library.session() as s:
        snap = s.get(Snapshot, sid)
        assert snap is not None and "recovered" in snap.provenance
    assert cli.main(["verify", "--library", str(library.root)]) == 0
    assert "all as captured" in capsys.readouterr().out


def _unrecord(lib: Library, sid: int) -> None:
    """As if the capture ``sid``'s last transaction had not run: pending, nothing saved."""
    with lib.write() as s:
        s.execute(delete(Record).where(Record.snapshot_id == sid))
        s.execute(delete(File).where(File.snapshot_id == sid))
        delete_snapshot_text(s.connection(), sid)
        snap = s.get(Snapshot, sid)
        assert snap is not None
        snap.state, snap.title, snap.http_status = SnapshotState.PENDING, None, None
        snap.warc_file = snap.warc_offset = snap.warc_length = None
        snap.captured_at -= timedelta(hours=2)


def _revisit_never_recorded(lib: Library, server: LocalServer) -> tuple[int, int]:
    """A page captured, then captured again (a revisit of the first), the second's last
    transaction never run; their ids."""
    server.add_static("/", "<!doctype html><title>Quay</title><p>The ferry sails.</p>")
    server.add_static("/other", "<!doctype html><title>Pier</title><p>Elsewhere.</p>")
    rules = PageRules(page_timeout=40, settle_seconds=0.2)
    [first] = capture_urls(lib, [server.url("/")], rules=rules)
    # a record after the original's: SQLite gives a deleted last row's id to the next one
    [other] = capture_urls(lib, [server.url("/other")], rules=rules)
    [second] = capture_urls(lib, [server.url("/")], rules=rules)
    assert first.ok and other.ok and second.ok, (first.error, other.error, second.error)
    assert first.snapshot_id is not None and second.snapshot_id is not None
    with lib.session() as s:
        kinds = s.scalars(
            select(Record.record_type).where(
                Record.snapshot_id == second.snapshot_id, Record.url == server.url("/")
            )
        ).all()
    assert "revisit" in kinds, kinds
    _unrecord(lib, second.snapshot_id)
    return first.snapshot_id, second.snapshot_id


def test_a_revisit_completed_from_its_folder_names_its_original(
    library: Library, local_server: LocalServer
) -> None:
    original, sid = _revisit_never_recorded(library, local_server)
    assert mark_interrupted(library) == []  # completed
    with library.session() as s:
        pointed = s.scalars(
            select(Record.revisit_of_id).where(
                Record.snapshot_id == sid, Record.record_type == "revisit"
            )
        ).all()
        originals = s.scalars(select(Record.snapshot_id).where(Record.id.in_(pointed))).all()
    assert pointed and None not in pointed  # each revisit row names its original
    assert set(originals) == {original}


def test_a_revisit_of_a_deleted_capture_is_not_completed_from_its_folder(
    library: Library, local_server: LocalServer
) -> None:
    from archiver_app.api.deletion import delete_snapshots

    original, sid = _revisit_never_recorded(library, local_server)
    assert delete_snapshots(library, [original]).deleted == [original]
    assert mark_interrupted(library) == [sid]  # shown failed, not "recovered"
    with library.session() as s:
        snap = s.get(Snapshot, sid)
        assert snap is not None and snap.state == SnapshotState.FAILED
        assert "recovered" not in snap.provenance
        assert s.scalar(select(func.count()).where(Record.snapshot_id == sid)) == 0
