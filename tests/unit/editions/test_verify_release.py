"""``archiver verify-export`` run with a library names the edition release a file is, and
says plainly when a file holds a release's content in other bytes: a copy whose zip
header was damaged verified "intact" though its SHA-256 was not the one cited."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app import cli
from archiver_app.library import Library
from archiver_app.store.models import Job
from tests.unit.editions.accepted import accepted_edition


@pytest.fixture
def release(library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A signed release of accepted edition c-2024, the one `cite` quotes."""
    accepted_edition(library, tmp_path)
    out = tmp_path / "rel" / "c-2024.wacz"
    out.parent.mkdir()
    args = ["--library", str(library.root), "edition", "export", "c-2024", str(out), "--sign"]
    assert cli.main(args) == 0
    capsys.readouterr()
    return out


def _verify(library: Library, wacz: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    code = cli.main(["--library", str(library.root), "verify-export", str(wacz)])
    out = capsys.readouterr().out.splitlines()
    assert code == (0 if out[-1].endswith(": intact (3 files checked)") else 1), out
    return out


def test_the_release_cited_is_named_and_a_copy_of_other_bytes_is_not_intact(
    library: Library, release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cited = hashlib.sha256(release.read_bytes()).hexdigest()
    out = _verify(library, release, capsys)
    assert out[-3:-1] == [
        f"sha256 {cited}",
        "release: this is the file of the signed release of edition c-2024 written "
        f"{library.clock():%Y-%m-%d %H:%M} UTC as c-2024.wacz, the one `archiver cite c-2024` "
        "quotes",
    ]

    copy = tmp_path / "t.wacz"  # a byte of the first local header ("version needed")
    data = bytearray(release.read_bytes())
    data[5] ^= 0x01
    copy.write_bytes(bytes(data))
    out = _verify(library, copy, capsys)
    assert out[-2].startswith(
        "release: its contents are intact but the file is not byte-identical to the release "
        f"cited (SHA-256 {cited}): the signed release of edition c-2024 written "
    ), out
    assert out[-1] == (
        f"{copy}: NOT intact as a file: the zip's headers of an entry disagree and it is not "
        "byte-identical to the release on record (said above); the content is as signed "
        "(3 files checked)"
    )

    copy.write_bytes(release.read_bytes() + b"\0")  # no header looks at it: only the bytes
    out = _verify(library, copy, capsys)
    assert out[-1] == (
        f"{copy}: NOT intact as a file: it is not byte-identical to the release on record "
        "(said above); the content is as signed (3 files checked)"
    )


def test_an_older_record_takes_its_content_from_the_release_file(
    library: Library, release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A release recorded before the records kept the hash of its datapackage.json."""
    with library.write() as s:
        job = s.scalars(select(Job).where(Job.kind == "export")).one()
        job.result = {k: v for k, v in job.result.items() if k != "package_hash"}
    with library.session() as s:
        assert "package_hash" not in s.scalars(select(Job.result)).one()
    copy = tmp_path / "copy.wacz"
    copy.write_bytes(release.read_bytes() + b"\0")
    out = _verify(library, copy, capsys)
    assert "release: its contents are intact but the file is not byte-identical" in out[-2]


def test_a_file_of_no_release_on_record_says_so(
    library: Library, release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app.export import Selection, export

    other = tmp_path / "other.wacz"
    export(library, Selection(), other)
    out = _verify(library, other, capsys)
    assert out[-2] == (
        f"release: no release on record in library {library.root} has this SHA-256 or this content"
    )
    assert out[-1] == f"{other}: intact (3 files checked)"
