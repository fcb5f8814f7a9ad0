"""Files a person chose in a page's file inputs while browsing, put back into the requests
that send them.

The browser sends a chosen file from disk: neither DevTools' request events nor
``Network.getRequestPostData`` hold its bytes (a form's ``multipart/form-data`` body comes
back with each file's part empty), so an upload was recorded without the file. The page
reads each file as it is chosen (:mod:`.inpage`, a ``files`` note) and
:meth:`ChosenFiles.fill` puts the bytes into the empty part that names the file.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable

#: The most bytes of chosen files a tab keeps (the page reads no more than this either).
MAX_CHOSEN_BYTES = 32 << 20

_FILENAME = re.compile(rb'\bfilename="([^"]*)"', re.IGNORECASE)


def parse_chosen_files(payload: str) -> list[tuple[str, bytes]]:
    """The files (name, bytes) in a binding call's ``payload``; none for anything else (a
    page can call the binding too: only the shape is trusted)."""
    if len(payload) > MAX_CHOSEN_BYTES * 2:
        return []
    try:
        raw = json.loads(payload)
    except ValueError:
        return []
    if (
        not isinstance(raw, dict)
        or raw.get("kind") != "files"
        or not isinstance(raw.get("files"), list)
    ):
        return []
    files = []
    for item in raw["files"][:100]:
        if not isinstance(item, dict):
            continue
        name, data = item.get("name"), item.get("data")
        if isinstance(name, str) and isinstance(data, str) and 0 < len(name) <= 1000:
            try:
                files.append((name, base64.b64decode(data, validate=True)))
            except (binascii.Error, ValueError):
                continue
    return files


def multipart_name(name: str) -> bytes:
    """A file's name as Chromium writes it in a part's ``filename=""`` (UTF-8, with the
    quote and line breaks escaped)."""
    escaped = name.replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")
    return escaped.encode("utf-8")


class ChosenFiles:
    """The files chosen in a tab's pages, newest kept by name, at most
    :data:`MAX_CHOSEN_BYTES` in all. Used from the tab's event loop only."""

    def __init__(self) -> None:
        self._files: dict[bytes, bytes] = {}

    def take(self, payload: str) -> None:
        """Keep the files of a ``files`` note (anything else is ignored)."""
        for name, data in parse_chosen_files(payload):
            key = multipart_name(name)
            self._files.pop(key, None)
            if data and sum(map(len, self._files.values())) + len(data) <= MAX_CHOSEN_BYTES:
                self._files[key] = data

    def fill(self, headers: Iterable[tuple[str, str]], body: bytes) -> bytes:
        """``body`` with each empty file part of a ``multipart/form-data`` body that names
        a chosen file holding that file's bytes (the body as it is otherwise)."""
        kind = next((str(v) for k, v in headers if k.lower() == "content-type"), "")
        boundary = _boundary(kind)
        if not self._files or not body or boundary is None:
            return body
        delimiter = b"--" + boundary
        parts = body.split(delimiter)
        for i, part in enumerate(parts[1:], start=1):
            head_end = part.find(b"\r\n\r\n")
            if head_end < 0 or part[head_end + 4 :] != b"\r\n":
                continue  # not an empty part (or the closing one)
            match = _FILENAME.search(part[:head_end])
            data = self._files.get(match.group(1)) if match else None
            if data is not None:
                parts[i] = part[: head_end + 4] + data + b"\r\n"
        return delimiter.join(parts)


def _boundary(content_type: str) -> bytes | None:
    kind, _, params = content_type.partition(";")
    if kind.strip().lower() != "multipart/form-data":
        return None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "boundary" and value.strip().strip('"'):
            return value.strip().strip('"').encode("latin-1", "replace")
    return None
