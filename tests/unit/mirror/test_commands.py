"""The drives, policy, mirror and offload commands as a user types them."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.cli import main
from archiver_app.library import Library
from tests.helpers.mirror_data import make_snapshot


def run(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--library", str(root), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_commands_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        make_snapshot(lib, [10_000, 20_000], seed=1)
    media = tmp_path / "media" / "me"
    (media / "BLUE").mkdir(parents=True)
    code, out, _ = run(capsys, root, "drives")
    assert code == 0 and "no destinations yet" in out and out.startswith("this computer: ")
    code, out, _ = run(capsys, root, "drives", "add", str(media / "BLUE"), "--label", "blue")
    assert code == 0 and "added destination 'blue'" in out
    code, _, err = run(capsys, root, "drives", "add", str(tmp_path / "nope"), "--label", "x")
    assert code == 2 and "archiver: error:" in err and "not a folder" in err
    code, out, err = run(capsys, root, "policy", "set", "--copies", "2", "--destinations", "blue")
    assert code == 0 and "2 copies" in out and "destinations: blue" in out and err == ""
    code, out, err = run(capsys, root, "policy", "set", "--copies", "3")  # saved, and said
    assert (
        code == 0
        and "3 copies" in out
        and err
        == (
            "archiver: warning: this policy cannot be met: it asks for 3 copies and only this "
            "computer and blue may hold one; add a drive (archiver drives add) and allow it, or "
            "lower --copies\n"
        )
    )
    code, _, err = run(capsys, root, "policy", "set", "--destinations", "green")
    assert code == 2 and "unknown destination(s) 'green'" in err
    code, _, err = run(capsys, root, "policy", "set")
    assert code == 2 and "give at least one" in err
    code, out, _ = run(capsys, root, "policy", "--copies", "1")  # a setting implies set
    assert code == 0 and "library default: 1 copy (counting" in out
    code, _, err = run(capsys, root, "policy", "show", "--copies", "3")
    assert code == 2 and "use policy set" in err
    code, out, _ = run(capsys, root, "policy")
    assert "library default: 1 copy" in out
    run(capsys, root, "policy", "set", "--copies", "2")
    code, out, _ = run(capsys, root, "mirror", "--dry-run")
    assert code == 0 and "plan: 2 copies, 30.0 KB" in out and "dry run" in out
    assert not list((media / "BLUE" / "Archiver").rglob("*.bin"))
    code, out, err = run(capsys, root, "mirror")
    assert code == 0 and "blue: 2 copied" in out and "ETA" in err
    code, out, _ = run(capsys, root, "drives", "list")
    assert "blue: " in out and "2 present, 0 not here, 0 corrupted" in out
    assert "2 files safe, 0 at risk (the policy wants 2 copies of each" in out
    # the drive moves to another mount point: scan finds it by its uuid
    moved = tmp_path / "media" / "you" / "BLUE2"
    moved.parent.mkdir()
    (media / "BLUE").rename(moved)
    code, out, _ = run(capsys, root, "drives", "scan", "--scan-root", str(tmp_path / "media"))
    assert f"blue: mounted at {moved}" in out
    code, out, _ = run(capsys, root, "drives", "verify", "blue")
    assert code == 0 and "blue: 2 copies checked, 2 good" in out
    code, _, err = run(capsys, root, "drives", "verify", "red")
    assert code == 2 and "no destination labelled 'red'" in err
    code, out, _ = run(capsys, root, "drives")
    assert "this computer: 2 files present, 0 corrupted, 0 offloaded;" in out
    assert "last verified never (due)" in out.splitlines()[0]
    with Library.open(root) as lib:  # bit rot on the laptop: restored from blue
        rotten = next((lib.root / "collections").rglob("*.bin"))
    rotten.write_bytes(b"rot" + rotten.read_bytes()[3:])
    code, out, _ = run(capsys, root, "drives", "verify", "--laptop")
    assert code == 0 and "this computer: 2 copies checked, 1 good, 1 corrupted" in out
    assert "1 repaired from a good copy, 0 could not be repaired" in out
    code, out, _ = run(capsys, root, "drives")
    assert "last verified never" not in out.splitlines()[0]
    assert "(due)" not in out.splitlines()[0]
    code, _, err = run(capsys, root, "drives", "verify", "blue", "--laptop")
    assert code == 2 and "not both" in err
    code, out, _ = run(capsys, root, "offload", "--older-than", "1y")
    assert code == 0 and "freed 0 B" in out and "more copies than the drives it allows" in out
    code, _, err = run(capsys, root, "offload", "--older-than", "soon")
    assert code == 2 and "invalid age" in err
    code, out, _ = run(capsys, root, "policy", "set", "--copies", "1")
    code, out, _ = run(capsys, root, "offload", "--older-than", "1y")
    assert code == 0 and "freed 30.0 KB: 1 snapshot, 2 files" in out
    code, out, _ = run(capsys, root, "policy")
    assert "library default: 1 copy" in out


def test_scan_agrees_with_the_list_and_takes_scan_root_on_either_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A drive folder outside the mount points is mounted to `drives` and was "not
    mounted" to `drives scan`; `drives --scan-root X scan` lost X."""
    root = tmp_path / "lib"
    Library.open(root).close()
    (tmp_path / "drives" / "red").mkdir(parents=True)
    run(capsys, root, "drives", "add", str(tmp_path / "drives" / "red"), "--label", "red")
    code, out, _ = run(capsys, root, "drives", "scan")
    assert code == 0 and out == f"red: mounted at {tmp_path / 'drives' / 'red'}\n"
    (tmp_path / "shelf" / "blue").mkdir(parents=True)
    other = tmp_path / "other"
    with Library.open(other) as lib:  # a drive this library does not know yet
        from archiver_app.mirror import add_destination

        add_destination(lib, tmp_path / "shelf" / "blue", "blue")
    for args in (["--scan-root", str(tmp_path / "shelf"), "scan"],
                 ["scan", "--scan-root", str(tmp_path / "shelf")]):  # fmt: skip
        code, out, _ = run(capsys, root, "drives", *args)
        assert (
            code == 0 and "unknown destination " in out and str(tmp_path / "shelf" / "blue") in out
        )


def test_a_relative_scan_root_records_where_the_drive_is_as_an_absolute_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--scan-root d` stored 'd/red' as the drive's last place: from another folder the
    next run looked for it there, relative to wherever it was started."""
    from archiver_app.mirror import add_destination
    from archiver_app.store.models import Destination

    root = tmp_path / "lib"
    (tmp_path / "d" / "red").mkdir(parents=True)
    with Library.open(root) as lib:
        add_destination(lib, tmp_path / "d" / "red", "red")
    (tmp_path / "d" / "red").rename(tmp_path / "d" / "moved")  # mounted elsewhere next time
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, root, "drives", "--scan-root", "d", "scan")
    assert code == 0 and out == f"red: mounted at {tmp_path / 'd' / 'moved'}\n"
    with Library.open(root) as lib, lib.session() as s:
        [dest] = s.scalars(select(Destination)).all()
        assert dest.last_mount_path == str(tmp_path / "d" / "moved")
    monkeypatch.chdir(tmp_path / "d")
    code, out, _ = run(capsys, root, "drives")
    assert code == 0 and f"red: {tmp_path / 'd' / 'moved'}" in out


def test_the_documented_steps_free_laptop_space(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two drives, the default policy, mirror, then offload: it freed 0 B and said "mirror
    them first" while mirror said there was nothing to do. It now makes the drive copies
    it needs (this computer's copy stops counting) and frees the space."""
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        made = make_snapshot(lib, [10_000, 20_000], seed=1)
    for name in ("x", "y"):
        (tmp_path / "d2" / name).mkdir(parents=True)
        code, _, _ = run(
            capsys, root, "drives", "add", str(tmp_path / "d2" / name), "--label", name
        )
        assert code == 0
    code, out, _ = run(capsys, root, "mirror")
    assert code == 0 and "done: 2 copies made and verified" in out
    code, out, _ = run(capsys, root, "offload", "--older-than", "0d", "--dry-run")
    assert code == 0 and "would free 30.0 KB: 1 snapshot, 2 files" in out
    assert "dry run: nothing was copied" in out and (root / made.paths[0]).exists()
    code, out, err = run(capsys, root, "offload", "--older-than", "0d")
    assert code == 0 and "freed 30.0 KB: 1 snapshot, 2 files" in out, out
    assert "done: 2 copies made and verified" in out and "mirror" in err
    assert not (root / made.paths[0]).exists()
    code, out, _ = run(capsys, root, "mirror")
    assert code == 0 and "plan: 0 copies" in out


def test_a_read_only_drive_is_verified_without_repair_and_the_others_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One read-only drive made the whole `drives verify` fail: the other drive was
    repaired silently, nothing printed, exit 1, no report. Each drive now has its line; the
    read-only one is checked and its damage reported as not repairable (read-only)."""
    from tests.helpers.mounts import read_only_folder

    root = tmp_path / "lib"
    with Library.open(root) as lib:
        made = make_snapshot(lib, [10_000, 20_000], seed=1)
        lib_id = lib.id
    for name in ("ro", "rw"):
        (tmp_path / name).mkdir()
        assert run(capsys, root, "drives", "add", str(tmp_path / name), "--label", name)[0] == 0
    run(capsys, root, "policy", "set", "--copies", "3")
    assert run(capsys, root, "mirror")[0] == 0
    for name, path in (("rw", made.paths[0]), ("ro", made.paths[1])):  # a flipped byte on each
        copy = tmp_path / name / "Archiver" / lib_id / path
        data = bytearray(copy.read_bytes())
        data[100] ^= 1
        copy.write_bytes(bytes(data))
    with read_only_folder(tmp_path / "ro"):
        code, out, _ = run(capsys, root, "drives", "verify", "--no-repair", "ro")
        assert code == 1 and out.startswith(  # not "could not be repaired": none was tried
            "ro: 2 copies checked, 1 good, 1 corrupted; not repaired (repairs were not asked for)"
        )
        code, out, _ = run(capsys, root, "drives", "verify")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == (
        "ro: 2 copies checked, 1 good, 1 corrupted; 0 repaired from a good copy, 1 could not be"
        " repaired (the drive is read-only)"
    )
    assert lines[1] == (
        "rw: 2 copies checked, 1 good, 1 corrupted; 1 repaired from a good copy, 0 could not be"
        " repaired"
    )
    report = Path(lines[2].removeprefix("every damaged copy: "))
    assert report.name == "verdicts.jsonl" and len(report.read_text().splitlines()) == 2
    code, out, _ = run(capsys, root, "jobs")
    # the verify of both drives: 4 copies checked, 1 left bad (it exited 1): an error
    assert out.splitlines()[1].split()[1:6] == ["verify", "with", "errors", "4/4", "1"]
    code, out, _ = run(capsys, root, "drives", "verify", "ro")  # writable again: repaired
    assert code == 0 and "1 repaired from a good copy" in out


def test_a_drive_whose_library_folder_was_moved_aside_is_said_so_not_gone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The drive is mounted but this library's folder is not on it: verify says that (not
    "the drive is gone"), and the drives list says its copies cannot be read."""
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        make_snapshot(lib, [10_000], seed=2)
        library_id = lib.id
    red = tmp_path / "media" / "RED"
    red.mkdir(parents=True)
    run(capsys, root, "drives", "add", str(red), "--label", "red")
    code, _, _ = run(capsys, root, "mirror")
    assert code == 0
    (red / "Archiver" / library_id).rename(red / "Archiver" / "aside")
    code, out, err = run(capsys, root, "drives", "verify", "red", "--scan-root", str(red.parent))
    said = out + err
    assert code == 1
    assert "the drive is mounted but this library's folder is not on it" in said
    assert "gone" not in said
    code, out, _ = run(capsys, root, "drives", "--scan-root", str(red.parent))
    assert code == 0 and "this library's folder is not on it" in out
    code, out, err = run(capsys, root, "mirror", "--scan-root", str(red.parent))
    assert "the drive is mounted but this library's folder is not on it" in out + err
    assert not (red / "Archiver" / library_id).exists()


def test_a_collection_s_explicit_any_stays_any_and_inherit_is_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--destinations any`` on a collection is its own setting: a library default set
    later does not replace it. ``--destinations inherit`` gives the default back."""
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        make_snapshot(lib, [1000], seed=3)
    for name in ("blue", "tiny"):
        (tmp_path / name).mkdir()
        run(capsys, root, "drives", "add", str(tmp_path / name), "--label", name)
    code, out, _ = run(
        capsys, root, "policy", "set", "--collection", "default", "--destinations", "any"
    )
    assert code == 0 and "destinations: any" in out
    run(capsys, root, "policy", "set", "--destinations", "tiny")
    code, out, _ = run(capsys, root, "policy")
    assert "library default: 2 copies" in out and "destinations: tiny" in out
    assert "collection default: 2 copies (counting the laptop's), destinations: any," in out
    code, out, _ = run(
        capsys, root, "policy", "set", "--collection", "default", "--destinations", "inherit"
    )
    assert code == 0 and "destinations: tiny" in out
    code, out, _ = run(capsys, root, "policy")
    assert "collection default" not in out  # nothing of its own left
    code, _, err = run(capsys, root, "policy", "set", "--destinations", "inherit")
    assert code == 2 and "only a collection" in err
