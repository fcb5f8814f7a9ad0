"""A WACZ cut short: the entries before the cut are kept, and the part of the entry the
file ends inside (a WARC's whole records, a pages list's whole lines); the import says
what was kept and what was lost."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from archiver_app.export import Selection, export
from archiver_app.importers.outcome import FileOutcome, OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.store.models import File, Record, Snapshot
from tests.helpers.warcs import site, write_warc
from tests.unit.importers.test_bad_input import make_wacz

PAGES = 12


@pytest.fixture
def full(library: Library, tmp_path: Path) -> Path:
    import_warc_file(library, write_warc(tmp_path / "w.warc.gz", site(PAGES)))
    out = tmp_path / "full.wacz"
    export(library, Selection(), out)
    return out


def _import_cut(tmp_path: Path, full: Path, at: int, name: str) -> FileOutcome:
    cut = tmp_path / f"{name}.wacz"
    cut.write_bytes(full.read_bytes()[:at])
    with Library.open(tmp_path / name, create=True) as lib:
        return import_paths(lib, [cut]).outcomes[0]


def _start(full: Path, name: str) -> int:
    """The offset of entry ``name``'s first byte of data."""
    with zipfile.ZipFile(full) as zf:
        info = zf.getinfo(name)
    return info.header_offset + 30 + len(info.filename) + len(info.extra)


def _inside(full: Path, name: str) -> int:
    """An offset in the middle of entry ``name``'s data."""
    with zipfile.ZipFile(full) as zf:
        size = zf.getinfo(name).compress_size
    return _start(full, name) + size // 2


def test_a_wacz_cut_inside_its_warc_keeps_the_whole_records(full: Path, tmp_path: Path) -> None:
    """It was refused whole ('the file looks cut short ... copy or download it again', 0
    records) though half its WARC's records were there."""
    outcome = _import_cut(tmp_path, full, _inside(full, "archive/data.warc.gz"), "warc")
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert 0 < outcome.pages < PAGES and outcome.records >= 2 * outcome.pages - 1
    said = outcome.problems[0]
    assert said.startswith("warc.wacz: the file is cut short"), outcome.problems
    assert "it ends inside 'archive/data.warc.gz', whose first" in said
    assert "whatever came after in the zip is lost" in said
    assert any("the file ends inside a record" in p for p in outcome.problems)


def _listing(root: Path) -> set[str]:
    """Every path under ``root`` but the lock folder (which the import's locks, released,
    leave empty)."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*")} - {".locks"}


@pytest.mark.parametrize("into", [200, 300, 444])  # the WARC's first gzip member is 445 bytes
def test_a_wacz_cut_before_its_first_whole_record_leaves_nothing(
    full: Path, tmp_path: Path, into: int
) -> None:
    """The import failed ('the file ends inside a record') but left the WARC's copy (the
    bytes there were) and its sidecar in a new folder of the library."""
    cut = tmp_path / "early.wacz"
    cut.write_bytes(full.read_bytes()[: _start(full, "archive/data.warc.gz") + into])
    root = tmp_path / "lib"
    with Library.open(root, create=True) as lib:
        before = _listing(root)
        outcome = import_paths(lib, [cut]).outcomes[0]
        assert outcome.state is OutcomeState.FAILED
        assert "data.warc.gz offset 0: the file ends inside" in outcome.reason, outcome.reason
        assert outcome.folder is None
        assert _listing(root) == before
    assert not any((root / ".locks").iterdir())
    with Library.open(root) as lib, lib.session() as s:
        assert s.query(File).count() == s.query(Record).count() == 0
        assert s.query(Snapshot).count() == 0


@pytest.mark.parametrize(
    ("where", "kept"),
    [("indexes/index.cdx", 1), ("pages/pages.jsonl", 2), ("datapackage.json", 3)],
)
def test_a_wacz_cut_in_a_later_entry_keeps_every_record(
    full: Path, tmp_path: Path, where: str, kept: int
) -> None:
    outcome = _import_cut(tmp_path, full, _inside(full, where), "later")
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert outcome.pages == PAGES  # the records decide which are pages, when the list is cut
    said = outcome.problems[0]
    assert said.startswith("later.wacz: the file is cut short"), outcome.problems
    assert f"{kept} entries before the cut were read whole" in said or kept == 1
    assert f"'{where}'" in said
    if where == "pages/pages.jsonl":
        assert any("its pages list (pages/pages.jsonl) is cut short" in p for p in outcome.problems)


def test_a_wacz_cut_in_its_central_directory_keeps_everything(full: Path, tmp_path: Path) -> None:
    data = full.read_bytes()
    outcome = _import_cut(tmp_path, full, data.index(b"PK\x01\x02") + 40, "central")
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert outcome.pages == PAGES
    assert "entries were read from their own headers" in outcome.problems[0]


def test_a_deflated_warc_cut_short_keeps_what_decompresses(
    library: Library, tmp_path: Path
) -> None:
    warc = write_warc(tmp_path / "w.warc", site(PAGES), gz=False).read_bytes()
    whole = make_wacz(tmp_path / "whole.wacz", warc, compress_warc=True)
    cut = tmp_path / "cut.wacz"
    cut.write_bytes(whole.read_bytes()[: _inside(whole, "archive/data.warc.gz")])
    outcome = import_paths(library, [cut]).outcomes[0]
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert 0 < outcome.pages < PAGES
    assert "were decompressed as far as they go" in outcome.problems[0], outcome.problems
