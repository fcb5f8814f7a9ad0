"""The archived copy's identifier a citation gives (``urn:archiver:LIBRARY:UID``) names
the capture again: ``archiver cite`` and ``archiver diff`` take it as they take an id."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from archiver_app import cli
from archiver_app.api.comparing import compare
from archiver_app.cite import citation
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter

URL = "https://harbour.example/notices"
WHEN = datetime(2026, 3, 2, 9, 30, 15, tzinfo=UTC)


def _captures(library: Library) -> list[int]:
    w = ArchiveWriter(library, "collections/default/2026/03/c/capture.warc.gz")
    w.response(URL, "<title>Notices</title><p>one</p>", at=WHEN, page=True)
    w.response(URL, "<title>Notices</title><p>two</p>", at=WHEN.replace(hour=10), page=True)
    w.commit()
    from archiver_app.store.models import Snapshot

    with library.session() as s:
        return list(s.scalars(s.query(Snapshot.id).order_by(Snapshot.id).statement))


def test_a_citations_identifier_names_its_capture(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = _captures(library)
    r = citation(library, first)
    assert r.archive_id == f"urn:archiver:{library.id}:{r.uid}"
    assert citation(library, r.archive_id) == r
    assert citation(library, r.archive_id.replace("urn:archiver:", "URN:Archiver:")) == r
    root = str(library.root)
    assert cli.main(["--library", root, "cite", r.archive_id, "--format", "bibtex"]) == 0
    assert f"eprint = {{{r.archive_id}}}" in capsys.readouterr().out
    # diff takes it too: one way to name a capture
    other = citation(library, second).archive_id
    assert compare(library, r.archive_id, other).comparison.old.id == first

    elsewhere = f"urn:archiver:0f0e0d0c-0000-4000-8000-000000000000:{r.uid}"
    assert cli.main(["--library", root, "cite", elsewhere]) == 2
    err = capsys.readouterr().err
    assert f"no capture or edition {elsewhere!r} in this library" in err
    assert "it names a capture of library 0f0e0d0c-0000-4000-8000-000000000000" in err
    gone = f"urn:archiver:{library.id}:20260302T093015Z-0000000000000000"
    assert cli.main(["--library", root, "cite", gone]) == 2
    assert f"no capture or edition {gone!r} in this library\n" in capsys.readouterr().err
