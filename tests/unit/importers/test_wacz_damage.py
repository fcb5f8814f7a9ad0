"""A damaged WACZ keeps what is whole in it: a WARC with a damaged gzip member keeps every
other record."""

from __future__ import annotations

from pathlib import Path

from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from tests.helpers.warcs import export_with_a_big_record, flip_a_bit_in_the_big_record
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
