"""The copier's steps on real files: hash while copying, mismatches, error kinds."""

from __future__ import annotations

import errno
import hashlib
from pathlib import Path

import pytest

from archiver_app.durable import verified_copy
from archiver_app.mirror import copier


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_copy_to_temp_hashes_the_source_and_never_leaves_a_bad_temp(tmp_path: Path) -> None:
    src = tmp_path / "src.bin"
    data = bytes(range(256)) * 9000  # > one buffer
    src.write_bytes(data)
    out = tmp_path / "staging"
    out.mkdir()
    seen: list[int] = []
    temp = Path(copier.copy_to_temp(src, out, sha(data), len(data), on_bytes=seen.append))
    assert (
        temp.name.endswith(copier.TEMP_SUFFIX)
        and temp.read_bytes() == data
        and sum(seen) == len(data)
    )
    with pytest.raises(copier.SourceMismatch) as info:
        copier.copy_to_temp(src, out, sha(b"other"), len(data))
    assert info.value.sha256 == sha(data)
    with pytest.raises(copier.SourceMismatch):
        copier.copy_to_temp(src, out, sha(data), len(data) + 1)
    assert list(out.iterdir()) == [temp]  # the failed temps were removed
    with pytest.raises(copier.SourceError):
        copier.copy_to_temp(tmp_path / "absent", out, sha(data), 1)
    with pytest.raises(copier.DestinationError) as dest_info:
        copier.copy_to_temp(src, tmp_path / "no-such-folder", sha(data), len(data))
    assert dest_info.value.kind == "gone"


def test_matches_and_a_verified_copy_with_the_recorded_hash(tmp_path: Path) -> None:
    src = tmp_path / "a"
    src.write_bytes(b"hello world")
    final = tmp_path / "deep" / "er" / "b"
    verified_copy(src, final, expected_sha256=sha(b"hello world"), expected_size=11)
    assert final.read_bytes() == b"hello world"
    assert copier.matches(final, sha(b"hello world"), 11)
    assert not copier.matches(final, sha(b"hello world"), 12)
    assert not copier.matches(tmp_path / "missing", sha(b""), 0)
    src.write_bytes(b"hello worle")
    with pytest.raises(copier.SourceMismatch):
        verified_copy(src, final, expected_sha256=sha(b"hello world"), expected_size=11)
    assert final.read_bytes() == b"hello world"  # untouched
    assert [p.name for p in final.parent.iterdir()] == ["b"]


def test_hash_small_files_reads_each_file_back(tmp_path: Path) -> None:
    datas = [b"", b"a", bytes(range(256)) * 40, b"x" * (copier.BUFFER + 5)]
    paths = []
    for i, data in enumerate(datas):
        path = tmp_path / f"f{i}.part"
        path.write_bytes(data)
        paths.append(path)
    paths.insert(2, tmp_path / "missing.part")
    got = copier.hash_small_files(paths)
    assert got[2] is None
    del got[2]
    assert got == [(sha(d), len(d)) for d in datas]
    paths[1].write_bytes(b"b")  # a flipped byte is seen
    assert copier.hash_small_files([paths[1]]) == [(sha(b"b"), 1)]


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (errno.ENOSPC, "full"),
        (errno.EDQUOT, "full"),
        (errno.EROFS, "read-only"),
        (errno.EACCES, "permission denied"),
        (errno.EPERM, "permission denied"),
        (errno.ENOENT, "gone"),
        (errno.EIO, "gone"),
        (errno.EINVAL, "error"),
    ],
)
def test_classify(code: int, kind: str) -> None:
    assert copier.classify(OSError(code, "x")).kind == kind


def test_join_relative_refuses_escapes(tmp_path: Path) -> None:
    assert copier.join_relative(tmp_path, "a/b") == str(tmp_path / "a" / "b")
    for bad in ["../x", "a/../../x", "/etc/passwd", "C:/x"]:
        with pytest.raises(ValueError, match="unsafe"):
            copier.join_relative(tmp_path, bad)
