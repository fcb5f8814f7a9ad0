"""link_tree_verified: the migrator's fast hard-link move of a folder, same result as the
generic copy_tree_verified(link=True), verified by identity, falling back to copies."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest

import archiver_app.layout.moves as moves
from archiver_app.durable import TEMP_SUFFIX
from archiver_app.layout.links import link_tree_verified
from archiver_app.layout.moves import MoveError, copy_tree_verified


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _snapshot(folder: Path, outside: Path) -> dict[str, bytes]:
    files = {
        "page.warc.gz": b"warc" * 100,
        "screenshot.png": b"png" * 50,
        "media/clip.bin": b"clip" * 30,
        "media/deep/er.txt": b"deeper",
        "index.json": b"{}",
    }
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    (folder / f".half.bin.1-ab-0{TEMP_SUFFIX}").write_bytes(b"interrupted copy")
    (folder / "older.bin.archiver-part").write_bytes(b"an earlier version's interrupted copy")
    (folder / "inside-link").symlink_to(folder / "screenshot.png")
    (folder / "outside-link").symlink_to(outside)
    (folder / "dir-link").symlink_to(outside.parent)
    os.mkfifo(folder / "fifo")
    return files


def test_same_result_as_the_generic_tree_copy(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    fast_src, slow_src = tmp_path / "a", tmp_path / "b"
    files = _snapshot(fast_src, outside)
    _snapshot(slow_src, outside)
    fast = link_tree_verified(fast_src, tmp_path / "new-a", skip=("index.json",))
    slow = copy_tree_verified(slow_src, tmp_path / "new-b", skip=("index.json",), link=True)
    assert fast.files == slow.files  # same order, sizes and hashes (none on record: hashed)
    assert sorted(fast.refused) == sorted(slow.refused)
    assert {r.split(":")[0] for r in fast.refused} == {"outside-link", "dir-link", "fifo"}
    for rel, data in files.items():
        if rel == "index.json":
            assert not (tmp_path / "new-a" / rel).exists()
            continue
        new = tmp_path / "new-a" / rel
        assert os.path.samefile(new, fast_src / rel)  # linked, not copied
        assert new.read_bytes() == data
    inside = tmp_path / "new-a" / "inside-link"
    assert not inside.is_symlink() and not os.path.samefile(inside, fast_src / "screenshot.png")
    assert not (tmp_path / "new-a" / f".half.bin.1-ab-0{TEMP_SUFFIX}").exists()
    assert not (tmp_path / "new-a" / "older.bin.archiver-part").exists()


def test_recorded_hashes_are_kept_without_reading_and_a_wrong_size_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "old"
    (src / "media").mkdir(parents=True)
    (src / "a.bin").write_bytes(b"aaaa")
    (src / "media" / "b.bin").write_bytes(b"bb")
    known = {"a.bin": _sha(b"aaaa"), "media/b.bin": _sha(b"bb")}

    def no_read(_path: Path) -> str:
        raise AssertionError("a link with a hash on record is not re-read")

    monkeypatch.setattr(moves, "sha256_file", no_read)
    result = link_tree_verified(
        src, tmp_path / "new", known_sha256=known, known_size={"a.bin": 4, "media/b.bin": 2}
    )
    assert [(f.target, f.size, f.sha256) for f in result.files] == [
        ("a.bin", 4, known["a.bin"]),
        ("media/b.bin", 2, known["media/b.bin"]),
    ]
    monkeypatch.undo()
    with pytest.raises(MoveError, match="recorded sha256"):  # the size on record disagrees
        link_tree_verified(
            src, tmp_path / "other", known_sha256={"a.bin": _sha(b"xxxxx")}, known_size={"a.bin": 5}
        )
    assert not (tmp_path / "other" / "a.bin").exists()  # the new name is dropped
    assert (src / "a.bin").read_bytes() == b"aaaa"


def test_resume_other_names_and_other_devices_fall_back_safely(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, dst = tmp_path / "old", tmp_path / "new"
    src.mkdir()
    (src / "linked-before.bin").write_bytes(b"resumed")
    (src / "shared.bin").write_bytes(b"two names")
    os.link(src / "shared.bin", tmp_path / "elsewhere.bin")
    (src / "clash.bin").write_bytes(b"mine")
    dst.mkdir()
    os.link(src / "linked-before.bin", dst / "linked-before.bin")  # a killed run's link
    (dst / "clash.bin").write_bytes(b"theirs")
    with pytest.raises(MoveError, match="different contents"):
        link_tree_verified(src, dst)
    (dst / "clash.bin").unlink()
    result = link_tree_verified(src, dst)
    assert {f.target: f.sha256 for f in result.files} == {
        "clash.bin": _sha(b"mine"),
        "linked-before.bin": _sha(b"resumed"),
        "shared.bin": _sha(b"two names"),
    }
    assert os.path.samefile(dst / "linked-before.bin", src / "linked-before.bin")
    assert not os.path.samefile(dst / "shared.bin", src / "shared.bin")  # an independent copy
    assert (dst / "shared.bin").read_bytes() == b"two names"

    def cross_device(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    far = link_tree_verified(src, tmp_path / "far")
    assert len(far.files) == 3
    assert (tmp_path / "far" / "clash.bin").read_bytes() == b"mine"
    assert not os.path.samefile(tmp_path / "far" / "clash.bin", src / "clash.bin")


def test_a_rerun_sweeps_what_a_killed_run_left_in_the_new_folder(tmp_path: Path) -> None:
    src, dst = tmp_path / "old", tmp_path / "new"
    src.mkdir()
    (src / "a.bin").write_bytes(b"a" * 100)
    dst.mkdir()  # made by the killed run, which was writing index.json there
    left = dst / f".index.json.7-ab12cd34-0{TEMP_SUFFIX}"
    left.write_bytes(b'{"half": ')
    result = link_tree_verified(src, dst)
    assert [f.target for f in result.files] == ["a.bin"]
    assert sorted(p.name for p in dst.iterdir()) == ["a.bin"]
