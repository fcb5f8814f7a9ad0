"""Bundle size and start-up time of the frozen app, against the source app as the anchor.

Run after ``make dist``::

    .venv/bin/python tests/bench/bench_frozen.py [--app dist/archiver/archiver] [--runs 5]

Prints the bundle's size (total, and its largest parts) and, for ``--version`` and
``--self-test`` (the main window shown offscreen), the cold and warm wall time of the frozen
app and of ``.venv/bin/archiver`` run from source, with their ratio. "Cold" means the
files of the app under test (the bundle, or the virtualenv) were dropped from the page
cache first with ``posix_fadvise(DONTNEED)``, so they are read from disk again; shared
system libraries may still be cached. Only this process's own files are evicted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tree_size(root: Path) -> int:
    """Bytes of the regular files under ``root`` (symlinks are not followed or counted)."""
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                total += os.lstat(path).st_size
    return total


def largest_parts(internal: Path, top: int = 12) -> list[tuple[str, int]]:
    """The biggest entries of the bundle, descending into PySide6/Qt and playwright."""
    parts: list[tuple[str, int]] = []
    expand = {"PySide6", "PySide6/Qt", "PySide6/Qt/lib", "playwright", "playwright/driver"}

    def visit(folder: Path, rel: str) -> None:
        for entry in sorted(folder.iterdir()):
            name = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_symlink():
                continue
            if entry.is_dir() and name in expand:
                visit(entry, name)
            else:
                parts.append((name, tree_size(entry) if entry.is_dir() else entry.stat().st_size))

    visit(internal, "")
    return sorted(parts, key=lambda p: -p[1])[:top]


def evict(paths: Iterable[Path]) -> int:
    """Drop these files (recursively) from the page cache; returns how many were advised."""
    count = 0
    for root in paths:
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                path = os.path.join(dirpath, name)
                if os.path.islink(path):
                    continue
                try:
                    fd = os.open(path, os.O_RDONLY)
                except OSError:
                    continue
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    count += 1
                finally:
                    os.close(fd)
    return count


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {result.stdout}{result.stderr}")
    return elapsed


def start_times(
    cmd: list[str], cache_roots: list[Path], runs: int, env: dict[str, str]
) -> tuple[float, float]:
    """(median cold, median warm) seconds."""
    cold, warm = [], []
    for _ in range(runs):
        evict(cache_roots)
        cold.append(timed(cmd, env))
        warm.append(timed(cmd, env))
    return statistics.median(cold), statistics.median(warm)


def human(n: float) -> str:
    return f"{n / 1024**2:.0f} MB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", type=Path, default=ROOT / "dist" / "archiver" / "archiver")
    parser.add_argument("--source", type=Path, default=Path(sys.executable).with_name("archiver"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    app: Path = args.app.absolute()
    if not app.is_file():
        raise SystemExit(f"{app} not found: run make dist first")
    bundle = app.parent
    tarballs = sorted((ROOT / "dist").glob("archiver-*-linux-*.tar.gz"))

    print(f"bundle {bundle}: {human(tree_size(bundle))}")
    if tarballs:
        print(f"tarball {tarballs[-1].name}: {human(tarballs[-1].stat().st_size)}")
    for name, size in largest_parts(bundle / "_internal"):
        print(f"  {size / 1024**2:7.1f} MB  {name}")

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QTWEBENGINE_DISABLE_SANDBOX": "1"}
    venv = Path(sys.prefix)
    with tempfile.TemporaryDirectory() as tmp:
        lib = str(Path(tmp) / "lib")
        subprocess.run([str(app), "--library", lib, "init"], capture_output=True, check=True)
        print(f"\nstart-up, median of {args.runs} (cold: app files evicted from the page cache)")
        print(f"{'command':<12} {'frozen cold':>12} {'frozen warm':>12} "
              f"{'source cold':>12} {'source warm':>12} {'ratio warm':>11}")  # fmt: skip
        for label, extra in (("--version", ["--version"]), ("--self-test", ["--self-test"])):
            cmd_args = ["--library", lib, *extra] if extra != ["--version"] else extra
            f_cold, f_warm = start_times([str(app), *cmd_args], [bundle], args.runs, env)
            s_cold, s_warm = start_times(
                [str(args.source), *cmd_args], [venv, ROOT / "archiver_app"], args.runs, env
            )
            print(f"{label:<12} {f_cold:>11.2f}s {f_warm:>11.2f}s {s_cold:>11.2f}s "
                  f"{s_warm:>11.2f}s {f_warm / s_warm:>10.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
