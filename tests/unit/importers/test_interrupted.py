"""An import killed mid-way (SIGKILL) is cleaned up at the next start of any import or of
the app, not only when the same file comes back."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app.importers.incomplete import sweep_interrupted_imports
from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from tests.helpers.warcs import Resp, html_page, site, write_warc

#: Imports ``argv[2]`` into the library at ``argv[1]``, says "indexing" after the first
#: batch is written, then waits there to be killed.
CHILD = """
import sys, time
from pathlib import Path
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library

def progress(update):
    if update.total is None:
        print("indexing", flush=True)
        time.sleep(120)

if __name__ == "__main__":
    lib = Library.open(Path(sys.argv[1]))
    import_warc_file(lib, Path(sys.argv[2]), progress=progress)
"""


def _counts(lib: Library) -> tuple[int, ...]:
    conn = sqlite3.connect(lib.db_path)
    try:
        return tuple(
            conn.execute(sql).fetchone()[0]
            for sql in (
                "SELECT count(*) FROM records",
                "SELECT count(*) FROM snapshots",
                "SELECT count(*) FROM files",
                "SELECT count(*) FROM settings WHERE key LIKE 'import-incomplete:%'",
            )
        )
    finally:
        conn.close()


def _library_files(lib: Library) -> list[str]:
    return sorted(
        p.relative_to(lib.root).as_posix()
        for p in (lib.root / "collections").rglob("*")
        if p.is_file()
    )


def _kill_an_import(lib: Library, src: Path, tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    with subprocess.Popen(
        [sys.executable, str(script), str(lib.root), str(src)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[3],
    ) as child:
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "indexing"
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()


def _big_warc(path: Path) -> Path:
    assets = [Resp(f"https://b.example/{i}.png", b"x" * 10, mime="image/png") for i in range(2100)]
    return write_warc(path, [*assets, Resp("https://b.example/", html_page("Home", "last"))])


def test_a_killed_import_is_undone_when_another_import_starts(
    library: Library, tmp_path: Path
) -> None:
    kept = import_paths(library, [write_warc(tmp_path / "kept.warc.gz", site(2))]).outcomes[0]
    assert kept.state is OutcomeState.IMPORTED
    before = (_counts(library), _library_files(library))
    _kill_an_import(library, _big_warc(tmp_path / "big.warc.gz"), tmp_path)
    records, _, files, pending = _counts(library)
    assert records > before[0][0] and files > before[0][2] and pending == 1  # the debris
    other = write_warc(tmp_path / "other.warc.gz", site(1, host="other.example"))
    outcome = import_paths(library, [other]).outcomes[0]  # a different file
    assert outcome.state is OutcomeState.IMPORTED and outcome.records == 2
    # the killed import is gone; the earlier import and the new one are intact
    assert _counts(library)[3] == 0
    after = _library_files(library)
    assert [f for f in after if f not in before[1]] == [
        f for f in after if f.endswith(("other.warc.gz", "index.json")) and f not in before[1]
    ]
    assert len(after) == len(before[1]) + 2
    assert _counts(library)[0] == before[0][0] + 2


def test_the_sweep_the_app_calls_at_start(library: Library, tmp_path: Path) -> None:
    from archiver_app.durable import is_temp
    from archiver_app.jobs.background import resume_interrupted

    before = (_counts(library), _library_files(library))
    _kill_an_import(library, _big_warc(tmp_path / "big.warc.gz"), tmp_path)
    assert _counts(library) != before[0]
    assert resume_interrupted(library).imports_undone == 1  # what the window runs on opening
    assert (_counts(library), _library_files(library)) == before
    assert not [p for p in library.root.rglob("*") if is_temp(p.name)]
    assert sweep_interrupted_imports(library) == 0


def test_the_texts_a_killed_import_set_aside_are_removed(library: Library, tmp_path: Path) -> None:
    export = tmp_path / "export"  # a folder export: its pages list gives the page's text
    (export / "archive").mkdir(parents=True)
    src = _big_warc(export / "archive" / "data.warc.gz")
    listing = {"url": "https://b.example/", "text": "the text the capture recorded"}
    (export / "pages.jsonl").write_text(json.dumps(listing) + "\n")
    _kill_an_import(library, src, tmp_path)
    assert [p for p in library.root.iterdir() if p.name.startswith(".pagetexts-")]
    assert sweep_interrupted_imports(library) == 1
    assert not [p for p in library.root.iterdir() if p.name.startswith(".pagetexts-")]


def test_an_import_completing_while_the_sweep_waits_for_its_lock_is_kept(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from archiver_app.importers import incomplete
    from archiver_app.store.models import Setting

    outcome = import_paths(library, [write_warc(tmp_path / "a.warc.gz", site(1))]).outcomes[0]
    assert outcome.state is OutcomeState.IMPORTED
    conn = sqlite3.connect(library.db_path)
    try:
        file_id, rel = conn.execute("SELECT id, path FROM files WHERE kind = 'warc'").fetchone()
    finally:
        conn.close()
    with library.write() as s:  # as the sweep finds it: still marked, its lock held
        s.add(Setting(key=incomplete.incomplete_key(file_id), value=rel))
    before = (_counts(library)[:3], _library_files(library))
    real = incomplete.held_or_busy

    @contextlib.contextmanager
    def completed_meanwhile(path: Path) -> Iterator[bool]:
        incomplete.mark_complete(library, [file_id])  # the import ends, the lock is free
        with real(path) as mine:
            yield mine

    monkeypatch.setattr(incomplete, "held_or_busy", completed_meanwhile)
    assert sweep_interrupted_imports(library) == 0
    assert (_counts(library)[:3], _library_files(library)) == before
