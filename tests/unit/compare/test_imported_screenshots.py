"""A capture imported from a WACZ or a WARC has no screenshot file, only the ``urn:view:``
record its capture wrote: that record is its screenshot, for the detail pane and the
replay (``lib.snapshots.screenshot``), for comparing captures and for a diff's overlay."""

from __future__ import annotations

from pathlib import Path

from archiver_app.compare.snapshots import compare_captures, screenshot
from archiver_app.library import Library
from tests.helpers.imported import BLUE, RED, import_captures

A = "https://site.example/a"
B = "https://site.example/b"
C = "https://site.example/c"


def test_an_imported_capture_shows_the_screenshot_its_warc_keeps(
    library: Library, tmp_path: Path
) -> None:
    a, b, c = import_captures(library, tmp_path, {A: RED, B: BLUE, C: None})
    assert library.snapshots.screenshot(a) == RED
    assert library.snapshots.screenshot(b) == BLUE  # each page its own, not the folder's
    assert library.snapshots.screenshot(c) is None  # none recorded: none shown
    assert screenshot(library, b) == BLUE
    assert library.snapshots.screenshot_path(a) is None  # (no file of it)


def test_imported_captures_are_compared_by_their_screenshots_too(
    library: Library, tmp_path: Path
) -> None:
    a, b, c = import_captures(library, tmp_path, {A: RED, B: BLUE, C: None})
    compared = compare_captures(library, a, b, any_url=True)
    assert compared.visual is not None and compared.visual.share_changed == 1.0
    assert compared.summary.pixel_share == 1.0
    assert not any("kept no screenshot" in n for n in compared.notes)
    without = compare_captures(library, a, c, any_url=True)
    assert without.visual is None
    assert f"capture {c} kept no screenshot" in without.notes
