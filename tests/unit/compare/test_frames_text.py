"""The text of a page's frames counts on both sides of a comparison or on neither."""

from __future__ import annotations

from archiver_app.capture.extract import FRAMES_AT
from archiver_app.compare.frames import same_text
from archiver_app.store.models import Snapshot

OWN = "Harbour notices.\n\nFerries run hourly."
FRAMED = OWN + "\n\nTide tables: high water 06:10."


def _snap(sid: int, at: int | None) -> Snapshot:
    return Snapshot(id=sid, provenance={} if at is None else {FRAMES_AT: at})


def test_only_one_side_holding_the_frames_text_leaves_it_out() -> None:
    notes: list[str] = []
    old, new = same_text(_snap(1, None), OWN, _snap(2, len(OWN)), FRAMED, notes)
    assert (old, new) == (OWN, OWN)
    assert notes == [
        "capture 1 holds no text of the page's frames (made before frames were read, or "
        "imported): capture 2's is left out"
    ]
    notes.clear()  # the newer one unmarked (imported): the same
    assert same_text(_snap(1, len(OWN)), FRAMED, _snap(2, None), OWN, notes) == (OWN, OWN)


def test_the_frames_text_is_kept_where_both_sides_can_hold_it() -> None:
    notes: list[str] = []
    # an unmarked capture whose text ends with the same frames' text holds it too
    assert same_text(_snap(1, None), FRAMED, _snap(2, len(OWN)), FRAMED, notes) == (
        FRAMED,
        FRAMED,
    )
    # both marked: a frame that went away is a change
    assert same_text(_snap(1, len(OWN)), FRAMED, _snap(2, len(OWN)), OWN, notes) == (FRAMED, OWN)
    # neither marked: compared as they are
    assert same_text(_snap(1, None), OWN, _snap(2, None), FRAMED, notes) == (OWN, FRAMED)
    assert notes == []
