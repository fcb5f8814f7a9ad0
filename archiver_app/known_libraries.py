"""The libraries this computer has opened: their folder -> library id, in the config folder.

A folder that held a library and is now empty or missing is nearly always a drive not
plugged in or a share not mounted, not a place for a new library: a new empty library
there would read as everything lost, and its ``library.json`` (a new library id) would sit
in the mount point, under the real library once it is mounted again. So opening such a
folder is refused (:func:`gone_message`) unless the user asks for a new library there
explicitly (``archiver init``).

A library moved by ``archiver move-library`` (or the app's File > Move Library…) leaves
its old place recorded as moved, with where to: opening it says where the library is now
(:class:`LibraryMovedError`), and ``archiver init`` makes a new library there only when
forced.

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
from archiver_app.errors import LibraryError
from archiver_app.paths import config_dir

FORMAT = "archiver-known-libraries"


def record_file() -> Path:
    return config_dir() / "libraries.json"


class LibraryMovedError(LibraryError):
    """The library that was at a folder was moved elsewhere: :attr:`moved_to` says where."""

    def __init__(self, root: Path, moved_to: Path) -> None:
        super().__init__(moved_message(root, moved_to))
        self.root, self.moved_to = root, moved_to


def _read() -> tuple[dict[str, str], dict[str, str]]:
    """The libraries known (folder -> id) and the places moved from (folder -> folder)."""
    try:
        doc = json.loads(record_file().read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}, {}
    return _mapping(doc, "libraries"), _mapping(doc, "moved")


def _mapping(doc: object, name: str) -> dict[str, str]:
    found = doc.get(name) if isinstance(doc, dict) else None
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _write(known: dict[str, str], moved: dict[str, str]) -> None:
    doc: dict[str, object] = {"format": FORMAT, "libraries": dict(sorted(known.items()))}
    if moved:
        doc["moved"] = dict(sorted(moved.items()))
    with suppress(OSError):  # a read-only home must not stop a library from opening
        atomic_write_text(record_file(), json.dumps(doc, indent=2) + "\n", make_parent=True)


def _key(root: Path) -> str:
    return str(root.expanduser().absolute())


def known_library(root: Path) -> str | None:
    """The id of the library this computer opened at ``root``, if any."""
    return _read()[0].get(_key(root))


def moved_to(root: Path) -> Path | None:
    """Where the library that was at ``root`` was moved (the last place of a chain of
    moves), if it was moved from there."""
    moved = _read()[1]
    place, seen = _key(root), set()
    while place in moved and place not in seen:
        seen.add(place)
        place = moved[place]
    return Path(place) if seen else None


def remember_library(root: Path, library_id: str) -> None:
    """Record that ``root`` holds library ``library_id`` (written only when that is new)."""
    known, moved = _read()
    if known.get(_key(root)) != library_id or _key(root) in moved:
        known[_key(root)] = library_id
        moved.pop(_key(root), None)  # a library is here (again)
        _write(known, moved)


def library_moved(src: Path, dest: Path, library_id: str, *, staging: Path | None = None) -> None:
    """The library at ``src`` now lives at ``dest``: ``src`` is remembered as moved there
    (``staging``, the move's own copy on its way, is forgotten if it was recorded)."""
    known, moved = _read()
    for place in (src, dest, *([staging] if staging else [])):
        known.pop(_key(place), None)
    moved.pop(_key(dest), None)
    moved[_key(src)] = _key(dest)
    known[_key(dest)] = library_id
    _write(known, moved)


def moved_message(root: Path, dest: Path) -> str:
    """Why a folder a library was moved from is not opened (nor made a new library)."""
    return f"the library that was at {root} was moved to {dest}: use --library {dest}"


def gone_message(root: Path) -> str:
    """Why a folder that held a library and holds none now is not opened."""
    return (
        f"the library that was at {root} is not there now: is its drive or share mounted? "
        f"Nothing was written (if it is gone for good, `archiver init --library {root}` "
        "starts a new library there)"
    )
