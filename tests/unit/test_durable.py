"""Durable files on real files: a crash between any two steps leaves the old file or the new
one under the final name, never a part of one; copies are read back; leftovers are swept."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from archiver_app import durable
from archiver_app.durable import (
    STEPS,
    TEMP_SUFFIX,
    DestinationError,
    SourceError,
    SourceMismatch,
    atomic_write,
    atomic_write_text,
    is_temp,
    sweep_leftovers,
    verified_copy,
)

OLD = b"old contents\n" * 1000
NEW = b"the new contents\n" * 3000


class Crash(BaseException):
    """Stands for the process dying at a step."""


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if is_temp(p.name))


def test_atomic_write_replaces_a_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "library.json"
    atomic_write(target, OLD)
    assert target.read_bytes() == OLD
    atomic_write_text(target, "é\n")
    assert target.read_bytes() == "é\n".encode()
    atomic_write(target, lambda fh: fh.write(NEW), durable=False)
    assert target.read_bytes() == NEW
    assert temps(tmp_path) == []
    with pytest.raises(FileNotFoundError):
        atomic_write(tmp_path / "new" / "folder" / "f", OLD)
    atomic_write(tmp_path / "new" / "folder" / "f", OLD, make_parent=True)
    assert (tmp_path / "new" / "folder" / "f").read_bytes() == OLD


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "index.json"
    target.write_bytes(OLD)

    def half(fh: object) -> None:
        fh.write(NEW[:100])  # type: ignore[attr-defined]
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, half)
    assert target.read_bytes() == OLD
    assert temps(tmp_path) == []


@pytest.mark.parametrize("existed", [True, False])
@pytest.mark.parametrize("stop", ["written", "synced", "renamed", "folder-synced"])
def test_atomic_write_stopped_after_any_step(tmp_path: Path, stop: str, existed: bool) -> None:
    target = tmp_path / "index.json"
    if existed:
        target.write_bytes(OLD)
    before = OLD if existed else None
    seen: list[str] = []

    def hook(step: str, final: str) -> None:
        assert final == str(target)
        seen.append(step)
        now = target.read_bytes() if target.exists() else None
        # the rename is the one step that changes what the final name holds
        assert now == (NEW if "renamed" in seen else before), step
        if step == stop:
            raise Crash(step)

    with durable.step_hook(hook), pytest.raises(Crash):
        atomic_write(target, NEW)
    assert seen == ["written", "synced", "renamed", "folder-synced"][: seen.index(stop) + 1]
    assert (target.read_bytes() if target.exists() else None) in (before, NEW)
    assert len(temps(tmp_path)) == 0  # an exception cleans up; a kill leaves it to the sweep


def test_verified_copy_copies_reads_back_and_keeps_metadata(tmp_path: Path) -> None:
    src = tmp_path / "src.bin"
    data = os.urandom(3 * durable.BUFFER + 17)  # several buffers
    src.write_bytes(data)
    os.chmod(src, 0o640)
    os.utime(src, ns=(1_000_000_000, 2_000_000_000))
    seen: list[int] = []
    dst = tmp_path / "a" / "b" / "dst.bin"
    got = verified_copy(src, dst, keep_stat=True, on_bytes=seen.append)
    assert got == (len(data), sha(data)) and sum(seen) == len(data)
    assert dst.read_bytes() == data
    assert dst.stat().st_mtime_ns == 2_000_000_000 and (dst.stat().st_mode & 0o777) == 0o640
    # with the hash on record the kernel copies; the read-back hash checks it
    again = tmp_path / "again.bin"
    assert verified_copy(src, again, expected_sha256=sha(data)) == (len(data), sha(data))
    assert again.read_bytes() == data
    assert temps(dst.parent) == [] and temps(tmp_path) == []


def test_verified_copy_refuses_a_source_that_is_not_as_recorded(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.write_bytes(NEW)
    dst.write_bytes(OLD)
    with pytest.raises(SourceMismatch) as info:
        verified_copy(src, dst, expected_sha256=sha(b"what the record says"))
    assert info.value.sha256 == sha(NEW)
    with pytest.raises(SourceMismatch):
        verified_copy(src, dst, expected_sha256=sha(NEW), expected_size=len(NEW) + 1)
    with pytest.raises(SourceError):
        verified_copy(tmp_path / "absent", dst)
    assert dst.read_bytes() == OLD and temps(tmp_path) == []


@pytest.mark.parametrize("recorded", [True, False])
def test_a_copy_that_does_not_read_back_is_never_installed(tmp_path: Path, recorded: bool) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.write_bytes(NEW)
    dst.write_bytes(OLD)

    def rot(step: str, final: str) -> None:
        if step == "synced":  # the drive returns other bytes than were written
            [temp] = [p for p in tmp_path.iterdir() if is_temp(p.name)]
            with temp.open("r+b") as fh:
                fh.write(b"X")

    with durable.step_hook(rot), pytest.raises(DestinationError) as info:
        verified_copy(src, dst, expected_sha256=sha(NEW) if recorded else None)
    assert info.value.kind == "mismatch"
    assert dst.read_bytes() == OLD and temps(tmp_path) == []


def test_a_cancelled_copy_or_a_refusing_guard_changes_nothing(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.write_bytes(os.urandom(2 * durable.BUFFER))
    dst.write_bytes(OLD)

    def cancel(n: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        verified_copy(src, dst, on_bytes=cancel)

    class Refused(Exception):
        pass

    def guard() -> object:
        raise Refused

    with pytest.raises(Refused):
        verified_copy(src, dst, guard=guard)  # type: ignore[arg-type]
    assert dst.read_bytes() == OLD and temps(tmp_path) == []


@pytest.mark.parametrize("stop", ["synced", "verified", "renamed", "folder-synced"])
def test_verified_copy_stopped_after_any_step(tmp_path: Path, stop: str) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.write_bytes(NEW)
    dst.write_bytes(OLD)
    seen: list[str] = []

    def hook(step: str, final: str) -> None:
        assert final == str(dst)
        seen.append(step)
        assert dst.read_bytes() == (NEW if "renamed" in seen else OLD), step
        if step == stop:
            raise Crash(step)

    with durable.step_hook(hook), pytest.raises(Crash):
        verified_copy(src, dst)
    assert seen[-1] == stop and set(seen) <= set(STEPS)
    assert dst.read_bytes() in (OLD, NEW)


def test_make_folders_never_makes_the_folder_it_must_stay_within(tmp_path: Path) -> None:
    """A drive's copies go below its library folder; once that is gone (the drive pulled
    out), nothing is made at its old path."""
    library = tmp_path / "drive" / "Archiver" / "lib"
    library.mkdir(parents=True)
    deep = library / "collections" / "c" / "2024"
    changed = durable.make_folders(deep, within=library)
    assert deep.is_dir()
    assert sorted(changed) == sorted(map(str, [library, deep.parent.parent, deep.parent]))
    assert durable.make_folders(deep, within=library) == []
    (tmp_path / "drive").rename(tmp_path / "pulled")
    with pytest.raises(FileNotFoundError):
        durable.make_folders(deep, within=library)
    assert not (tmp_path / "drive").exists()
    assert durable.make_folders(tmp_path / "a" / "b")  # without ``within``: every parent
    assert (tmp_path / "a" / "b").is_dir()


def test_sweep_removes_only_old_temporaries(tmp_path: Path) -> None:
    old_temp = tmp_path / f".index.json.1-ab-0{TEMP_SUFFIX}"
    older_version = tmp_path / "page.html.archiver-part"
    fresh_temp = tmp_path / f".dom.html.2-cd-1{TEMP_SUFFIX}"
    keep = [tmp_path / "capture.warc.gz.part", tmp_path / "index.json", tmp_path / "x.partial"]
    for path in [old_temp, older_version, fresh_temp, *keep]:
        path.write_bytes(b"x")
    for path in (old_temp, older_version):
        os.utime(path, (0, 0))
    (tmp_path / f"folder{TEMP_SUFFIX}").mkdir()  # not a file: not ours to remove
    assert sorted(sweep_leftovers(tmp_path)) == sorted([old_temp.name, older_version.name])
    assert fresh_temp.exists() and all(p.exists() for p in keep)
    assert sweep_leftovers(tmp_path, older_than=0) == [fresh_temp.name]
    assert (tmp_path / f"folder{TEMP_SUFFIX}").is_dir()
    assert sweep_leftovers(tmp_path / "absent") == []


def test_temporary_names_stay_in_the_folder_and_are_unique(tmp_path: Path) -> None:
    names = {durable.temp_name("é" * 300) for _ in range(100)}
    assert len(names) == 100
    assert all(is_temp(n) and n.startswith(".") and len(n.encode()) < 200 for n in names)
    path, fd = durable.open_temp(tmp_path, "index.json")
    os.close(fd)
    assert Path(path).parent == tmp_path and Path(path).name.startswith(".index.json.")
    with pytest.raises(ValueError, match="not a temporary file"):
        durable.discard(tmp_path / "index.json")


CHILD = """
import sys
from pathlib import Path
from archiver_app.durable import atomic_write, verified_copy

folder = Path(sys.argv[1])
sources = [folder / "src-a", folder / "src-b"]
n = 0
while True:
    data = b"ab"[n % 2 : n % 2 + 1] * SIZE
    atomic_write(folder / "written", data)
    verified_copy(sources[n % 2], folder / "copied")
    n += 1
    if n == 2:
        (folder / "ready").touch()
"""
SIZE = 2 * 1024 * 1024


def test_sigkill_at_random_moments_never_leaves_a_partial_file(tmp_path: Path) -> None:
    """A real kill: no exception handler runs, the temporary file stays, the final names
    still hold one whole version; the sweep then removes every leftover."""
    rng = random.Random(20261125)
    (tmp_path / "src-a").write_bytes(b"a" * SIZE)
    (tmp_path / "src-b").write_bytes(b"b" * SIZE)
    whole = {b"a" * SIZE, b"b" * SIZE}
    leftovers = 0
    for _ in range(12):
        (tmp_path / "ready").unlink(missing_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD.replace("SIZE", str(SIZE)), str(tmp_path)],
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while not (tmp_path / "ready").exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
            assert time.monotonic() < deadline
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.15))
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
        if proc.stderr:
            proc.stderr.close()
        assert (tmp_path / "written").read_bytes() in whole
        assert (tmp_path / "copied").read_bytes() in whole
        left = sweep_leftovers(tmp_path, older_than=0)
        leftovers += len(left)
        assert temps(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "copied",
        "ready",
        "src-a",
        "src-b",
        "written",
    ]
    assert leftovers > 0  # some kills did land between a temporary file and its rename
