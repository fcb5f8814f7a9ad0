"""An edition's reports are named after the release's WACZ, not after the edition: a
release's files go together, and a draft never replaces an accepted release's reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver_app import cli
from archiver_app.editions.release import release_paths
from archiver_app.jobs.operations import clean_up_export
from archiver_app.library import Library
from tests.unit.editions.accepted import accepted_edition

REPORTS = (".coverage.json", ".coverage.md", ".targets.csv", ".bib", ".csl.json")


@pytest.fixture
def root(library: Library, tmp_path: Path) -> str:
    """Accepted edition c-2024 of two imported pages."""
    accepted_edition(library, tmp_path)
    return str(library.root)


def _release(root: str, out: Path, *extra: str) -> int:
    return cli.main(["--library", root, "edition", "export", "c-2024", str(out), *extra])


def test_the_reports_take_the_wacz_name() -> None:
    assert [p.name for p in release_paths(Path("out/x.wacz"))] == [f"x{s}" for s in REPORTS]
    assert release_paths(Path("out/x.wacz"))[0].parent == Path("out")
    # the name the app proposes, the edition's: the same files as before
    assert [p.name for p in release_paths(Path("c-2024.wacz"))] == [f"c-2024{s}" for s in REPORTS]


def test_a_release_to_another_name_beside_one_named_after_the_edition(
    root: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert _release(root, out / "c-2024.wacz") == 0
    assert _release(root, out / "x.wacz") == 0  # was: "out/c-2024.coverage.json exists"
    printed = capsys.readouterr().out
    assert all(f"wrote {out / f'x{s}'}" in printed for s in REPORTS)
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(f"{stem}{s}" for stem in ("c-2024", "x") for s in (".wacz", *REPORTS))


def test_a_draft_release_leaves_the_accepted_release_beside_it_whole(
    root: str, library: Library, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert _release(root, out / "c-2024.wacz") == 0
    accepted = {p.name: p.read_bytes() for p in out.iterdir()}
    assert "research_ready" in (out / "c-2024.coverage.md").read_text()
    assert not library.editions.reopen("c-2024").refused
    assert _release(root, out / "draft.wacz", "--overwrite") == 0
    assert {n: (out / n).read_bytes() for n in accepted} == accepted
    assert "needs_review" in (out / "draft.coverage.md").read_text()


def test_a_release_over_an_existing_wacz_needs_overwrite(
    root: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.wacz"
    out.write_bytes(b"an earlier file")
    assert _release(root, out) != 0
    assert f"{out} exists already; use --overwrite" in capsys.readouterr().err
    release = tmp_path / "rel"  # over an accepted release, the refusal says so
    release.mkdir()
    assert _release(root, release / "a.wacz") == 0
    assert _release(root, release / "a.wacz") != 0
    assert "(the accepted release of edition " in capsys.readouterr().err
    assert out.read_bytes() == b"an earlier file"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("x.")] == ["x.wacz"]


def test_a_killed_release_leaves_no_temporary_report(tmp_path: Path) -> None:
    from archiver_app.durable import TEMP_SUFFIX, temp_prefix

    out = tmp_path / "x.wacz"
    left = tmp_path / f"{temp_prefix('x.coverage.json', 4242)}abc-1{TEMP_SUFFIX}"
    left.write_text("half")
    clean_up_export({"output": str(out), "edition": "c-2024"}, 4242)
    assert not left.exists()


def test_a_release_takes_o_as_export_does_and_prints_the_signing_key(
    root: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``edition export NAME -o OUT.wacz`` was refused with a hint about ``archiver search
    -- -word``; and a signed release did not say which key signed it."""
    from archiver_app.export.signing import fingerprint, verify_wacz

    out = tmp_path / "x.wacz"
    assert cli.main(["--library", root, "edition", "export", "c-2024", "-o", str(out),
                     "--sign"]) == 0  # fmt: skip
    key = fingerprint(verify_wacz(out).public_key or "")
    assert f"signed with key {key}" in capsys.readouterr().out
    assert cli.main(["--library", root, "edition", "export", "c-2024"]) == 2
    said = capsys.readouterr().err  # was "say once where …", as when given twice
    assert "say where to write the release: archiver edition export c-2024 OUT.wacz" in said
    assert "once" not in said
    twice = [str(tmp_path / "a.wacz"), "-o", str(tmp_path / "b.wacz")]
    assert cli.main(["--library", root, "edition", "export", "c-2024", *twice]) == 2
    said = capsys.readouterr().err
    assert f"say once where to write the release: {twice[0]} or -o {twice[2]}, not both" in said
    assert not (tmp_path / "a.wacz").exists() and not (tmp_path / "b.wacz").exists()
    with pytest.raises(SystemExit):  # another command's unknown option: no search hint
        cli.main(["--library", root, "edition", "export", "c-2024", str(out), "-z"])
    err = capsys.readouterr().err
    assert "unrecognized arguments: -z" in err and "archiver search" not in err


def _capture_page0_again(library: Library, tmp_path: Path) -> None:
    from archiver_app.importers.warcs import import_warc_file
    from tests.helpers.warcs import Resp, html_page, write_warc

    later = Resp("https://example.org/page0", html_page("Page 0, later", "river"),
                 date="2024-05-01T10:00:00Z")  # fmt: skip
    import_warc_file(library, write_warc(tmp_path / "later.warc.gz", [later]), collection="c")


def test_a_release_of_an_earlier_acceptance_is_not_called_the_accepted_release(
    root: str, library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Accepted, released, reopened with a member captured again and accepted again: the
    old release was refused as "the accepted release" while ``cite`` said there was none."""
    out = tmp_path / "rel" / "c-2024.wacz"
    out.parent.mkdir()
    assert _release(root, out) == 0
    there = library.editions.release_in_place(out)
    assert there is not None and there.accepted
    _capture_page0_again(library, tmp_path)
    assert library.editions.reopen("c-2024").transition.changed  # page0: the later capture
    assert not library.editions.accept("c-2024").refused
    capsys.readouterr()

    assert cli.main(["--library", root, "cite", "c-2024"]) == 0
    assert "has no release since it was accepted" in capsys.readouterr().err
    assert _release(root, out) != 0
    err = capsys.readouterr().err
    assert "accepted release" not in err
    assert (f"{out} exists already (a release of an earlier acceptance of edition c-2024, "
            "whose members have changed since); use --overwrite") in err  # fmt: skip
    there = library.editions.release_in_place(out)  # what the app asks with
    assert there is not None and not there.accepted
    assert there.what == ("a release of an earlier acceptance of edition c-2024, whose "
                          "members have changed since")  # fmt: skip

    assert _release(root, out, "--overwrite") == 0  # of this acceptance: the accepted one
    assert _release(root, out) != 0
    assert "(the accepted release of edition c-2024)" in capsys.readouterr().err


def test_a_release_accepted_again_with_the_same_members_is_of_an_earlier_acceptance(
    root: str, library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.wacz"
    assert _release(root, out) == 0
    assert not library.editions.reopen("c-2024").refused
    there = library.editions.release_in_place(out)  # reopened, the same members: cited still
    assert there is not None and there.accepted
    assert not library.editions.accept("c-2024").refused
    there = library.editions.release_in_place(out)
    assert there is not None and not there.accepted
    assert there.what == "a release of an earlier acceptance of edition c-2024"
