"""Streaming SHA-256 of files and byte streams (constant memory, large buffers)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import BinaryIO

BUFFER = 1024 * 1024


def sha256_file(path: Path, buffer: int = BUFFER) -> str:
    """Hex SHA-256 of the file at ``path``."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(buffer):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_stream(stream: BinaryIO, buffer: int = BUFFER) -> tuple[str, int]:
    """Hex SHA-256 and size of everything left in ``stream``."""
    digest = hashlib.sha256()
    size = 0
    while chunk := stream.read(buffer):
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size
