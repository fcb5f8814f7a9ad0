"""Pending rows left by a killed capture are shown as failed ('interrupted'), data kept;
a folder a kill left before its row was written is adopted the same way."""

from __future__ import annotations

import os
from datetime import timedelta

from sqlalchemy import select

from archiver_app.capture.persist import (
    SnapshotOutcome,
    create_pending,
    hash_files,
    mark_interrupted,
    sidecar,
    write_views,
)
from archiver_app.durable import TEMP_SUFFIX
from archiver_app.layout.orphans import import_orphans
from archiver_app.layout.sidecar import write_sidecar
from archiver_app.library import Library
from archiver_app.search import Query, matching_ids
from archiver_app.store.models import File, FileKind, Snapshot, SnapshotState
from archiver_app.warc.httpmsg import HttpRequest, HttpResponse
from archiver_app.warc.writer import CaptureWarcWriter
from tests.helpers.warcs import read_warc


def _pending(lib: Library, name: str, age: timedelta, files: list[str]) -> int:
    captured_at = lib.clock() - age
    folder = f"collections/default/x/{name}"
    lib.abspath(folder).mkdir(parents=True)
    for f in files:
        lib.abspath(f"{folder}/{f}").write_bytes(b"WARC data")
    return create_pending(
        lib,
        url=f"http://example.org/{name}",
        collection_id=lib.ensure_collection("default"),
        captured_at=captured_at,
        uid=name,
        folder=folder,
        job_id=None,
    )


def test_old_pending_rows_with_only_part_files_become_failed(library: Library) -> None:
    killed = _pending(library, "killed", timedelta(hours=3), ["capture.warc.gz.part"])
    empty = _pending(library, "empty", timedelta(hours=2), [])
    recent = _pending(library, "recent", timedelta(minutes=5), ["capture.warc.gz.part"])
    saved = _pending(library, "saved", timedelta(hours=3), ["capture.warc.gz", "index.json"])

    assert sorted(mark_interrupted(library)) == sorted([killed, empty, saved])

    with library.session() as s:
        states = {i: s.get(Snapshot, i) for i in (killed, empty, recent, saved)}
        for i in (killed, empty, saved):
            snap = states[i]
            assert snap is not None and snap.state == SnapshotState.FAILED
            assert snap.provenance["provenance"] == "interrupted"
        snap = states[recent]
        assert snap is not None and snap.state == SnapshotState.PENDING
        # its index.json is unreadable: no capture to complete, so it is said failed
        assert "never recorded" in states[saved].provenance["error"]  # type: ignore[union-attr]
    part = library.abspath("collections/default/x/killed/capture.warc.gz.part")
    assert part.read_bytes() == b"WARC data"  # nothing deleted
    assert mark_interrupted(library) == []  # idempotent


def test_a_half_written_file_does_not_hide_an_interrupted_capture(library: Library) -> None:
    """Killed while writing its screenshot: the temporary file is swept, the row failed."""
    temp = f".screenshot.png.41-ab12cd34-0{TEMP_SUFFIX}"
    killed = _pending(library, "killed", timedelta(hours=3), ["capture.warc.gz.part", temp])
    folder = library.abspath("collections/default/x/killed")
    os.utime(folder / temp, (0, 0))
    assert mark_interrupted(library) == [killed]
    assert sorted(p.name for p in folder.iterdir()) == ["capture.warc.gz.part"]


def test_a_failed_capture_whose_rows_were_never_saved_is_shown_failed(
    library: Library,
) -> None:
    """A capture that failed (an error page, a timeout) writes its index.json like any
    other; when its final transaction never ran (the database went away), the row was
    left pending for good: no complete capture to take from its folder. It is shown
    failed with the error its index.json gives, its files kept."""
    snapshot_id = _pending(library, "failed", timedelta(minutes=1), ["capture.warc.gz"])
    folder = "collections/default/x/failed"
    out = SnapshotOutcome(
        snapshot_id=snapshot_id,
        url="http://example.org/failed",
        state=SnapshotState.FAILED,
        folder=folder,
        files=[(f"{folder}/capture.warc.gz", FileKind.WARC)],
        records=[],
        main=None,
        provenance={"error": "net::ERR_CONNECTION_RESET"},
    )
    hashes = hash_files(library.root, out.files)
    side = sidecar(
        out=out, uid="failed", collection="default", captured_at=library.clock(),
        final_url=out.url, job_id=None, hashes=hashes,
    )  # fmt: skip
    write_sidecar(library.abspath(folder), side)

    assert mark_interrupted(library, ids=[snapshot_id]) == [snapshot_id]  # its writer is gone

    with library.session() as s:
        snap = s.get(Snapshot, snapshot_id)
        assert snap is not None and snap.state == SnapshotState.FAILED
        assert snap.provenance["provenance"] == "interrupted"
        assert snap.provenance["error"].startswith("net::ERR_CONNECTION_RESET; ")
    assert library.abspath(f"{folder}/capture.warc.gz").read_bytes() == b"WARC data"
    assert mark_interrupted(library, ids=[snapshot_id]) == []


def _killed_visit(lib: Library, name: str, *, with_response: bool) -> str:
    """The folder a browsing session killed before its page's row left: a ``.part`` WARC
    (warcinfo, then the page's response when ``with_response``, then half a record)."""
    folder = f"collections/web/2026/11/{name}"
    lib.abspath(folder).mkdir(parents=True)
    writer = CaptureWarcWriter(lib.abspath(f"{folder}/capture.warc.gz"), info={"software": "t"})
    if with_response:
        page = b"<html><title>Kept</title><body>words kept after a kill</body></html>"
        writer.write_exchange(
            "http://example.org/kept",
            HttpRequest("GET", "/kept", [("Host", "example.org")]),
            HttpResponse(200, "OK", [("Content-Type", "text/html")]),
            page,
        )
    writer.abandon()
    with writer.part_path.open("ab") as part:
        part.write(b"\x1f\x8b\x08\x00half a record")  # the one being written at the kill
    return folder


def test_orphan_import_keeps_what_a_capture_killed_before_its_row_recorded(
    library: Library,
) -> None:
    kept = _killed_visit(library, "0001-kept", with_response=True)
    empty = _killed_visit(library, "0002-empty", with_response=False)

    report = import_orphans(library)

    assert (report.salvaged, report.imported) == (1, 0)
    assert [line.split(":")[0] for line in report.invalid] == [empty]  # nothing of it to keep
    with library.session() as s:
        snap = s.scalars(select(Snapshot)).one()
        assert (snap.folder, snap.url, snap.state) == (
            kept,
            "http://example.org/kept",
            SnapshotState.COMPLETE,
        )
        assert (snap.title, snap.capture_fidelity) == ("Kept", "fallback")
        assert snap.provenance["provenance"] == "interrupted"
        assert snap.provenance["orphan_folder"] == kept
        assert snap.provenance["part_files"] == ["capture.warc.gz.part"]
    warc = library.abspath(f"{kept}/capture.warc.gz")
    assert [r.type for r in read_warc(warc)] == ["warcinfo", "response", "request"]
    assert library.abspath(f"{kept}/capture.warc.gz.part").is_file()  # left as it was
    assert import_orphans(library).salvaged == 0  # the folder has its row now


def _killed_after_views(lib: Library, name: str, *, closed: bool, redirect: bool) -> int:
    """A pending capture killed after ``write_views``: its ``.part`` WARC (or, ``closed``,
    its WARC closed as the capture does just before its ``index.json``) and its screenshot,
    DOM and text beside it; ``redirect``: the address answered with a redirect first."""
    sid = _pending(lib, name, timedelta(minutes=1), [])
    folder = f"collections/default/x/{name}"
    url, shown = f"http://example.org/{name}", f"http://example.org/{name}/here"
    writer = CaptureWarcWriter(lib.abspath(f"{folder}/capture.warc.gz"), info={"software": "t"})
    if redirect:
        writer.write_exchange(
            url,
            HttpRequest("GET", f"/{name}", [("Host", "example.org")]),
            HttpResponse(301, "Moved", [("Location", shown)]),
            b"",
        )
    page = b"<html><title>Kept</title><body>tide tables of the bay</body></html>"
    writer.write_exchange(
        shown if redirect else url,
        HttpRequest("GET", "/", [("Host", "example.org")]),
        HttpResponse(200, "OK", [("Content-Type", "text/html")]),
        page,
    )
    files = write_views(
        lib, writer, folder, shown, (b"\x89PNG shot", "<html>dom</html>", "tide tables"),
        concurrent=None,
    )  # fmt: skip
    assert [kind for _rel, kind in files] == [FileKind.SCREENSHOT, FileKind.DOM, FileKind.TEXT]
    if closed:
        writer.write_metadata(f"urn:pageinfo:{shown}", "application/json", b"{}")
        writer.close()
    else:
        writer.abandon()
    return sid


def test_a_capture_killed_after_writing_its_views_is_salvaged_with_them(
    library: Library,
) -> None:
    """Killed once its screenshot, DOM and text were written (before, the folder held
    files other than ``.part`` ones and its row stayed pending for good, never reported):
    the WARC, closed or not, becomes the capture, the views its files."""
    closed = _killed_after_views(library, "closed", closed=True, redirect=True)
    part = _killed_after_views(library, "part", closed=False, redirect=False)

    assert sorted(mark_interrupted(library, ids=[closed, part])) == sorted([closed, part])

    with library.session() as s:
        for sid, source in ((closed, "capture.warc.gz"), (part, "capture.warc.gz.part")):
            snap = s.get(Snapshot, sid)
            assert snap is not None and snap.state == SnapshotState.COMPLETE
            assert (snap.title, snap.capture_fidelity) == ("Kept", "fallback")
            assert snap.provenance["salvaged"]["from"] == source
            kinds = sorted(s.scalars(select(File.kind).where(File.snapshot_id == sid)))
            assert kinds == ["dom", "screenshot", "sidecar", "text", "warc"]
        snap = s.get(Snapshot, closed)
        assert snap is not None
        # the page the tab showed (its pageinfo record's address), not the redirect
        assert (snap.http_status, snap.url) == (200, "http://example.org/closed")
        assert snap.warc_offset is not None
    assert matching_ids(library, Query(text="tide")) == sorted([closed, part])


def test_a_closed_warc_with_no_answer_is_reported_and_kept(library: Library) -> None:
    """Killed after closing a WARC that recorded no answer: nothing to replay, so the row
    says so (failed, interrupted), and every file stays."""
    sid = _pending(library, "nothing", timedelta(minutes=1), [])
    folder = "collections/default/x/nothing"
    writer = CaptureWarcWriter(library.abspath(f"{folder}/capture.warc.gz"), info={"software": "t"})
    writer.close()
    library.abspath(f"{folder}/text.txt").write_text("")

    assert mark_interrupted(library, ids=[sid]) == [sid]

    with library.session() as s:
        snap = s.get(Snapshot, sid)
        assert snap is not None and snap.state == SnapshotState.FAILED
        assert "stopped after it wrote its files" in snap.provenance["error"]
        assert snap.provenance["part_files"] == ["capture.warc.gz", "text.txt"]
    names = sorted(p.name for p in library.abspath(folder).iterdir())
    assert names == ["capture.warc.gz", "text.txt"]
    assert mark_interrupted(library, ids=[sid]) == []


def test_a_folder_holding_a_file_no_capture_writes_is_left_pending(library: Library) -> None:
    """Not a capture's leftovers: left alone (someone else's file), as before."""
    sid = _pending(library, "other", timedelta(hours=3), ["capture.warc.gz", "notes.odt"])
    assert mark_interrupted(library) == []
    with library.session() as s:
        snap = s.get(Snapshot, sid)
        assert snap is not None and snap.state == SnapshotState.PENDING
