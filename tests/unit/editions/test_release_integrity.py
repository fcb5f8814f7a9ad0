"""An edition's release carries its members as captured, or it is not written: every file
it reads is checked against its capture-time digest first; bit rot is repaired from a drive,
and a member altered after capture or missing stops the release before anything is written
(a signed WACZ of altered records would verify as intact: the signature covers what was
written, not what was captured)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app import cli
from archiver_app.editions.release import export_edition
from archiver_app.editions.release_check import MembersNotAsCaptured
from archiver_app.editions.states import EditionState
from archiver_app.export.signing import verify_wacz
from archiver_app.library import Library
from archiver_app.mirror import add_destination, run_mirror
from archiver_app.store.models import Snapshot
from tests.unit.editions.accepted import accepted_edition


@pytest.fixture
def member_warc(library: Library, tmp_path: Path) -> Path:
    """The WARC of accepted edition c-2024's two members (one imported file)."""
    return accepted_edition(library, tmp_path)


@pytest.fixture
def out(tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    return folder / "c-2024.wacz"


def _alter(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))


def _release(library: Library, out: Path, *extra: str) -> int:
    return cli.main(["--library", str(library.root), "edition", "export", "c-2024", str(out),
                     *extra])  # fmt: skip


def test_an_altered_member_stops_a_signed_release_before_anything_is_written(
    library: Library, member_warc: Path, out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _alter(member_warc)
    assert _release(library, out, "--sign") == 1
    err = capsys.readouterr().err
    with library.session() as s:
        captures = s.execute(select(Snapshot.id, Snapshot.url).order_by(Snapshot.id)).all()
    rel = member_warc.relative_to(library.root).as_posix()
    assert "edition c-2024 not released: 1 file of its captures is not as captured" in err
    named = ", ".join(f"capture {sid} ({url})" for sid, url in captures)
    assert f"{named}: {rel}: altered after capture" in err
    assert "archiver verify" in err and "archiver edition reopen c-2024" in err
    assert "archiver edition choose c-2024 URL ID" in err
    assert list(out.parent.iterdir()) == []  # no WACZ, no report, no temporary file
    assert library.editions.get("c-2024").state is EditionState.RESEARCH_READY


def test_a_missing_member_file_stops_the_release(
    library: Library, member_warc: Path, out: Path
) -> None:
    member_warc.unlink()
    with pytest.raises(MembersNotAsCaptured, match="missing"):
        export_edition(library, "c-2024", out)
    assert list(out.parent.iterdir()) == []


def test_an_altered_member_leaves_a_release_already_written_as_it_was(
    library: Library, member_warc: Path, out: Path
) -> None:
    assert _release(library, out, "--sign") == 0
    before = {p.name: p.read_bytes() for p in out.parent.iterdir()}
    assert len(before) == 6
    _alter(member_warc)
    assert _release(library, out, "--sign", "--overwrite") == 1
    assert {p.name: p.read_bytes() for p in out.parent.iterdir()} == before


def test_bit_rot_in_a_member_is_repaired_from_a_drive_and_the_release_written(
    library: Library, member_warc: Path, out: Path, tmp_path: Path
) -> None:
    (tmp_path / "shelf").mkdir()
    add_destination(library, tmp_path / "shelf", "shelf")
    assert run_mirror(library).ok
    captured = member_warc.read_bytes()
    _alter(member_warc)
    result = export_edition(library, "c-2024", out, sign=True)
    assert member_warc.read_bytes() == captured
    assert result.wacz.problems == [] and verify_wacz(out).ok
