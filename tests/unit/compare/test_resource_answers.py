"""A resource that loaded before and now answers an error (its image, style, script now
answer 404) is a change, ignore patterns or not, and is named as such: by the comparison,
`archiver diff` (text and --json), a kept summary and `archiver watch changes`."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from sqlalchemy import update

from archiver_app import cli
from archiver_app.compare import compare_captures, compile_ignore_patterns
from archiver_app.compare.changes import recent_changes, record_change
from archiver_app.library import Library
from archiver_app.store.models import Record
from tests.helpers.archive import ArchiveWriter
from tests.helpers.snapshots import add_snapshot

URL = "http://harbour.example/watch/page.html"
BODY = "Harbour notices\nVisitors today: {n}\nThe ferry leaves at 9:00."
COUNTER = [r"^Visitors today: \d+$"]


def _capture(library: Library, day: int, statuses: dict[str, int]) -> int:
    """A capture of URL on ``day`` whose WARC holds its resources with these answers."""
    when = datetime(2026, 3, day, 9, 0, tzinfo=UTC)
    sid = add_snapshot(library, URL, title="Harbour", body=BODY.format(n=day), captured_at=when)
    w = ArchiveWriter(library, f"collections/default/2026/03/day{day}.warc.gz")
    for name, status in statuses.items():
        body = "not found" if status >= 400 else f"the bytes of {name}"
        w.response(f"http://harbour.example/watch/{name}", body, at=when, status=status)
    ids = w.commit()
    with library.write() as s:
        s.execute(update(Record).where(Record.id.in_(ids)).values(snapshot_id=sid))
    return sid


def test_resources_that_now_answer_404_are_a_change_with_ignore_patterns(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _capture(library, 1, {"blue.png": 200, "style.css": 200, "app.js": 304})
    b = _capture(library, 2, {"blue.png": 404, "style.css": 404, "app.js": 500})
    ignore = compile_ignore_patterns(COUNTER)
    result = compare_captures(library, a, b, ignore=ignore)
    assert result.text is not None and not result.text.changed
    answers = result.resources.answers
    assert [(x.url.rsplit("/", 1)[1], x.old_status, x.new_status) for x in answers] == [
        ("app.js", 304, 500),
        ("blue.png", 200, 404),
        ("style.css", 200, 404),
    ]  # fmt: skip
    assert result.summary.changed and result.summary.resources_now_error == 3
    assert not any("not counted" in note for note in result.notes)
    assert compare_captures(library, a, b).summary.changed  # without patterns too

    root = ["--library", str(library.root)]
    assert cli.main([*root, "diff", str(a), str(b), "--ignore", COUNTER[0]]) == 0
    out = capsys.readouterr().out
    assert "\nchanged\n" in out and "no change" not in out
    assert "3 changed (3 now answer an error)" in out
    assert "  now answers 404 (was 200): http://harbour.example/watch/blue.png" in out
    assert "  now answers 500 (was 304): http://harbour.example/watch/app.js" in out
    assert cli.main([*root, "diff", str(a), str(b), "--json", "--ignore", COUNTER[0]]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["changed"] and data["summary"]["resources_now_error"] == 3
    blue = {"url": "http://harbour.example/watch/blue.png", "a_status": 200, "b_status": 404,
            "now_error": True}  # fmt: skip
    assert blue in data["resources"]["answers"]

    kept = record_change(library, b, ignore=ignore)
    assert kept is not None and kept.changed
    [row] = recent_changes(library)
    assert row.summary.resources_now_error == 3  # read back from the records
    assert cli.main([*root, "watch", "changes"]) == 0
    assert "3 resources now answer an error" in capsys.readouterr().out


def test_an_error_answered_twice_or_a_missing_resource(library: Library) -> None:
    """A resource that answered 404 in both captures is no change; one that loaded and is
    no longer asked for at all is (it is missing: "only in A")."""
    a = _capture(library, 1, {"gone.png": 404, "blue.png": 200})
    b = _capture(library, 2, {"gone.png": 404})
    result = compare_captures(library, a, b, ignore=compile_ignore_patterns(COUNTER))
    assert not result.resources.answers and result.summary.resources_now_error == 0
    assert result.resources.removed == ("http://harbour.example/watch/blue.png",)
    assert result.summary.changed


def test_answering_again_is_a_change_but_not_an_error(library: Library) -> None:
    a = _capture(library, 1, {"blue.png": 404})
    b = _capture(library, 2, {"blue.png": 200})
    result = compare_captures(library, a, b, ignore=compile_ignore_patterns(COUNTER))
    assert result.summary.changed and result.summary.resources_now_error == 0
    [answer] = result.resources.answers
    assert (answer.old_status, answer.new_status, answer.now_error) == (404, 200, False)
