"""Counts and limits on the command line are whole numbers in range, refused by name; the
counts `archiver info` prints say what they count."""

from __future__ import annotations

import json

import pytest

from archiver_app.cli import main
from archiver_app.library import Library
from tests.helpers.snapshots import add_snapshot


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["search", "pier", "--limit", "0"], "argument --limit: 0 is less than 1"),
        (["search", "pier", "--limit", "-1"], "argument --limit: -1 is less than 1"),
        (["search", "pier", "--offset", "-2"], "argument --offset: -2 is less than 0"),
        (["search", "pier", "--limit", "ten"], "argument --limit: 'ten' is not a whole number"),
        (["jobs", "--limit", "0"], "argument --limit: 0 is less than 1"),
        (["job", "show", "1", "--log", "-1"], "argument --log: -1 is less than 0"),
        (["migrate", "--batch-size", "0"], "argument --batch-size: 0 is less than 1"),
    ],
)
def test_out_of_range_counts_are_refused(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2 and said in capsys.readouterr().err


def test_info_says_which_snapshots_are_not_complete(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    add_snapshot(library, "https://x.example/a")
    add_snapshot(library, "https://x.example/b", state="failed")
    root = str(library.root)
    assert main(["--library", root, "info"]) == 0
    assert "snapshots:     2 (1 complete, 1 failed)\n" in capsys.readouterr().out
    assert main(["--library", root, "info", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["snapshots"] == 2 and found["snapshot_states"] == {"complete": 1, "failed": 1}


def test_a_job_number_where_an_action_goes_gets_the_command_to_type(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["job", "5"])
    assert capsys.readouterr().err.endswith("(to see job 5: archiver job show 5)\n")
