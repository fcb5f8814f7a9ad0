"""``archiver verify`` and ``archiver drives verify --laptop`` agree on an accepted edition:
a member's file found altered or missing puts the edition up for review, whichever found it."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver_app import cli
from archiver_app.editions.states import EditionState
from archiver_app.library import Library
from tests.unit.editions.accepted import accepted_edition


@pytest.fixture
def member_warc(library: Library, tmp_path: Path) -> Path:
    """The WARC of an accepted edition's two members (one imported file)."""
    return accepted_edition(library, tmp_path)


def _alter(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("command", [["verify"], ["drives", "verify", "--laptop"]])
@pytest.mark.parametrize("damage", [_alter, Path.unlink], ids=["altered", "missing"])
def test_a_damaged_member_found_by_either_verify_puts_the_edition_up_for_review(
    library: Library,
    member_warc: Path,
    command: list[str],
    damage: object,
    capsys: pytest.CaptureFixture[str],
) -> None:
    damage(member_warc)  # type: ignore[operator]
    assert cli.main(["--library", str(library.root), *command]) == 1
    assert "editions needing review: c-2024" in capsys.readouterr().out
    e = library.editions.get("c-2024")
    assert e.state is EditionState.NEEDS_REVIEW
    assert "verify found 1 damaged or missing file on this computer" in (e.review_note or "")


def test_verify_of_an_intact_edition_leaves_it_accepted(
    library: Library, member_warc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--library", str(library.root), "verify"]) == 0
    assert "editions needing review" not in capsys.readouterr().out
    assert library.editions.get("c-2024").state is EditionState.RESEARCH_READY


def test_verify_json_names_the_editions_to_review(
    library: Library, member_warc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    _alter(member_warc)
    assert cli.main(["--library", str(library.root), "verify", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["editions_to_review"] == ["c-2024"]
