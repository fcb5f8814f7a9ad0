"""Damaged WACZ files: a WARC in it with a damaged gzip member keeps every other record; a
WACZ cut short is called cut short."""

from __future__ import annotations

from pathlib import Path

from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from tests.helpers.warcs import (
    export_with_a_big_record,
    flip_a_bit_in_the_big_record,
    site,
    write_warc,
)
from tests.unit.importers.test_bad_input import make_wacz


def test_a_flipped_bit_in_a_wacz_warc_skips_only_that_record(
    library: Library, tmp_path: Path
) -> None:
    full = export_with_a_big_record(tmp_path / "full.warc.gz")
    flipped = tmp_path / "flipped.warc.gz"
    spans, bad = flip_a_bit_in_the_big_record(full, flipped)
    wacz = make_wacz(tmp_path / "flipped.wacz", flipped.read_bytes())
    outcome = import_paths(library, [wacz]).outcomes[0]
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert (outcome.records, outcome.pages) == (len(spans) - 1, 100)
    damaged = [p for p in outcome.problems if "gzip member is damaged" in p]
    assert len(damaged) == 1 and f"offset {bad}:" in damaged[0], outcome.problems


def test_a_wacz_cut_short_is_called_cut_short(library: Library, tmp_path: Path) -> None:
    """It was refused with only 'not a zip file (File is not a zip file)'."""
    warc = write_warc(tmp_path / "w.warc.gz", site(3)).read_bytes()
    whole = make_wacz(tmp_path / "whole.wacz", warc).read_bytes()
    cut = tmp_path / "cut.wacz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    outcome = import_paths(library, [cut]).outcomes[0]
    assert outcome.state is OutcomeState.FAILED
    assert "looks cut short" in outcome.reason and "central directory" in outcome.reason
    assert not list((library.root / "collections").rglob("*.warc.gz"))
    # a file that is no zip at all still says so
    other = tmp_path / "other.wacz"
    other.write_bytes(b"not a zip at all\n" * 100)
    assert "not a zip file" in import_paths(library, [other]).outcomes[0].reason
