"""The archived copy's identifier a citation gives (``urn:archiver:LIBRARY:UID``) names
the capture again: ``archiver cite`` and ``archiver diff`` take it as they take an id."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from archiver_app import cli
from archiver_app.api.comparing import compare
from archiver_app.cite import citation
from archiver_app.export import Selection, export
from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter

URL = "https://harbour.example/notices"
WHEN = datetime(2026, 3, 2, 9, 30, 15, tzinfo=UTC)


def _captures(library: Library) -> list[int]:
    w = ArchiveWriter(library, "collections/default/2026/03/c/capture.warc.gz")
    w.response(URL, "<title>Notices</title><p>one</p>", at=WHEN, page=True)
    w.response(URL, "<title>Notices</title><p>two</p>", at=WHEN.replace(hour=10), page=True)
    w.commit()
    return _ids(library)


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


@pytest.mark.parametrize("fmt", ["wacz", "folder"])
def test_an_import_of_an_export_keeps_the_identifier_its_citations_give(
    library: Library, tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The identifier names the library, which an export did not carry: the same capture,
    imported into another library, was cited as ``urn:archiver:OTHER:UID``, and a reader of
    a deposited .bib could not find it there."""
    first, second = _captures(library)
    cited = {citation(library, sid).archive_id for sid in (first, second)}
    dest = tmp_path / ("all.wacz" if fmt == "wacz" else "all")
    export(library, Selection(), dest, fmt=fmt)
    listed = _listed(dest, fmt)
    assert {p["urn"] for p in listed} == cited

    with Library.open(tmp_path / "other", create=True) as other:
        [outcome] = import_paths(other, [dest]).outcomes
        assert outcome.state is OutcomeState.IMPORTED, outcome.reason
        ids = _ids(other)
        assert {citation(other, sid).archive_id for sid in ids} == cited
        for urn in cited:
            assert citation(other, urn).archive_id == urn
        urn = sorted(cited)[0]
        assert cli.main(["--library", str(other.root), "cite", urn, "--format", "bibtex"]) == 0
        assert f"eprint = {{{urn}}}" in capsys.readouterr().out
        # exported again, from this library, they keep it
        again = tmp_path / ("again.wacz" if fmt == "wacz" else "again")
        export(other, Selection(), again, fmt=fmt)
        assert {p["urn"] for p in _listed(again, fmt)} == cited


def test_a_capture_given_a_new_uid_on_import_is_found_by_its_identifier(
    library: Library, tmp_path: Path
) -> None:
    first, _ = _captures(library)
    r = citation(library, first)
    dest = tmp_path / "all.wacz"
    export(library, Selection(), dest)
    with Library.open(tmp_path / "other", create=True) as other:
        mine = _captures(other)[0]  # a capture of its own that has the uid already
        with other.write() as s:
            from archiver_app.store.models import Snapshot

            snap = s.get(Snapshot, mine)
            assert snap is not None
            snap.uid = r.uid
        import_paths(other, [dest], collection="again")
        found = citation(other, r.archive_id)
        assert found.archive_id == r.archive_id and found.uid != r.uid
        assert citation(other, mine).archive_id == f"urn:archiver:{other.id}:{r.uid}"


def _listed(dest: Path, fmt: str) -> list[dict[str, object]]:
    if fmt == "wacz":
        with zipfile.ZipFile(dest) as zf:
            raw = zf.read("pages/pages.jsonl")
    else:
        raw = (dest / "pages.jsonl").read_bytes()
    return [json.loads(line) for line in raw.splitlines()[1:]]


def _ids(lib: Library) -> list[int]:
    from archiver_app.store.models import Snapshot

    with lib.session() as s:
        return list(s.scalars(s.query(Snapshot.id).order_by(Snapshot.id).statement))


def test_a_recorded_identifier_is_found_on_postgresql_too(
    postgres_url: str, tmp_path: Path
) -> None:
    lib = Library.open(tmp_path / "shared", create=True, database_url=postgres_url)
    try:
        first, _ = _captures(lib)
        urn = "urn:archiver:0f0e0d0c-0000-4000-8000-000000000000:20260302T093015Z-00000000"
        with lib.write() as s:
            from archiver_app.store.models import Snapshot

            snap = s.get(Snapshot, first)
            assert snap is not None
            snap.provenance = {"imported_from": "x.wacz", "urn": urn}
        assert citation(lib, urn).archive_id == urn
        assert citation(lib, first).archive_id == urn
    finally:
        lib.close()
