"""A watch's ignore patterns work: a page whose only change is an ignored counter is not
reported changed because its pixels (and its HTML's bytes) moved with the counter."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from archiver_app.compare import compare_captures, compile_ignore_patterns
from archiver_app.compare.snapshots import screenshot_path
from archiver_app.library import Library
from tests.helpers.snapshots import add_snapshot, write_png

URL = "https://harbour.example/"
PAGE = "Harbour notices\nVisitors today: {n}\nThe ferry leaves at {ferry}."
COUNTER = compile_ignore_patterns([r"^Visitors today: \d+$"])
QUIETED = "not counted as a change: the ignored text explains it"


def _two(library: Library, *, ferry: str = "9:00") -> tuple[int, int]:
    a = add_snapshot(library, URL, title="Harbour", body=PAGE.format(n=12, ferry="9:00"),
                     captured_at=datetime(2026, 3, 1, tzinfo=UTC))  # fmt: skip
    b = add_snapshot(library, URL, title="Harbour", body=PAGE.format(n=97, ferry=ferry),
                     captured_at=datetime(2026, 3, 2, tzinfo=UTC))  # fmt: skip
    shot = screenshot_path(library, b)
    assert shot is not None
    write_png(shot, color="#d53a3a")  # the counter's digits moved some pixels
    return a, b


def test_pixels_alone_do_not_make_a_change_when_text_is_ignored(library: Library) -> None:
    a, b = _two(library)
    plain = compare_captures(library, a, b)
    assert plain.summary.changed  # without patterns, every difference counts

    quiet = compare_captures(library, a, b, ignore=COUNTER)
    assert quiet.text is not None and not quiet.text.changed
    assert quiet.visual is not None and quiet.visual.changed  # still measured and shown
    assert quiet.summary.pixel_share and quiet.summary.pixel_share > 0
    assert not quiet.summary.changed
    assert any(QUIETED in note for note in quiet.notes)


def test_a_real_text_change_still_counts_with_patterns(library: Library) -> None:
    a, b = _two(library, ferry="10:30")
    result = compare_captures(library, a, b, ignore=COUNTER)
    assert result.summary.changed and not any(QUIETED in n for n in result.notes)
    assert result.text is not None and result.text.changed_lines == 1


def test_the_kept_changes_follow_the_watch_s_new_ignored_text(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ignored text added to a watch: its kept comparisons (the Changes list, `watch
    changes`) are made again with it, as `archiver diff` compares, their looks kept."""
    from archiver_app import cli
    from archiver_app.compare.changes import changes_of, recent_changes, record_changes

    watch = library.jobs.watch([URL], schedule="daily")
    _a, b = _two(library)  # only the counter differs
    c = add_snapshot(library, URL, title="Harbour", body=PAGE.format(n=150, ferry="10:30"),
                     captured_at=datetime(2026, 3, 3, tzinfo=UTC))  # fmt: skip
    record_changes(library, [b, c])  # as the watch compared them, with nothing ignored
    before = {r.snapshot_id: r.summary for r in recent_changes(library)}
    assert set(before) == {b, c}

    root = ["--library", str(library.root)]
    assert cli.main([*root, "watch", "job", str(watch), "--ignore", r"^Visitors today: \d+$"]) == 0
    after = {r.snapshot_id: r.summary for r in recent_changes(library)}
    assert changes_of(library, [b, c]) == {b: False, c: True}  # the counter alone: no change
    assert set(after) == {c}
    capsys.readouterr()
    assert cli.main([*root, "diff", str(b), str(c), "--json"]) == 0
    diff = json.loads(capsys.readouterr().out)["summary"]
    assert after[c].text_share == diff["text_share"] != before[c].text_share
    assert after[c].pixel_share == before[c].pixel_share == diff["pixel_share"]
