"""``archiver verify`` and ``archiver drives verify --laptop`` agree on an accepted edition:
a member's file found altered or missing flags the edition for review, whichever found it;
it stays accepted and frozen until a person reopens it."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver_app import cli
from archiver_app.api.deletion import DeleteCode
from archiver_app.editions.service import frozen_holders
from archiver_app.editions.states import EditionState, TransitionCode
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
def test_a_damaged_member_found_by_either_verify_flags_the_edition_for_review(
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
    assert e.state is EditionState.RESEARCH_READY and e.frozen and e.flagged
    assert "verify found 1 damaged or missing file on this computer" in (e.review_note or "")


def _member_ids(library: Library) -> list[int]:
    return sorted(t.snapshot_id for t in library.editions.coverage("c-2024").targets
                  if t.snapshot_id is not None)  # fmt: skip


def test_a_flagged_edition_stays_frozen_until_a_person_reopens_it(
    library: Library, member_warc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    members = _member_ids(library)
    _alter(member_warc)
    assert cli.main(["--library", str(library.root), "verify"]) == 1
    root = str(library.root)
    assert cli.main(["--library", root, "edition", "show", "c-2024"]) == 0
    assert "flagged for review, still accepted and frozen: verify found" in (
        capsys.readouterr().out
    )

    result, _ = library.snapshots.delete(members)
    assert [o.code for o in result.outcomes] == [DeleteCode.FROZEN] * 2
    with library.session() as s:
        assert frozen_holders(s, members) == dict.fromkeys(members, "c-2024")  # offload's test
    assert library.editions.choose_member("c-2024", "https://example.org/page0", members[0]).refused

    cleared = library.editions.accept("c-2024")  # looked at it: keep it accepted
    assert cleared.transition.code is TransitionCode.CLEARED
    e = library.editions.get("c-2024")
    assert e.state is EditionState.RESEARCH_READY and not e.flagged and e.review_note is None

    member_warc.unlink()  # flagged again, then reopened on purpose: now it is unfrozen
    assert cli.main(["--library", root, "verify"]) == 1
    assert not library.editions.reopen("c-2024").refused
    e = library.editions.get("c-2024")
    assert e.state is EditionState.NEEDS_REVIEW and not e.frozen
    assert "flagged: verify found" in (e.review_note or "")


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
