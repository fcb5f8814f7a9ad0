"""Where drives get mounted, and scanning those places for destination markers.

Linux mounts removable drives under ``/media/<user>/<name>``, ``/run/media/<user>/<name>``
or ``/mnt/<name>``; macOS under ``/Volumes/<name>``; Windows gives them drive letters.
Scanning is on demand (the GUI calls it on a timer): it only lists a few folders.
"""

from __future__ import annotations

import json
import platform
import string
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

#: The file that marks a folder or drive as a destination (its uuid); defined here only.
MARKER_NAME = ".archiver-destination.json"


def default_scan_roots(system: str | None = None) -> list[Path]:
    """The OS's mount folders, for ``system`` as ``platform.system()`` names it."""
    system = system or platform.system()
    if system == "Darwin":
        return [Path("/Volumes")]
    if system == "Windows":
        return [Path(f"{letter}:\\") for letter in string.ascii_uppercase]
    return [Path("/media"), Path("/run/media"), Path("/mnt")]


def candidate_folders(roots: Sequence[Path]) -> Iterator[Path]:
    """Each root, its children and grandchildren (``/media/<user>/<drive>``)."""
    for root in roots:
        yield root
        for child in _subfolders(root):
            yield child
            yield from _subfolders(child)


def _subfolders(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:  # absent, no permission, a stale network mount
        return []


def scan_markers(roots: Sequence[Path] | None = None) -> dict[str, Path]:
    """Destination markers found under ``roots`` (default: the OS's mount folders).

    Returns uuid -> the folder holding the marker (the first found wins), as an absolute
    path (a relative root is taken from the current folder).
    """
    found: dict[str, Path] = {}
    places = [root.absolute() for root in roots] if roots else default_scan_roots()
    for folder in candidate_folders(places):  # absolute: where a drive was is stored
        try:
            data = json.loads((folder / MARKER_NAME).read_text(encoding="utf-8"))
            key = str(uuid.UUID(str(data["uuid"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        found.setdefault(key, folder)
    return found
