"""A capture killed (SIGKILL) after it wrote its files, before its folder's ``index.json``:
the next look at the jobs makes its finished WARC a capture, with its screenshot, DOM and
text; nothing is left pending or lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app import cli
from archiver_app.library import Library
from archiver_app.replay.replayer import Replayer
from archiver_app.search import Query, matching_ids
from archiver_app.store.models import File, Snapshot, SnapshotState
from tests.helpers.webserver import LocalServer

pytestmark = pytest.mark.slow

#: ``archiver capture`` that kills itself, as a power cut would, as it is about to write
#: the folder's index.json: its WARC, screenshot, DOM and text are written by then.
KILLED_BEFORE_INDEX = """
import os, signal, sys
from archiver_app.capture import persist

def killed(*_args, **_kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

persist.write_sidecar = killed
from archiver_app import cli
sys.exit(cli.main(sys.argv[1:]))
"""


def _capture_killed_before_index(root: Path, url: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_BEFORE_INDEX, "--library", str(root), "capture", url,
         "--timeout", "40"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=180)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # its browser, left behind by the kill
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, out


def test_a_capture_killed_before_its_index_is_salvaged_with_its_views(
    library: Library, local_server: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    local_server.add_static(
        "/", "<!doctype html><title>Harbour</title><p>The lighthouse keeper waves.</p>"
    )
    url = local_server.url("/")
    _capture_killed_before_index(library.root, url)
    with library.session() as s:
        snap = s.scalars(select(Snapshot)).one()
        sid, folder = snap.id, library.abspath(snap.folder or "")
        assert snap.state == SnapshotState.PENDING
    written = sorted(p.name for p in folder.iterdir())
    assert written == ["capture.warc.gz", "dom.html", "screenshot.png", "text.txt"]

    # the next look at the jobs (the app's start, `archiver jobs`) finds its worker gone
    assert cli.main(["--library", str(library.root), "jobs"]) == 0
    capsys.readouterr()

    with library.session() as s:
        snap = s.get(Snapshot, sid, populate_existing=True)
        assert snap is not None and snap.state == SnapshotState.COMPLETE
        assert (snap.title, snap.http_status, snap.capture_fidelity) == ("Harbour", 200, "fallback")
        assert snap.provenance["provenance"] == "interrupted"
        assert snap.provenance["salvaged"]["from"] == "capture.warc.gz"
        assert "before it recorded them" in snap.provenance["fidelity_reasons"][0]
        kinds = dict(s.execute(select(File.path, File.kind).where(File.snapshot_id == sid)).all())
    rel = snap.folder
    assert kinds == {
        f"{rel}/capture.warc.gz": "warc",
        f"{rel}/screenshot.png": "screenshot",
        f"{rel}/dom.html": "dom",
        f"{rel}/text.txt": "text",
        f"{rel}/index.json": "sidecar",
    }
    assert (folder / "index.json").is_file()
    assert matching_ids(library, Query(text="lighthouse")) == [sid]
    replayed = Replayer.for_library(library).serve(url)
    assert replayed.status == 200 and b"lighthouse keeper" in replayed.body
    assert cli.main(["verify", "--library", str(library.root)]) == 0
    assert "all as captured" in capsys.readouterr().out
