"""Verified moves: copy -> verify -> fsync -> remove; idempotent; symlinks never trusted."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest

from archiver_app.durable import TEMP_SUFFIX, is_temp
from archiver_app.layout.moves import (
    CopiedFile,
    MoveError,
    copy_tree_verified,
    copy_verified,
    free_name,
    remove_verified,
)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_copy_verified_copies_and_is_idempotent(tmp_path: Path) -> None:
    src, dst = tmp_path / "a.bin", tmp_path / "out" / "a.bin"
    src.write_bytes(b"hello" * 1000)
    assert copy_verified(src, dst) == (5000, _sha(b"hello" * 1000))
    assert dst.read_bytes() == src.read_bytes()
    assert src.exists()  # a copy never removes the source
    mtime = dst.stat().st_mtime_ns
    assert copy_verified(src, dst) == (5000, _sha(b"hello" * 1000))  # skipped: same bytes
    assert dst.stat().st_mtime_ns == mtime
    assert not [p for p in dst.parent.iterdir() if is_temp(p.name)]


def test_copy_verified_refuses_conflicts_and_wrong_hashes(tmp_path: Path) -> None:
    src, dst = tmp_path / "a.bin", tmp_path / "b.bin"
    src.write_bytes(b"mine")
    dst.write_bytes(b"theirs")
    with pytest.raises(MoveError, match="different contents"):
        copy_verified(src, dst)
    assert dst.read_bytes() == b"theirs"
    with pytest.raises(MoveError, match="recorded sha256"):
        copy_verified(src, tmp_path / "c.bin", expected_sha256=_sha(b"other"))
    assert not (tmp_path / "c.bin").exists()
    assert not list(tmp_path.glob(f"*{TEMP_SUFFIX}"))


def test_tree_copy_refuses_symlinks_leading_outside(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    src = tmp_path / "snap"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "page.html").write_text("page")
    (src / "inside-link").symlink_to(src / "sub" / "page.html")
    (src / "outside-link").symlink_to(outside)
    (src / "dir-link").symlink_to(tmp_path)
    result = copy_tree_verified(src, tmp_path / "new")
    assert sorted(f.target for f in result.files) == ["inside-link", "sub/page.html"]
    assert not (tmp_path / "new" / "inside-link").is_symlink()  # content, not a link
    assert (tmp_path / "new" / "inside-link").read_text() == "page"
    assert sorted(r.split(":")[0] for r in result.refused) == ["dir-link", "outside-link"]
    assert not (tmp_path / "new" / "outside-link").exists()


def test_remove_verified_keeps_sources_without_a_good_copy(tmp_path: Path) -> None:
    src, dst = tmp_path / "old", tmp_path / "new"
    (src / "d").mkdir(parents=True)
    (src / "d" / "a").write_bytes(b"a")
    (src / "b").write_bytes(b"b")
    copied = copy_tree_verified(src, dst).files
    (dst / "b").write_bytes(b"X")  # the copy got damaged after the copy
    kept = remove_verified(src, dst, copied, rehash=True)
    assert kept == ["b"]
    assert (src / "b").read_bytes() == b"b"
    assert not (src / "d").exists()  # emptied folders go, the rest stays


def test_free_name_suffixes_clashes_but_reuses_identical(tmp_path: Path) -> None:
    (tmp_path / "s.png").write_bytes(b"one")
    assert free_name(tmp_path, "s.png", _sha(b"one")) == "s.png"
    assert free_name(tmp_path, "s.png", _sha(b"two")) == "s.dup1.png"
    (tmp_path / "s.dup1.png").write_bytes(b"two")
    assert free_name(tmp_path, "s.png", _sha(b"two")) == "s.dup1.png"
    assert free_name(tmp_path, "s.png", _sha(b"three")) == "s.dup2.png"


def test_link_move_shares_the_data_and_verifies_it(tmp_path: Path) -> None:
    src, dst = tmp_path / "a.bin", tmp_path / "out" / "a.bin"
    src.write_bytes(b"hello" * 1000)
    assert copy_verified(src, dst, link=True) == (5000, _sha(b"hello" * 1000))  # hashed once
    assert os.path.samefile(src, dst)  # same data, no byte rewritten
    # resumed after a kill: the link is there already; it is verified, not redone
    assert copy_verified(src, dst, link=True, expected_sha256=_sha(b"hello" * 1000))[0] == 5000
    with pytest.raises(MoveError, match="recorded sha256"):  # a recorded size that disagrees
        copy_verified(src, dst, link=True, expected_sha256=_sha(b"other"), expected_size=5)
    assert remove_verified(src.parent, dst.parent, [], rehash=True) == []


def test_link_move_with_a_recorded_hash_is_verified_by_identity_not_reread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import archiver_app.layout.moves as moves

    def no_read(_path: Path) -> str:
        raise AssertionError("a link with a hash on record must not be re-read")

    monkeypatch.setattr(moves, "sha256_file", no_read)
    src, dst = tmp_path / "old" / "a.bin", tmp_path / "new" / "a.bin"
    src.parent.mkdir()
    src.write_bytes(b"payload")
    recorded = _sha(b"payload")
    assert copy_verified(src, dst, link=True, expected_sha256=recorded, expected_size=7) == (
        7,
        recorded,
    )
    st_src, st_dst = os.stat(src), os.stat(dst)
    assert (st_src.st_dev, st_src.st_ino) == (st_dst.st_dev, st_dst.st_ino)
    # after a crash the old name goes without re-reading either: the new name is its inode
    copied = [CopiedFile("a.bin", "a.bin", 7, recorded)]
    assert remove_verified(src.parent, dst.parent, copied, rehash=True) == []
    assert not src.exists()
    assert dst.read_bytes() == b"payload"


def test_link_move_refuses_a_source_whose_size_is_not_the_recorded_one(tmp_path: Path) -> None:
    src, dst = tmp_path / "a.bin", tmp_path / "out" / "a.bin"
    src.write_bytes(b"rotten and longer")
    with pytest.raises(MoveError, match="recorded sha256"):
        copy_verified(src, dst, link=True, expected_sha256=_sha(b"fresh"), expected_size=5)
    assert not dst.exists()  # the new name is dropped; the old one is untouched
    assert src.read_bytes() == b"rotten and longer"
    # the recorded size agrees but not the hash: a link cannot have changed a byte, so the
    # record is kept as it is (a scrub against it finds the rot); the move goes ahead
    same_size = tmp_path / "b.bin"
    same_size.write_bytes(b"rotten")
    assert copy_verified(
        same_size, tmp_path / "out" / "b.bin", link=True, expected_sha256=_sha(b"fresh")
    ) == (6, _sha(b"fresh"))


def test_link_move_copies_across_devices_and_for_files_with_other_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "a.bin"
    src.write_bytes(b"data")
    os.link(src, tmp_path / "other-name.bin")
    dst = tmp_path / "out" / "a.bin"
    assert copy_verified(src, dst, link=True) == (4, _sha(b"data"))
    assert not os.path.samefile(src, dst)  # a second name elsewhere: an independent copy

    def no_link(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    lone, lone_dst = tmp_path / "b.bin", tmp_path / "out" / "b.bin"
    lone.write_bytes(b"more")
    monkeypatch.setattr(os, "link", no_link)
    assert copy_verified(lone, lone_dst, link=True) == (4, _sha(b"more"))
    assert lone_dst.read_bytes() == b"more"
    assert not os.path.samefile(lone, lone_dst)


@pytest.mark.parametrize("waits", [False, True])
def test_cleanups_go_to_threads_only_once_they_wait_on_the_disk(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, waits: bool
) -> None:
    """Quick removals stay on the calling thread (threads would only trade the GIL); ones
    that wait (here: sleep, as a synchronous discard does) overlap in threads."""
    import threading
    import time

    from archiver_app.layout import migrate

    seen: list[tuple[int, str]] = []

    def finish(root: Path, marker: dict[str, object], *, rehash: bool) -> list[str]:
        if waits:
            time.sleep(0.004)
        seen.append((int(str(marker["n"])), threading.current_thread().name))
        return []

    monkeypatch.setattr(migrate, "finish_cleanup", finish)
    # waiting: over 2 ms per move (the sleep); not waiting: nothing a busy machine adds
    monkeypatch.setattr(migrate, "WAITING_MOVE", 0.002 if waits else 60.0)
    moves = [{"n": i} for i in range(40)]
    migrate._finish_all(tmp_path, moves, rehash=False)
    here = threading.current_thread().name
    assert sorted(n for n, _ in seen) == list(range(40))  # every move, once
    assert all(name == here for n, name in seen if n < migrate.PROBE_MOVES)
    others = {name for n, name in seen if n >= migrate.PROBE_MOVES}
    assert (here not in others and len(others) > 1) if waits else others == {here}
