"""An import SIGKILLed at each moment of writing, registered or not yet: the next start
(or import) leaves no orphan folder, temporary file or row, and the file imports cleanly.

The child imports a WARC (or a WACZ) and stops at one moment (``MOMENTS``): it prints
``here`` and waits to be killed. The moments before the import is recorded (a temporary
copy, the WARC under its final name with no row yet, a recompressed temporary file, a
WACZ's extracted WARC) are the ones an earlier sweep missed; a kill while indexing (rows
written) is ``tests/unit/importers/test_interrupted.py``'s.
"""

from __future__ import annotations

import gzip
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from archiver_app.durable import is_temp
from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.jobs.background import resume_interrupted
from archiver_app.library import Library
from archiver_app.library_use import FOLDER
from archiver_app.warc.records import RECORDS_CHANGED_KEY
from tests.helpers.warcs import site, write_warc
from tests.unit.importers.test_bad_input import make_wacz

CHILD = """
import sys, time
from pathlib import Path
from archiver_app import durable
from archiver_app.importers import wacz as wacz_import, warcs
from archiver_app.importers.run import import_paths
from archiver_app.library import Library

moment = sys.argv[3] if len(sys.argv) > 3 else ""

def stop():
    print("here", flush=True)
    time.sleep(120)

def hook(step, final):
    name = Path(final).name
    if moment == "copy-written" and step == "written" and ".warc" in name:
        stop()
    if moment == "copy-renamed" and step == "renamed" and name.endswith(".warc.gz"):
        stop()
    if moment == "sidecar-renamed" and step == "renamed" and name == "index.json":
        stop()

def patch():
    if moment == "regzipped":  # the recompressed copy written at the library's root
        original = warcs.regzip_into
        def regzip_into(*a, **k):
            original(*a, **k)
            stop()
        warcs.regzip_into = regzip_into
    if moment == "extracted":  # a WACZ's WARC extracted under a temporary name
        original_extract = wacz_import.extract_verified
        def extract_verified(*a, **k):
            original_extract(*a, **k)
            a[2].flush()
            stop()
        wacz_import.extract_verified = extract_verified

if __name__ == "__main__":  # index workers are spawned: they import this module too
    patch()
    lib = Library.open(Path(sys.argv[1]))
    with durable.step_hook(hook):
        import_paths(lib, [Path(sys.argv[2])])
"""

MOMENTS = ["copy-written", "copy-renamed", "sidecar-renamed", "regzipped"]


def _state(lib: Library) -> tuple[tuple[int, ...], list[str]]:
    conn = sqlite3.connect(lib.db_path)
    try:
        # (an undone import leaves the replayers' note that records went: not a setting)
        counts = (
            *(
                conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("records", "snapshots", "files", "snapshot_fts")
            ),
            conn.execute(
                "SELECT count(*) FROM settings WHERE key != ?", (RECORDS_CHANGED_KEY,)
            ).fetchone()[0],
        )
    finally:
        conn.close()
    files = sorted(
        p.relative_to(lib.root).as_posix()
        for p in lib.root.rglob("*")
        if p.relative_to(lib.root).parts[0]
        not in {".locks", FOLDER, "library.db-wal", "library.db-shm"}  # (who held what)
        and not p.name.startswith("library.db")
    )
    return counts, files


def _kill_at(lib: Library, src: Path, moment: str, tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    with subprocess.Popen(
        [sys.executable, str(script), str(lib.root), str(src), moment],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[3],
    ) as child:
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "here"
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()


def _source(moment: str, kind: str, tmp_path: Path) -> Path:
    warc = write_warc(tmp_path / "in.warc.gz", site(3, host="kill.example"))
    if moment == "regzipped":  # gzipped whole: recompressed record by record first
        whole = tmp_path / "whole.warc.gz"
        whole.write_bytes(gzip.compress(gzip.decompress(warc.read_bytes())))
        return whole
    if kind == "wacz":
        return make_wacz(tmp_path / "in.wacz", warc.read_bytes())
    return warc


@pytest.mark.parametrize(
    ("moment", "kind"),
    [
        *((m, "warc") for m in MOMENTS),
        ("extracted", "wacz"),  # a WARC extracted under a temporary name
        ("copy-renamed", "wacz"),  # extracted and renamed into place, no row yet
        ("sidecar-renamed", "wacz"),
    ],
)
def test_a_killed_import_leaves_nothing_and_imports_again(
    library: Library, tmp_path: Path, moment: str, kind: str
) -> None:
    kept = import_paths(library, [write_warc(tmp_path / "kept.warc.gz", site(2))]).outcomes[0]
    assert kept.state is OutcomeState.IMPORTED
    before = _state(library)
    src = _source(moment, kind, tmp_path)
    _kill_at(library, src, moment, tmp_path)
    assert _state(library) != before  # it had started writing
    resume_interrupted(library)  # what the app runs when it opens the library
    after = _state(library)
    assert after == before, moment
    assert not [p for p in library.root.rglob("*") if is_temp(p.name)], moment
    outcome = import_paths(library, [src]).outcomes[0]
    assert outcome.state is OutcomeState.IMPORTED and outcome.records == 6, outcome
