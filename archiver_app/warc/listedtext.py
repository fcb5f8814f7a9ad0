"""The texts a pages list gives (``pages.jsonl``'s ``"text"``), set aside while it is read.

A WACZ's or a folder export's pages list may hold each page's text as the capturing tool
recorded it (the rendered page's, a PDF's). The list is read once, before its WARCs are
indexed; each text goes to a temporary file as it comes (:class:`TextSpill`) and its
listing keeps only where it is (:data:`TextRef`), so memory holds the listings, not the
texts, and the indexer's worker reads a text back (:class:`TextReader`) when it makes the
page the listing names: one more read of each text, no second read of the list.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO

#: Where a text is in the spill file: (offset, length in bytes).
TextRef = tuple[int, int]
#: Makes the spill file: its path and a descriptor to write it (``durable.open_temp``).
Opener = Callable[[], tuple[str, int]]


class TextSpill:
    """Texts written one after the other to a file made when the first one comes. Close
    it before it is read; the caller removes the file when the import is done."""

    def __init__(self, opener: Opener) -> None:
        self._opener = opener
        self._out: IO[bytes] | None = None
        self._at = 0
        self.path: Path | None = None  # None until a text is added

    def add(self, text: object) -> TextRef | None:
        """Keep ``text``; where it is, or None when it is no text (not a string, or blank)."""
        if not isinstance(text, str) or not text.strip():
            return None
        if self._out is None:
            path, fd = self._opener()
            self.path, self._out = Path(path), os.fdopen(fd, "wb")
        data = text.encode("utf-8", errors="replace")
        self._out.write(data)
        ref = (self._at, len(data))
        self._at += len(data)
        return ref

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None


class TextReader:
    """Reads texts back from a spill file (opened at the first read). Single use."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._in: IO[bytes] | None = None

    def read(self, ref: TextRef, max_bytes: int) -> str | None:
        """The text at ``ref``, its first ``max_bytes`` bytes at most; None when there is
        no file to read it from."""
        if self.path is None:
            return None
        if self._in is None:
            self._in = self.path.open("rb")
        offset, length = ref
        self._in.seek(offset)
        return self._in.read(min(length, max_bytes)).decode("utf-8", errors="replace")

    def close(self) -> None:
        if self._in is not None:
            self._in.close()
            self._in = None


__all__ = ["Opener", "TextReader", "TextRef", "TextSpill"]
