"""Pending rows left by a killed capture are shown as failed ('interrupted'), data kept."""

from __future__ import annotations

import os
from datetime import timedelta

from archiver_app.capture.persist import create_pending, mark_interrupted
from archiver_app.durable import TEMP_SUFFIX
from archiver_app.library import Library
from archiver_app.store.models import Snapshot, SnapshotState


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

    assert sorted(mark_interrupted(library)) == sorted([killed, empty])

    with library.session() as s:
        states = {i: s.get(Snapshot, i) for i in (killed, empty, recent, saved)}
        for i in (killed, empty):
            snap = states[i]
            assert snap is not None and snap.state == SnapshotState.FAILED
            assert snap.provenance["provenance"] == "interrupted"
        for i in (recent, saved):
            snap = states[i]
            assert snap is not None and snap.state == SnapshotState.PENDING
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
