"""Counts and limits on the command line are whole numbers in range, refused by name; a
blank collection is refused by every command; the counts `archiver info` prints say what
they count."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archiver_app.cli import _all_subparsers, build_parser, main
from archiver_app.commands import collection_slug
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


@pytest.mark.parametrize(
    "argv",
    [
        ["import", "--collection", "", "x.wacz"],
        ["import", "--collection", " ", "--archivebox", "abox"],
        ["capture", "--collection", "", "https://example.org/"],
        ["crawl", "--collection", "", "https://example.org/"],
        ["browse", "--collection", "", "https://example.org/"],
        ["watch", "add", "--collection", "", "https://example.org/"],
        ["search", "--collection", "", "pier"],
        ["export", "--collection", "", "-o", "out.wacz"],
        ["policy", "--collection", ""],
        ["edition", "list", "--collection", ""],
        ["edition", "create", "", "e", "--year", "2024"],
    ],
)
def test_a_blank_collection_is_refused_by_every_command(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`archiver import --collection "" x.wacz` said every page went into '' as asked, and
    put them where the pages list said; search, policy and edition list read it as no
    collection given. Each is refused as `capture` refuses it, before anything is done."""
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--library", str(tmp_path / "lib")])
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert "invalid collection name " in err and "use lower-case letters" in err


def test_every_collection_argument_is_checked_the_one_way() -> None:
    """A command added later with a collection argument refuses a blank one too."""
    named = [
        (parser.prog, action)
        for parser in _all_subparsers(build_parser())
        for action in parser._actions
        if action.dest == "collection"
    ]
    assert len(named) >= 10
    assert [prog for prog, action in named if action.type is not collection_slug] == []


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
