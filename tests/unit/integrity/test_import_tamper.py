"""Importing a tampered WACZ: each difference named, the signature's state said, and every
record that still reads kept.

The WACZ is a real signed export of a library; each test changes it the way a forger (or a
damaged copy) would, imports it into a second library, and reads the outcome the job keeps
and the command prints.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app import cli
from archiver_app.export import Selection, export
from archiver_app.export.signing import Difference
from archiver_app.importers.outcome import FileOutcome, OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.importers.warcs import import_warc_file
from archiver_app.jobs.kinds import to_plain
from archiver_app.library import Library
from archiver_app.search import Query, search
from archiver_app.store.models import Snapshot
from tests.helpers.warcs import site, write_warc

WARC = "archive/data.warc.gz"


@pytest.fixture
def signed_wacz(library: Library, tmp_path: Path) -> Path:
    import_warc_file(library, write_warc(tmp_path / "s.warc.gz", site(3)), collection="c")
    out = tmp_path / "signed.wacz"
    export(library, Selection(collection="c"), out, sign=True)
    return out


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _rewrite(path: Path, change: dict[str, bytes]) -> None:
    entries = {**_members(path), **change}
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)


def _import(tmp_path: Path, wacz: Path) -> FileOutcome:
    """The import's outcome."""
    with Library.open(tmp_path / "other", create=True) as lib:
        [outcome] = import_paths(lib, [wacz]).outcomes
    return outcome


def test_an_intact_signed_wacz_says_so(signed_wacz: Path, tmp_path: Path) -> None:
    outcome = _import(tmp_path, signed_wacz)
    assert outcome.state is OutcomeState.IMPORTED and outcome.records == 6
    assert outcome.package is not None and not outcome.package.tampered
    assert outcome.package.signed and outcome.package.signature_valid
    [line] = outcome.problems
    assert line.startswith("signed with key ") and line.endswith("the signature is valid")


def test_a_changed_warc_byte_is_named_and_the_good_records_kept(
    signed_wacz: Path, tmp_path: Path
) -> None:
    warc = bytearray(_members(signed_wacz)[WARC])
    # A byte inside the last record's compressed body: that member no longer inflates.
    last = bytes(warc).rindex(b"\x1f\x8b\x08")
    warc[last + 40] ^= 0xFF
    _rewrite(signed_wacz, {WARC: bytes(warc)})
    outcome = _import(tmp_path, signed_wacz)
    assert outcome.state is OutcomeState.IMPORTED
    assert 0 < outcome.records < 6  # the damaged record is lost, the others are kept
    assert outcome.package is not None
    assert [(f.kind, f.name) for f in outcome.package.differences] == [(Difference.CHANGED, WARC)]
    assert outcome.problems[0] == (
        f"differs from its datapackage.json: {WARC} was changed (its hash differs)"
    )
    # The signed datapackage itself is untouched: the signature is still valid, and the
    # line says what it is worth here.
    assert outcome.package.signature_valid
    assert outcome.problems[1].endswith(
        "the signature is valid, but the package is NOT as signed: it was altered after signing"
    )
    # The job keeps it (the result is stored as plain data).
    plain = to_plain(outcome)
    assert plain["package"]["findings"][0]["kind"] == "changed"


def test_a_byte_changed_in_the_zip_itself_keeps_the_records_that_read(
    signed_wacz: Path, tmp_path: Path
) -> None:
    """A byte flipped on disk inside the stored WARC (a bad sector, not a rewritten
    package): the zip's CRC no longer matches, and the import kept nothing."""
    with zipfile.ZipFile(signed_wacz) as zf:
        info = zf.getinfo(WARC)
        assert info.compress_type == zipfile.ZIP_STORED
    raw = bytearray(signed_wacz.read_bytes())
    h = info.header_offset  # the local header: 30 bytes, then the name and the extra field
    name_len = int.from_bytes(raw[h + 26 : h + 28], "little")
    extra_len = int.from_bytes(raw[h + 28 : h + 30], "little")
    start = h + 30 + name_len + extra_len
    last = bytes(raw[start : start + info.compress_size]).rindex(b"\x1f\x8b\x08")
    raw[start + last + 40] ^= 0xFF  # inside the last record's compressed body
    signed_wacz.write_bytes(bytes(raw))
    outcome = _import(tmp_path, signed_wacz)
    assert outcome.state is OutcomeState.IMPORTED and 0 < outcome.records < 6
    assert outcome.package is not None
    assert [(f.kind, f.name) for f in outcome.package.differences] == [
        (Difference.CHANGED, WARC)  # its bytes read whole, altered (was "cannot be read")
    ]


def test_a_wacz_that_lost_its_datapackage_keeps_its_records(
    signed_wacz: Path, tmp_path: Path
) -> None:
    """Without datapackage.json nothing can be checked, but the WARCs are there: read and
    said so (it was refused as "not a WACZ", every record left behind)."""
    members = _members(signed_wacz)
    with zipfile.ZipFile(signed_wacz, "w") as zf:
        for name, data in members.items():
            if not name.startswith("datapackage"):
                zf.writestr(name, data)
    outcome = _import(tmp_path, signed_wacz)
    assert outcome.state is OutcomeState.IMPORTED and outcome.records == 6
    assert outcome.problems[0] == (
        "no datapackage.json: its WARCs were read unchecked (no hashes to check them by)"
    )


def test_an_added_file_is_named(signed_wacz: Path, tmp_path: Path) -> None:
    _rewrite(signed_wacz, {"archive/extra.warc.gz": _members(signed_wacz)[WARC]})
    outcome = _import(tmp_path, signed_wacz)
    assert outcome.state is OutcomeState.IMPORTED and outcome.records == 6  # not read
    assert outcome.package is not None
    assert [(f.kind, f.name) for f in outcome.package.differences] == [
        (Difference.ADDED, "archive/extra.warc.gz")
    ]


def test_an_edited_datapackage_breaks_its_hash_and_the_signature(
    signed_wacz: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = json.loads(_members(signed_wacz)["datapackage.json"])
    package["title"] = "Something else"
    _rewrite(signed_wacz, {"datapackage.json": json.dumps(package).encode()})
    root = str(tmp_path / "cli-lib")
    assert cli.main(["import", str(signed_wacz), "--library", root]) == 0
    out = capsys.readouterr().out
    assert "differs from its datapackage.json: datapackage.json was changed" in out
    assert "the signature is NOT valid" in out
    outcome = _import(tmp_path, signed_wacz)
    assert outcome.records == 6
    assert outcome.package is not None and not outcome.package.signature_valid
    kinds = {f.kind for f in outcome.package.differences}
    assert kinds == {Difference.PACKAGE_CHANGED, Difference.SIGNATURE_MISMATCH}


@pytest.mark.parametrize("loss", ["missing", "damaged"])
def test_a_lost_signature_file_is_said_under_the_files_line(
    signed_wacz: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], loss: str
) -> None:
    """A signed export whose datapackage-digest.json was deleted (or damaged on disk):
    `import --json` had it among the findings, but the command's lines gave no signature
    state at all (deleted: no line at all). They now end as verify-export says it."""
    from tests.unit.importers.test_wacz_damage import _flip_inside

    if loss == "missing":
        members = _members(signed_wacz)
        with zipfile.ZipFile(signed_wacz, "w") as zf:
            for name, data in members.items():
                if name != "datapackage-digest.json":
                    zf.writestr(name, data)
        wacz, said = signed_wacz, "is missing"
    else:
        wacz = _flip_inside(signed_wacz, "datapackage-digest.json", tmp_path / "d.wacz")
        said = "cannot be read"
    root = str(tmp_path / "cli-lib")
    assert cli.main(["import", str(wacz), "--library", root]) == 0
    out = capsys.readouterr().out.splitlines()
    line = f"not signed as it is: its signature file datapackage-digest.json {said}"
    assert out[0].startswith("imported") and any(o.endswith(f"- {line}") for o in out), out
    outcome = _import(tmp_path, wacz)
    assert outcome.records == 6 and outcome.problems[-1] == line, outcome.problems


def test_a_changed_pages_list_gives_no_titles_or_texts(signed_wacz: Path, tmp_path: Path) -> None:
    """Its titles edited in pages.jsonl: import said the list was changed, yet each page
    took the forged title for good (and the list's text for search). A list not as signed
    now says only which records are pages: titles and texts are those the WARC records."""
    listed = _members(signed_wacz)["pages/pages.jsonl"].decode().splitlines()
    forged = [json.loads(line) for line in listed]
    for item in forged[1:]:
        item["title"], item["text"] = "Forged title", "forged counterfeit words"
    _rewrite(signed_wacz, {"pages/pages.jsonl": "".join(json.dumps(i) + "\n" for i in forged)
                           .encode()})  # fmt: skip
    with Library.open(tmp_path / "other", create=True) as lib:
        [outcome] = import_paths(lib, [signed_wacz]).outcomes
        with lib.session() as s:
            titles = sorted(s.scalars(select(Snapshot.title)))
        found = search(lib, Query("counterfeit", prefix_last=False))
    assert outcome.state is OutcomeState.IMPORTED and outcome.pages == 3
    assert titles == [f"Page {n} of example.org" for n in range(3)]
    assert not found
    assert outcome.problems[-1] == (
        "its pages list cannot be trusted: pages/pages.jsonl was changed (its hash differs); "
        "the titles and texts it gives were not used (each page has the title and text its "
        "WARC records)"
    )
    assert outcome.notes == ["its pages list gave back 3 pages to collection 'c'"]
