"""Counts and limits on the command line are whole numbers in range, refused by name."""

from __future__ import annotations

import pytest

from archiver_app.cli import main


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["search", "pier", "--limit", "0"], "argument --limit: 0 is less than 1"),
        (["search", "pier", "--limit", "-1"], "argument --limit: -1 is less than 1"),
        (["search", "pier", "--offset", "-2"], "argument --offset: -2 is less than 0"),
        (["search", "pier", "--limit", "ten"], "argument --limit: 'ten' is not a whole number"),
        (["jobs", "--limit", "0"], "argument --limit: 0 is less than 1"),
        (["job", "show", "1", "--log", "-1"], "argument --log: -1 is less than 0"),
    ],
)
def test_out_of_range_counts_are_refused(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2 and said in capsys.readouterr().err
