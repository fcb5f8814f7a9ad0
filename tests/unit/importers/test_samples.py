"""Files written by other tools (tests/data) import with the records `warcio index` sees."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from archiver_app.search import Query, search

DATA = Path(__file__).parents[2] / "data"


def test_wget_warc(library: Library) -> None:
    path = DATA / "wget-1.21.3.warc.gz"
    out = subprocess.run(
        [str(Path(sys.executable).parent / "warcio"), "index", "-f", "warc-type,offset", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    expected = [(r["warc-type"], int(r["offset"])) for r in map(json.loads, out.splitlines())]
    [outcome] = import_paths(library, [path]).outcomes
    assert outcome.state is OutcomeState.IMPORTED and not outcome.problems
    with library.engine.connect() as conn:
        from sqlalchemy import text

        rows = conn.execute(text("SELECT record_type, offset FROM records ORDER BY offset")).all()
        pages = conn.execute(text("SELECT url, mime, title FROM snapshots ORDER BY id")).all()
    assert [(r[0], r[1]) for r in rows] == expected and len(expected) == 11
    assert [(p[0].rsplit("/", 1)[1], p[1], p[2]) for p in pages] == [
        ("", "text/html", "Lighthouse keepers"),
        ("log.html", "text/html", "Storm log"),
        ("notes.txt", "text/plain", None),
    ]
    assert [h.title for h in search(library, Query("storm headland"))] == ["Lighthouse keepers"]
    assert len(search(library, Query("lighthouse"))) == 2  # the page and the notes
