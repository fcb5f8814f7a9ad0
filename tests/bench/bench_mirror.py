"""Mirror a ~1 GiB tree to a fresh drive; print our time as a ratio to rsync -a and cp -a.

The tree is the shared WARC corpus (tests/bench/corpus.py) plus 10,000 small files, laid
out as a library. The destination is a fresh loop-mounted ext4 image (a drive of its own,
as a USB disk would be) when we may mount, else a folder. Every tool copies the same tree
to its own fresh folder on that drive with the source in the page cache; the drive is
synced (untimed) before each. Our run verifies the sha256 of every destination copy
(re-read after dropping its cached pages; a source is hashed only when its copy reads back
wrong) and makes the copies durable; rsync -a and cp -a do neither, so "rsync -a + sync"
is printed as well. CPU seconds are printed beside each time: on a shared machine the
wall time is mostly the share of the cores a run got.

Run: .venv/bin/python tests/bench/bench_mirror.py [--mib 1024] [--small 10000] [--ours-only]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sqlalchemy import delete

from archiver_app.library import Library
from archiver_app.mirror import add_destination, run_mirror, set_policy
from archiver_app.mirror.copier import sync_filesystem
from archiver_app.store.files import register_file
from archiver_app.store.models import Copy, Destination, Setting
from tests.bench.common import report
from tests.bench.corpus import build_corpus, default_corpus_folder


@contextlib.contextmanager
def fresh_drive(work: Path, size_bytes: int, use_loop: bool) -> Iterator[tuple[Path, str]]:
    """A fresh ext4 file system on a loop device (root only), else a plain folder."""
    mount = work / "drive"
    mount.mkdir()
    if use_loop and os.geteuid() == 0:
        image = work / "drive.img"
        with image.open("wb") as fh:
            fh.truncate(size_bytes)
        made = subprocess.run(
            ["mkfs.ext4", "-q", "-F", str(image)], check=False, capture_output=True
        )
        if (
            made.returncode == 0
            and subprocess.run(
                ["mount", "-o", "loop", str(image), str(mount)], check=False, capture_output=True
            ).returncode
            == 0
        ):
            try:
                yield mount, "loop-mounted ext4 image"
            finally:
                subprocess.run(["umount", str(mount)], check=False)
                image.unlink()
            return
    yield mount, "folder on the working file system"


def build_library(
    root: Path, corpus_files: list[Path], small: int, seed: int
) -> tuple[Library, int, int]:
    lib = Library.open(root)
    lib.ensure_collection("bench")
    rng = random.Random(seed)
    nbytes = 0
    with lib.write() as s:
        for i, warc in enumerate(corpus_files):
            rel = f"collections/bench/2024/01/warc{i:03d}/{warc.name}"
            dest = root / rel
            dest.parent.mkdir(parents=True)
            try:
                os.link(warc, dest)
            except OSError:
                shutil.copyfile(warc, dest)
            register_file(s, root, rel, "warc")
            nbytes += dest.stat().st_size
        for i in range(small):
            rel = f"collections/bench/2024/02/snap{i // 100:03d}/file{i % 100:02d}.txt"
            dest = root / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            data = rng.randbytes(rng.randrange(200, 8000))
            dest.write_bytes(data)
            register_file(s, root, rel, "text")
            nbytes += len(data)
    return lib, len(corpus_files) + small, nbytes


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def open_library(folder: Path, corpus_files: list[Path], small: int) -> tuple[Library, int, int]:
    """The benchmark library, built once and kept beside the corpus (hashing 1 GiB takes a
    while on a busy machine); reused with its destinations and copies forgotten."""
    ready = folder / "bench-ready.json"
    if ready.exists():
        data = json.loads(ready.read_text())
        lib = Library.open(folder, create=False)
        with lib.write() as s:
            s.execute(delete(Copy))
            s.execute(delete(Destination))
            s.execute(delete(Setting).where(Setting.key == "retention.default"))
        return lib, data["files"], data["bytes"]
    if folder.exists():
        shutil.rmtree(folder)
    lib, nfiles, nbytes = build_library(folder, corpus_files, small, seed=1)
    ready.write_text(json.dumps({"files": nfiles, "bytes": nbytes}))
    return lib, nfiles, nbytes


def sha256_speed() -> float:
    """MB hashed per CPU second, measured now (explains most of our time)."""
    block = os.urandom(1 << 20)
    digest = hashlib.sha256()
    start = time.process_time()
    for _ in range(64):
        digest.update(block)
    return 64 * 1.048576 / max(1e-9, time.process_time() - start)


def floor_rows(
    times: dict[str, float], nbytes: int, sha_mb_per_cpu_s: float
) -> list[tuple[str, str]]:
    """What no verified, durable copy can beat on this machine, from this run's figures.

    A durable copy cannot be faster than rsync -a + sync (the same bytes written and
    flushed), and verifying every copy hashes every byte once: at best spread over all
    cores with nothing else to do.
    """
    rsync = times["rsync -a"]
    cores = os.cpu_count() or 1
    hashing = nbytes / 1e6 / sha_mb_per_cpu_s
    floor = max(times["rsync -a + sync"], hashing / cores)
    return [
        (
            "floor: durable copy",
            f"rsync -a + sync = {times['rsync -a + sync'] / rsync:.2f}x rsync -a",
        ),
        (
            "floor: sha256 once",
            f"{hashing:.2f} CPU-s, over {cores} cores {hashing / cores / rsync:.2f}x rsync -a",
        ),
        ("floor: the larger", f"{floor / rsync:.2f}x rsync -a (the target is 1.3x)"),
    ]


def cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mib", type=int, default=1024, help="corpus size in MiB")
    parser.add_argument("--small", type=int, default=10_000, help="small files added")
    parser.add_argument("--corpus", type=Path, help="corpus folder (default: the shared cache)")
    parser.add_argument("--no-loop", action="store_true", help="do not mount a fresh drive")
    parser.add_argument(
        "--ours-only", action="store_true", help="skip rsync and cp (profiling our run)"
    )
    args = parser.parse_args(argv)
    corpus_folder = args.corpus or default_corpus_folder(args.mib << 20)
    corpus = build_corpus(corpus_folder, total_bytes=args.mib << 20)
    start = time.perf_counter()
    lib_folder = corpus_folder.with_name(f"{corpus_folder.name}-library-{args.small}")
    lib, nfiles, nbytes = open_library(lib_folder, corpus.files, args.small)
    sha_speed = sha256_speed()
    print(
        f"library: {nfiles:,} files, {nbytes / 2**20:.0f} MiB"
        f" (ready in {time.perf_counter() - start:.0f}s); sha256 {sha_speed:.0f} MB"
        " per CPU second"
    )
    source = lib.root / "collections"
    times: dict[str, float] = {}
    cpu: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-mirror-") as tmp:
        work = Path(tmp)
        size = int(nbytes * 2.6) * 2 + (512 << 20)
        with fresh_drive(work, size, not args.no_loop) as (drive, kind):
            warm = ["cat", *map(str, source.rglob("*.warc.gz"))]  # the source in the page cache
            subprocess.run(warm, check=False, stdout=subprocess.DEVNULL)
            rsync = shutil.which("rsync")

            def settle() -> None:
                sync_filesystem(drive)

            def tool(name: str, cmd: list[str]) -> None:
                settle()
                before = cpu_children()
                times[name] = timed(lambda: subprocess.run(cmd, check=True))
                cpu[name] = cpu_children() - before

            if rsync and not args.ours_only:
                tool("rsync -a", [rsync, "-a", f"{source}/", str(drive / "rsync")])
                times["rsync -a + sync"] = times["rsync -a"] + timed(settle)
            if not args.ours_only:
                tool("cp -a", ["cp", "-a", str(source), str(drive / "cp")])
            settle()
            (drive / "ours").mkdir()
            add_destination(lib, drive / "ours", "bench")
            set_policy(lib, batch_size=500, parallelism=2)
            results = []
            before = cpu_self()
            times["archiver mirror"] = timed(lambda: results.append(run_mirror(lib)))
            cpu["archiver mirror"] = cpu_self() - before
            result = results[0]
            assert result.ok and result.copied == nfiles, result.describe()
    lib.close()
    ours = times["archiver mirror"]
    rows = [
        (k, f"{v:6.2f} s" + (f"  (CPU {cpu[k]:.2f} s)" if k in cpu else ""))
        for k, v in times.items()
    ]
    if "rsync -a" in times:
        rows.append(("ratio to rsync -a", f"{ours / times['rsync -a']:.2f}x (target <= 1.3)"))
        rows.append(("ratio to rsync -a + sync", f"{ours / times['rsync -a + sync']:.2f}x"))
    if "cp -a" in times:
        rows.append(("ratio to cp -a", f"{ours / times['cp -a']:.2f}x"))
    if "rsync -a" in times:
        rows.extend(floor_rows(times, nbytes, sha_speed))
    report(
        f"mirror {nfiles:,} files, {nbytes / 2**20:.0f} MiB to a fresh {kind}; "
        "every copy sha256-verified",
        rows,
    )
    return times


if __name__ == "__main__":
    main()
