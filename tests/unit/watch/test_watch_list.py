"""What `watch list` and `job show` say of a watch: its browser
profile and ignored text, and "now" for a first capture not made yet."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import update

from archiver_app import cli
from archiver_app.library import Library
from archiver_app.store.models import Job

PAGE = "http://127.0.0.1:18473/watch/page.html"


def _out(library: Library, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert cli.main(["--library", str(library.root), *args]) == 0
    return capsys.readouterr().out


def test_list_shows_profile_ignored_text_and_a_first_capture_due_now(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    library.profiles.create("site")
    plain = library.jobs.watch([PAGE], schedule="daily", ignore=[r"^Visitors today: \d+$"])
    logged = library.jobs.watch([PAGE], schedule="daily", profile="site")
    listed = _out(library, capsys, "watch", "list")
    first, second = listed.split(f"{logged:>5}  ")
    assert f"{plain:>5}  every day at 03:00 UTC" in first
    assert "next now (first capture)" in first and "next now (first capture)" in second
    assert r"ignored in comparisons: '^Visitors today: \d+$'" in first
    assert "profile" not in first and "in browser profile site" in second
    with library.write() as s:  # as after its first capture: its next slot
        s.execute(update(Job).where(Job.id == plain).values(status="indexed"))
    rows = {w.job_id: w for w in library.jobs.watches()}
    assert not rows[plain].first_capture_due and rows[logged].first_capture_due
    assert "next now" not in _out(library, capsys, "watch", "list").split(f"{logged:>5}")[0]


def test_job_show_of_a_watch_shows_its_ignored_text(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    job = library.jobs.watch([PAGE], schedule="hourly", ignore=["Updated .*"])
    shown = _out(library, capsys, "job", "show", str(job))
    assert "watch:     every hour" in shown and "ignored in comparisons: 'Updated .*'" in shown
    assert "ignore URLs []" in shown  # the crawl's URL patterns, named as such
    data = json.loads(_out(library, capsys, "job", "show", str(job), "--json"))
    assert data["watch"] == {"job_id": job, "schedule": "hourly", "ignore": ["Updated .*"]}
    other = library.jobs.watch(["https://b.example/"], schedule="daily")
    library.jobs.set_schedule(other, None)
    assert json.loads(_out(library, capsys, "job", "show", str(other), "--json"))["watch"] is None


def test_an_empty_ignore_clears_the_ignored_text_and_is_never_stored(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    """`watch job N --ignore ''` alone clears the watch's ignored text (its schedule
    stays); an empty pattern among others, or given to `watch add`, is refused."""
    from archiver_app.compare import compile_ignore_patterns

    job = library.jobs.watch([PAGE], schedule="hourly", ignore=["Updated .*"])
    said = _out(library, capsys, "watch", "job", str(job), "--ignore", "")
    assert "its comparisons leave nothing out" in said
    [row] = library.jobs.watches()
    assert (row.ignore, row.schedule) == ((), "hourly")
    assert "ignored in comparisons" not in _out(library, capsys, "watch", "list")
    root = ["--library", str(library.root)]
    assert cli.main([*root, "watch", "job", str(job), "--ignore", "", "--ignore", "x"]) == 2
    assert "--ignore '' clears the ignored text: give it alone" in capsys.readouterr().err
    assert cli.main([*root, "watch", "add", "https://b.example/", "--ignore", ""]) == 2
    assert "an empty ignore pattern leaves nothing out" in capsys.readouterr().err
    assert [w.job_id for w in library.jobs.watches()] == [job] and row.ignore == ()
    assert compile_ignore_patterns(["", "a"]) == compile_ignore_patterns(["a"])  # one kept
