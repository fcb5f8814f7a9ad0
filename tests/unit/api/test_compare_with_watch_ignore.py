"""Two captures of a watched page are compared with the watch's ignored text wherever a
person compares them: `archiver diff` (the command `watch changes` suggests) and the
Compare view agree with the Changes list; `--ignore` adds to it, `--no-watch-ignore` shows
the raw comparison."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from sqlalchemy import update

from archiver_app import cli
from archiver_app.compare.changes import recent_changes
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from archiver_app.watch.runner import compare_watched
from tests.helpers.snapshots import add_snapshot

URL = "https://harbour.example/notices"
PAGE = "Harbour notices\nCount: {n}\nThe ferry leaves at {ferry}.\nOpening hours at the quay."


def _watched_pair(library: Library) -> tuple[int, int, int]:
    """A watch with an ignored counter, two of its captures, compared as a run ends."""
    watch = library.jobs.watch([URL], schedule="daily", ignore=[r"^Count: \d+$"])
    ids = [
        add_snapshot(
            library,
            URL,
            title="Notices",
            body=PAGE.format(n=n, ferry=ferry),
            captured_at=datetime(2026, 3, day, tzinfo=UTC),
        )
        for day, n, ferry in ((1, 12, "9:00"), (2, 97, "10:30"))
    ]
    with library.write() as s:
        s.execute(update(Snapshot).where(Snapshot.id.in_(ids)).values(job_id=watch))
    compare_watched(library, watch)
    return watch, ids[0], ids[1]


def test_diff_and_the_api_use_the_watch_s_ignored_text(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    watch, a, b = _watched_pair(library)
    (row,) = recent_changes(library)
    assert row.summary.text_share == pytest.approx(1 / 3)  # the counter left out

    compared = library.snapshots.compare(b, a)
    assert compared.watch is not None and compared.watch.watch_id == watch
    assert compared.watch_applied and compared.patterns == (r"^Count: \d+$",)
    assert compared.comparison.summary.text_share == row.summary.text_share

    raw = library.snapshots.compare(a, b, watch_ignore=False)
    assert not raw.watch_applied and raw.comparison.summary.text_share == pytest.approx(2 / 4)

    root = ["--library", str(library.root)]
    assert cli.main([*root, "diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "text: 1 of 3 lines differ (33.3%)" in out
    assert f"ignored: watch {watch}'s ignored text '^Count: \\d+$'" in out
    assert "--no-watch-ignore" in out
    assert "Count: 97" not in out  # the ignored line is no change

    assert cli.main([*root, "diff", str(a), str(b), "--no-watch-ignore"]) == 0
    out = capsys.readouterr().out
    assert "text: 2 of 4 lines differ (50.0%)" in out and "+ Count: 97" in out
    assert f"watch {watch}'s ignored text '^Count: \\d+$' left in" in out

    assert cli.main([*root, "diff", str(a), str(b), "--ignore", "ferry", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ignore"] == {
        "watch": watch,
        "watch_applied": True,
        "patterns": [r"^Count: \d+$", "ferry"],
    }


def test_captures_of_an_address_nobody_watches_use_only_the_patterns_given(
    library: Library,
) -> None:
    a = add_snapshot(library, URL, body=PAGE.format(n=1, ferry="9:00"),
                     captured_at=datetime(2026, 3, 1, tzinfo=UTC))  # fmt: skip
    b = add_snapshot(library, URL, body=PAGE.format(n=2, ferry="9:00"),
                     captured_at=datetime(2026, 3, 2, tzinfo=UTC))  # fmt: skip
    compared = library.snapshots.compare(a, b)
    assert compared.watch is None and compared.patterns == ()
    assert compared.comparison.summary.changed
    assert not library.snapshots.compare(a, b, ignore=[r"^Count: \d+$"]).comparison.summary.changed
