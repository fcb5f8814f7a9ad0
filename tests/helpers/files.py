"""Helpers to prove that a failing operation left a folder exactly as it was."""

from __future__ import annotations

import hashlib
from pathlib import Path


def tree_digest(root: Path) -> dict[str, tuple[int, str]]:
    """Every file under ``root`` with its size and sha256 (symlinks by target name)."""
    result: dict[str, tuple[int, str]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            result[rel] = (-1, str(path.readlink()))
        elif path.is_file():
            data = path.read_bytes()
            result[rel] = (len(data), hashlib.sha256(data).hexdigest())
    return result
