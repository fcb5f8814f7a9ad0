"""What a capture's title and HTTP status say in a comparison: a title change is a change,
shown old -> new by `archiver diff`, its --json and `archiver watch changes`."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from archiver_app import cli
from archiver_app.compare import compare_captures
from archiver_app.compare.changes import recent_changes, record_change
from archiver_app.library import Library
from tests.helpers.snapshots import add_snapshot

URL = "https://harbour.example/notices"
BODY = "Harbour notices\nThe ferry leaves at 9:00."


def _two(library: Library, old_title: str, new_title: str) -> tuple[int, int]:
    a = add_snapshot(library, URL, title=old_title, body=BODY,
                     captured_at=datetime(2026, 3, 1, 9, 0, tzinfo=UTC))  # fmt: skip
    b = add_snapshot(library, URL, title=new_title, body=BODY,
                     captured_at=datetime(2026, 3, 2, 9, 0, tzinfo=UTC))  # fmt: skip
    return a, b


def test_a_title_change_alone_is_a_change(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _two(library, "Harbour notices", "Harbour closed")
    result = compare_captures(library, a, b)
    assert result.text is not None and not result.text.changed
    assert result.summary.changed and result.summary.title_changed
    assert (result.old.title, result.new.title) == ("Harbour notices", "Harbour closed")

    root = ["--library", str(library.root)]
    assert cli.main([*root, "diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "\nchanged\n" in out
    assert 'title: "Harbour notices" -> "Harbour closed"' in out
    assert cli.main([*root, "diff", str(a), str(b), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["changed"] is True and data["summary"]["title_changed"] is True
    assert (data["a"]["title"], data["b"]["title"]) == ("Harbour notices", "Harbour closed")

    summary = record_change(library, b)
    assert summary is not None and summary.changed
    [row] = recent_changes(library)
    assert row.summary.title_changed and row.summary.old_title == "Harbour notices"
    assert cli.main([*root, "watch", "changes"]) == 0
    assert 'title "Harbour notices" -> "Harbour closed"' in capsys.readouterr().out


def test_a_title_differing_in_white_space_only_is_no_change(library: Library) -> None:
    a, b = _two(library, "Harbour  notices ", "Harbour notices")
    result = compare_captures(library, a, b)
    assert not result.summary.changed and not result.summary.title_changed


def _answered(library: Library, snapshot_id: int, status: int) -> None:
    from archiver_app.store.models import Snapshot

    with library.write() as s:
        snap = s.get(Snapshot, snapshot_id)
        assert snap is not None
        snap.http_status = status


def test_a_page_that_starts_answering_an_error_says_so(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _two(library, "Harbour notices", "Harbour notices")
    _answered(library, b, 404)
    result = compare_captures(library, a, b)
    assert result.summary.changed and result.summary.status_changed and result.summary.now_error
    assert (result.old.http_status, result.new.http_status) == (200, 404)

    root = ["--library", str(library.root)]
    assert cli.main([*root, "diff", str(a), str(b)]) == 0  # compared: not an input error
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "A answered HTTP 200, B answered HTTP 404 (an error)"
    assert cli.main([*root, "diff", str(a), str(b), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["a"]["http_status"], data["b"]["http_status"]) == (200, 404)
    assert data["summary"]["status_changed"] is True

    record_change(library, b)
    assert cli.main([*root, "watch", "changes"]) == 0
    assert "(HTTP 200 -> 404 (now an error), text 0%" in capsys.readouterr().out


def test_two_ok_answers_are_not_named_in_the_header(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _two(library, "Harbour notices", "Harbour notices")
    assert cli.main(["--library", str(library.root), "diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "answered" not in out and "no change between these captures" in out
