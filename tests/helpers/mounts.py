"""Real file systems with real limits: read-only folders and small "drives".

As root (CI and this machine) these are actual mounts: a read-only bind mount, a tmpfs of a
fixed size. Without root, a read-only folder falls back to permissions, and size-limited
drives are skipped with the reason.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True, check=False).returncode == 0


@contextmanager
def read_only_folder(path: Path) -> Iterator[Path]:
    """Make ``path`` (an existing folder) unwritable for the duration."""
    if _is_root():
        if not _mount("--bind", "-o", "ro", str(path), str(path)):
            pytest.skip("cannot bind-mount read-only here")
        try:
            yield path
        finally:
            subprocess.run(["umount", str(path)], check=True)
    else:
        mode = path.stat().st_mode
        path.chmod(0o555)
        try:
            yield path
        finally:
            path.chmod(mode)


@contextmanager
def small_drive(path: Path, size_kib: int) -> Iterator[Path]:
    """A tmpfs of ``size_kib`` KiB mounted at ``path``: writes past it fail with ENOSPC."""
    path.mkdir(parents=True, exist_ok=True)
    if not _is_root() or not _mount("-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(path)):
        pytest.skip("size-limited drives need root (mount -t tmpfs)")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)
