"""Folders that cannot be understood go to ``invalid/<yyyymmdd>/<name>``, never deleted.

The copy is verified file by file before anything of the original is removed. Name clashes
get a suffix (``name-1``, ``name-2`` ...), except that a folder already holding identical
copies of the files (an earlier, interrupted attempt) is reused, so retrying never piles up
duplicates.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from archiver_app.hashing import sha256_file
from archiver_app.layout.moves import (
    copy_tree_verified,
    iter_tree,
    remove_empty_dirs,
    remove_verified,
)

INVALID = "invalid"


def invalid_target(root: Path, day: datetime, src: Path) -> Path:
    """Where ``src`` goes under ``invalid/<yyyymmdd>/``: free, or holding the same files."""
    parent = root / INVALID / f"{day:%Y%m%d}"
    for n in range(10_000):
        candidate = parent / (src.name if n == 0 else f"{src.name}-{n}")
        if not candidate.exists() or _compatible(src, candidate):
            return candidate
    raise OSError(f"too many folders named {src.name} in {parent}")


def _compatible(src: Path, dst: Path) -> bool:
    for rel, real, _reason in iter_tree(src):
        if real is None:
            continue
        other = dst / rel
        if other.exists() and (
            other.stat().st_size != real.stat().st_size or sha256_file(other) != sha256_file(real)
        ):
            return False
    return True


def move_to_invalid(root: Path, src: Path, today: datetime, *, remove: bool = True) -> Path:
    """Copy ``src`` under ``invalid/``, verified; then remove the original if ``remove``.

    Entries that cannot be copied safely (symlinks leading outside) stay in ``src``.
    """
    target = invalid_target(root, today, src)
    copy = copy_tree_verified(src, target)
    target.mkdir(parents=True, exist_ok=True)  # an empty folder is kept as a folder too
    if remove:
        remove_verified(src, target, copy.files, rehash=False)
        remove_empty_dirs(src)
    return target
