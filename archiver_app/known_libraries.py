"""The libraries this computer has opened: their folder -> library id, in the config folder.

A folder that held a library and is now empty or missing is nearly always a drive not
plugged in or a share not mounted, not a place for a new library: a new empty library
there would read as everything lost, and its ``library.json`` (a new library id) would sit
in the mount point, under the real library once it is mounted again. So opening such a
folder is refused (:func:`gone_message`) unless the user asks for a new library there
explicitly (``archiver init``).

The record is a convenience of this computer, not part of any library: an unreadable or
unwritable record is treated as empty and never stops a library from opening. Two
processes recording at the same moment may lose one entry, which only means one folder
less is guarded until it is opened again.
"""

from __future__ import annotations

import json
from contextlib import suppress
from pathlib import Path

from archiver_app.durable import atomic_write_text
from archiver_app.paths import config_dir

FORMAT = "archiver-known-libraries"


def record_file() -> Path:
    return config_dir() / "libraries.json"


def _read() -> dict[str, str]:
    try:
        doc = json.loads(record_file().read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    known = doc.get("libraries") if isinstance(doc, dict) else None
    if not isinstance(known, dict):
        return {}
    return {str(k): str(v) for k, v in known.items()}


def _write(known: dict[str, str]) -> None:
    doc = {"format": FORMAT, "libraries": dict(sorted(known.items()))}
    with suppress(OSError):  # a read-only home must not stop a library from opening
        atomic_write_text(record_file(), json.dumps(doc, indent=2) + "\n", make_parent=True)


def _key(root: Path) -> str:
    return str(root.expanduser().absolute())


def known_library(root: Path) -> str | None:
    """The id of the library this computer opened at ``root``, if any."""
    return _read().get(_key(root))


def remember_library(root: Path, library_id: str) -> None:
    """Record that ``root`` holds library ``library_id`` (written only when that is new)."""
    known = _read()
    if known.get(_key(root)) != library_id:
        known[_key(root)] = library_id
        _write(known)


def library_moved(src: Path, dest: Path, library_id: str) -> None:
    """The library at ``src`` now lives at ``dest``: ``src`` is free for a new one."""
    known = _read()
    known.pop(_key(src), None)
    known[_key(dest)] = library_id
    _write(known)


def gone_message(root: Path) -> str:
    """Why a folder that held a library and holds none now is not opened."""
    return (
        f"the library that was at {root} is not there now: is its drive or share mounted? "
        f"Nothing was written (if it is gone for good, `archiver init --library {root}` "
        "starts a new library there)"
    )
