"""A capture deleted while ``archiver serve`` (or any long-lived replayer) runs, from
another process or window, is no longer served: the replayer's caches see the deletion
through the database at the next lookup, and keep serving hot lookups from memory."""

from __future__ import annotations

import http.client
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from archiver_app.library import Library
from archiver_app.replay import NotArchived, Replayer
from archiver_app.replay.server import ReplayServer
from archiver_app.store.models import Snapshot
from tests.helpers.archive import ArchiveWriter, at

PAGE = "http://harbour.example/tides"


def _capture(library: Library, body: str, year: int, url: str = PAGE) -> int:
    """One capture of ``url``, in its own WARC file (so that it can be deleted alone)."""
    writer = ArchiveWriter(library, f"imports/{year}-{len(url)}.warc.gz")
    writer.response(url, body, at=at(year), page=True)
    writer.commit()
    with library.session() as s:
        return s.scalars(select(Snapshot.id).order_by(Snapshot.id.desc())).first() or 0


def _captures(library: Library) -> tuple[int, int]:
    """PAGE captured in 2020 and 2024, then another page: neither deletion below takes
    the newest record (the newest capture of PAGE was indexed first, as an import of an
    older WARC after a capture does)."""
    new = _capture(library, "<p>tides of 2024</p>", 2024)
    old = _capture(library, "<p>tides of 2020</p>", 2020)
    _capture(library, "<p>ferries</p>", 2022, "http://harbour.example/ferries")
    return old, new


@pytest.fixture
def other_window(library: Library) -> Iterator[Library]:
    """The same library opened a second time: another process's or window's view."""
    other = Library.open(library.root, create=False)
    try:
        yield other
    finally:
        other.close()


def _latest(server: ReplayServer) -> tuple[int, bytes]:
    """The status of PAGE's latest capture as served, and the archived paragraph in it."""
    conn = http.client.HTTPConnection("127.0.0.1", server.content_port, timeout=10)
    host = server.hosts.host("http://harbour.example")
    conn.request("GET", f"/latest/{PAGE}", headers={"Host": host})
    answer = conn.getresponse()
    body = answer.read()
    conn.close()
    kept = body[body.find(b"<p>") :] if b"<p>" in body else body
    return answer.status, kept


def test_serve_stops_serving_a_capture_deleted_elsewhere(
    library: Library, other_window: Library
) -> None:
    old, new = _captures(library)
    server = ReplayServer(library).start()
    try:
        assert _latest(server) == (200, b"<p>tides of 2024</p>")
        result, _changes = other_window.snapshots.delete([new])
        assert result.deleted == [new]
        assert _latest(server) == (200, b"<p>tides of 2020</p>")  # the capture left
        other_window.snapshots.delete([old])
        status, body = _latest(server)
        assert status == 404 and b"not archived" in body
    finally:
        server.close()


def test_a_replayer_drops_a_deleted_capture_and_caches_as_before(any_library: Library) -> None:
    """On SQLite and on PostgreSQL (a shared library: the deletion on another computer)."""
    old, new = _captures(any_library)
    replayer = Replayer.for_library(any_library)
    assert replayer.serve(PAGE).body == b"<p>tides of 2024</p>"
    hits = replayer._bodies.hits
    assert replayer.serve(PAGE).body == b"<p>tides of 2024</p>"
    assert replayer._bodies.hits == hits + 1  # a hot lookup: from memory
    with Library.open(any_library.root, create=False) as other:
        other.snapshots.delete([new])
        assert replayer.serve(PAGE).body == b"<p>tides of 2020</p>"
        hits = replayer._bodies.hits
        assert replayer.serve(PAGE).body == b"<p>tides of 2020</p>"
        assert replayer._bodies.hits == hits + 1  # cached again once the deletion was seen
        other.snapshots.delete([old])
    with pytest.raises(NotArchived):
        replayer.serve(PAGE)
