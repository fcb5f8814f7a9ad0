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
)
from archiver_app.durable import TEMP_SUFFIX
from archiver_app.layout.orphans import import_orphans
from archiver_app.layout.sidecar import write_sidecar
from archiver_app.library import Library
from archiver_app.store.models import FileKind, Snapshot, SnapshotState
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
