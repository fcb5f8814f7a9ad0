"""Files safe and at risk are judged by each collection's policy, as the mirror plans.

Once ``archiver drives`` and the status bar counted every file against the library
default's number of copies and any drive: with collections asking for 3 copies on
blue, red and 2 on red, after blue was retired the mirror said 15 files stayed below their
policy while ``drives`` said "50 files safe, 0 at risk"; and after the default was raised
to 3 (which no file falls under) they said 15 at risk while the mirror planned nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archiver_app.api.status import status_figures
from archiver_app.cli import main
from archiver_app.library import Library
from archiver_app.mirror import run_mirror
from archiver_app.mirror.coverage import policy_coverage
from tests.helpers.mirror_data import make_snapshot

RESEARCH, HARBOUR = 15, 35


def run(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str]:
    code = main(["--library", str(root), *args])
    return code, capsys.readouterr().out


def agree(root: Path, capsys: pytest.CaptureFixture[str], safe: int, at_risk: int) -> str:
    """Asserts ``drives``, ``info``, the status figures and the mirror plan say the same;
    returns what ``drives`` says the files are compared against."""
    with Library.open(root) as lib:
        figures = status_figures(lib, lib.clock())
        plan = run_mirror(lib, dry_run=True).plan
        coverage = policy_coverage(lib)
    assert (figures.files_safe, figures.files_at_risk) == (safe, at_risk)
    assert (coverage.safe, coverage.at_risk) == (safe, at_risk)
    assert plan.files_needing == at_risk
    _, out = run(capsys, root, "drives")
    last = out.splitlines()[-1]
    assert last.startswith(f"{safe} files safe, {at_risk} at risk (")
    _, out = run(capsys, root, "info", "--json")
    info = json.loads(out)
    assert (info["files_safe"], info["files_at_risk"]) == (safe, at_risk)
    assert info["policy"] == figures.policy_wanted
    return last


def test_drives_info_status_and_mirror_agree_under_collection_policies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        for i in range(RESEARCH // 3):
            make_snapshot(lib, [100, 200, 300], collection="research", seed=i)
        for i in range(HARBOUR // 5):
            make_snapshot(lib, [100] * 5, collection="harbour", seed=100 + i)
    for label in ("blue", "red"):
        (tmp_path / label).mkdir()
        assert run(capsys, root, "drives", "add", str(tmp_path / label), "--label", label)[0] == 0
    for args in (
        ("--collection", "research", "--copies", "3", "--destinations", "blue,red"),
        ("--collection", "harbour", "--copies", "2", "--destinations", "red"),
    ):
        assert run(capsys, root, "policy", "set", *args)[0] == 0
    agree(root, capsys, 0, RESEARCH + HARBOUR)
    assert run(capsys, root, "mirror")[0] == 0
    said = agree(root, capsys, RESEARCH + HARBOUR, 0)
    assert said.endswith(
        "(each against its collection's policy: harbour 2 copies (on red),"
        " research 3 copies (on blue, red); counting this computer's)"
    )

    # a default no file falls under changes nothing
    assert run(capsys, root, "policy", "set", "--copies", "3")[0] == 0
    agree(root, capsys, RESEARCH + HARBOUR, 0)

    # blue's copies stop counting: research's files lack one, harbour's do not
    assert run(capsys, root, "drives", "retire", "blue")[0] == 0
    code, out = run(capsys, root, "mirror")
    assert code == 1 and f"{RESEARCH} files stay below their policy" in out
    agree(root, capsys, HARBOUR, RESEARCH)


def test_one_policy_for_all_is_said_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        make_snapshot(lib, [100, 200], seed=1)
        make_snapshot(lib, [100], collection="harbour", seed=2)
    (tmp_path / "blue").mkdir()
    run(capsys, root, "drives", "add", str(tmp_path / "blue"), "--label", "blue")
    said = agree(root, capsys, 0, 3)
    assert said.endswith("(the policy wants 2 copies of each, counting this computer's)")
    run(capsys, root, "policy", "set", "--destinations", "blue")
    assert run(capsys, root, "mirror")[0] == 0
    said = agree(root, capsys, 3, 0)
    assert said.endswith("(the policy wants 2 copies of each (on blue), counting this computer's)")
    # one policy on any drive (counted by copies alone): the same figures, and a retired
    # drive's copies stop counting there too
    run(capsys, root, "policy", "set", "--destinations", "any")
    said = agree(root, capsys, 3, 0)
    assert said.endswith("(the policy wants 2 copies of each, counting this computer's)")
    assert run(capsys, root, "drives", "retire", "blue")[0] == 0
    agree(root, capsys, 0, 3)


def test_a_drive_without_this_library_s_folder_holds_no_safe_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Once a mounted drive whose library folder was moved aside still counted: `drives`
    said "3 files safe, 0 at risk" and the mirror had nothing to do while the drive held
    none of the files it could read. Its copies count nowhere until the folder is back:
    not in the figures (one policy for all, or per collection), not as a capture's whole
    copy, not for an offload."""
    from datetime import timedelta

    from archiver_app.mirror.offload import offload

    root = tmp_path / "lib"
    with Library.open(root) as lib:
        made = make_snapshot(lib, [100, 200], seed=1)
        make_snapshot(lib, [100], collection="harbour", seed=2)
        library_id = lib.id
    blue = tmp_path / "blue"
    blue.mkdir()
    run(capsys, root, "drives", "add", str(blue), "--label", "blue")
    assert run(capsys, root, "mirror")[0] == 0
    agree(root, capsys, 3, 0)
    folder = blue / "Archiver" / library_id
    folder.rename(blue / "Archiver" / "aside")
    agree(root, capsys, 0, 3)
    code, out = run(capsys, root, "mirror", "--dry-run")
    assert code == 1 and "this library's folder is not on it" in out
    with Library.open(root) as lib:
        assert lib.snapshots.detail(made.snapshot_id).whole_copies == 1  # this computer's
        assert lib.drives.copies(made.snapshot_id).safe_copies == 1
    # a collection's own policy is counted by the same rule
    run(capsys, root, "policy", "set", "--collection", "harbour", "--destinations", "blue")
    agree(root, capsys, 0, 3)
    (blue / "Archiver" / "aside").rename(folder)
    agree(root, capsys, 3, 0)
    with Library.open(root) as lib:
        assert lib.snapshots.detail(made.snapshot_id).whole_copies == 2
    # one drive copy is all an offload asks for here: blue's is not one without its folder
    folder.rename(blue / "Archiver" / "aside")
    run(capsys, root, "policy", "set", "--copies", "1")
    run(capsys, root, "policy", "set", "--collection", "harbour", "--copies", "1")
    with Library.open(root) as lib:
        kept = offload(lib, timedelta(days=1))
        assert kept.snapshots == 0 and kept.not_safe == 2 and not kept.unconfirmed


def test_a_warc_imported_with_no_pages_follows_its_collection_s_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A WARC imported into `research` said "1 record, 0 pages": no capture holds it, and
    its copies went where the library default sends them (blue), not where research's
    policy does (red), while counted under the default's. Its folder's collection rules
    its copies and its place in the figures now."""
    from sqlalchemy import select

    from archiver_app.importers.run import import_paths
    from archiver_app.mirror.status import list_destinations
    from archiver_app.store.models import Copy, Destination, File
    from tests.helpers.warcs import Resp, write_warc

    root = tmp_path / "lib"
    image = Resp("https://example.org/a.png", b"\x89PNG\r\n\x1a\n" + b"0" * 200, "image/png")
    with Library.open(root) as lib:
        warc = write_warc(tmp_path / "one.warc.gz", [image])
        [done] = import_paths(lib, [warc], collection="research").outcomes
        assert (done.records, done.pages) == (1, 0)
    for label in ("blue", "red"):
        (tmp_path / label).mkdir()
        run(capsys, root, "drives", "add", str(tmp_path / label), "--label", label)
    run(capsys, root, "policy", "set", "--destinations", "blue")
    run(capsys, root, "policy", "set", "--collection", "research", "--destinations", "red")
    agree(root, capsys, 0, 2)  # the WARC and its index.json
    assert run(capsys, root, "mirror")[0] == 0
    said = agree(root, capsys, 2, 0)
    assert "research 2 copies (on red)" in said and "the rest" not in said
    with Library.open(root) as lib, lib.session() as s:
        held = s.execute(
            select(File.kind, Destination.label)
            .join(Copy, Copy.file_id == File.id)
            .join(Destination, Destination.id == Copy.destination_id)
        ).all()
        drives = {d.label: d for d in list_destinations(lib)}
    assert sorted(held) == [("sidecar", "red"), ("warc", "red")]
    assert (drives["red"].present, drives["red"].missing, drives["blue"].missing) == (2, 0, 0)
