"""Destinations: folders or drives marked with ``.archiver-destination.json``.

A destination is recognised by the uuid in its marker file, wherever it is mounted next
time (another mount point, another drive letter). Copies of the library's files live under
``<mount>/Archiver/<library id>/<relative path>``.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from archiver_app.durable import atomic_write_text
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.mirror.mounts import MARKER_NAME, scan_markers
from archiver_app.mirror.outcomes import Stop, StopReason
from archiver_app.store.models import Destination

MARKER_FORMAT = "archiver-destination"
DATA_DIR = "Archiver"


@dataclass(frozen=True)
class Marker:
    """The contents of a destination's marker file."""

    uuid: str
    label: str
    created: str


@dataclass(frozen=True)
class MountedDestination:
    """A destination found mounted now: its row id, label and where it is."""

    id: int
    uuid: str
    label: str
    mount: Path
    library_id: str

    @property
    def folder(self) -> Path:
        """Where this library's files live on the drive."""
        return library_folder(self.mount, self.library_id)

    def still_mounted(self) -> bool:
        """This destination is still the one mounted at its path: its own marker, not just
        a marker (another drive of this library may have been mounted there since)."""
        marker = read_marker(self.mount)
        return marker is not None and marker.uuid == self.uuid

    def folder_missing(self) -> bool:
        """Mounted, but this library's folder is not on it: see :func:`folder_missing`."""
        return folder_missing(self.mount, self.uuid, self.library_id)


def library_folder(mount: Path, library_id: str) -> Path:
    return mount / DATA_DIR / library_id


def folder_missing(mount: Path, uuid: str, library_id: str) -> bool:
    """Whether drive ``uuid`` is mounted at ``mount`` (its own marker is there) without this
    library's folder (moved aside or deleted): the copies recorded on it cannot be read, so
    none of them counts as a copy until the folder is back. A drive not mounted is not
    this: its copies are where they were, and count."""
    if library_folder(mount, library_id).is_dir():
        return False
    marker = read_marker(mount)
    return marker is not None and marker.uuid == uuid


def drives_without_folder(lib: Library) -> frozenset[int]:
    """The drives in use mounted where they were last seen without this library's folder
    (:func:`folder_missing`): their copies count nowhere. A marker read per drive."""
    with lib.session() as s:
        rows = s.execute(
            select(Destination.id, Destination.uuid, Destination.last_mount_path).where(
                Destination.enabled.is_(True), Destination.last_mount_path.is_not(None)
            )
        ).all()
    return frozenset(
        did for did, uuid_, where in rows if where and folder_missing(Path(where), uuid_, lib.id)
    )


class LibraryFolderMissing(FileNotFoundError):
    """The drive is mounted (its marker is there) but this library's folder is not on it:
    moved aside or deleted. Its copies cannot be read, and no run re-creates the folder."""

    def __init__(self, dest: MountedDestination) -> None:
        super().__init__(
            errno.ENOENT, "this library's folder is not on the drive", str(dest.folder)
        )
        self.folder = dest.folder

    @property
    def stop(self) -> Stop:
        """Why a run leaves the drive, as a value."""
        return Stop(StopReason.NO_LIBRARY_FOLDER, f"expected at {self.folder}")


def require_library_folder(dest: MountedDestination) -> None:
    """Raises :class:`LibraryFolderMissing` when ``dest`` is still mounted but this
    library's folder is not on it, or FileNotFoundError when the drive itself is gone.

    The library's folder is made when the drive is added, never by a run, which would
    write under the mount point of a drive no longer mounted."""
    if dest.folder.is_dir():
        return
    if dest.still_mounted():
        raise LibraryFolderMissing(dest)
    raise FileNotFoundError(errno.ENOENT, "the drive's marker is gone too", str(dest.mount))


def read_marker(root: Path) -> Marker | None:
    """The marker at ``root``, or None when absent or unreadable (an unknown folder)."""
    try:
        data = json.loads((root / MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("format") != MARKER_FORMAT:
        return None
    try:
        return Marker(
            uuid=str(uuid.UUID(str(data["uuid"]))),
            label=str(data.get("label", "")),
            created=str(data.get("created", "")),
        )
    except (KeyError, ValueError):
        return None


def write_marker(root: Path, marker: Marker) -> None:
    payload = {
        "format": MARKER_FORMAT,
        "uuid": marker.uuid,
        "label": marker.label,
        "created": marker.created,
    }
    atomic_write_text(root / MARKER_NAME, json.dumps(payload, indent=2) + "\n")


def validate_label(label: str) -> str:
    text = label.strip()
    if not text or len(text) > 200 or any(ord(ch) < 32 for ch in text) or "," in text:
        raise InputError(
            f"invalid drive label {label!r}: use 1 to 200 printable characters, no commas"
        )
    return text


def _refuse_overlap(root: Path, other: Path, what: str) -> None:
    """A drive's folder must be apart from ``other``: copies inside the library are no
    copies (they go with it), and copies inside another drive go with that drive."""
    here = root.resolve()
    if here == other or here.is_relative_to(other) or other.is_relative_to(here):
        raise InputError(
            f"{root} is {'inside' if here.is_relative_to(other) else 'around'} {what} "
            f"({other}): give a folder apart from it, on another disk"
        )


def add_destination(
    lib: Library, path: str | os.PathLike[str], label: str | None = None
) -> Destination:
    """Mark ``path`` as a destination named ``label`` (reusing an existing marker's uuid).

    Without a label, the marker's label (a drive used before) or the folder's name is used.

    Raises:
        InputError: the folder is missing, not writable, or already known under this
            label or uuid; nothing was written in that case.
    """
    root = Path(path).expanduser().absolute()
    if label is None:
        previous = read_marker(root)
        label = previous.label if previous and previous.label else root.name
    label = validate_label(label)
    if not root.is_dir():
        raise InputError(f"{root} is not a folder; mount the drive and give its folder")
    if not os.access(root, os.W_OK | os.X_OK):
        raise InputError(f"{root} is not writable (read-only or permission denied)")
    _refuse_overlap(root, lib.root.resolve(), "the library's folder")
    existing = read_marker(root)
    with lib.write() as s:
        if s.scalar(select(Destination).where(Destination.label == label)) is not None:
            raise InputError(f"a destination is already labelled {label!r}")
        if existing is not None:
            known = s.scalar(select(Destination).where(Destination.uuid == existing.uuid))
            if known is not None:
                raise InputError(
                    f"{root} is already the destination {known.label!r} of this library"
                )
        for other in s.scalars(select(Destination)):
            if other.last_mount_path and Path(other.last_mount_path).is_dir():
                _refuse_overlap(root, Path(other.last_mount_path).resolve(),
                                f"drive {other.label!r}")  # fmt: skip
        marker = existing or Marker(
            uuid=str(uuid.uuid4()), label=label, created=lib.clock().isoformat(timespec="seconds")
        )
        try:
            if existing is None:
                write_marker(root, marker)
            library_folder(root, lib.id).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot write to {root}: {exc.strerror or exc}") from exc
        usage = shutil.disk_usage(root)
        row = Destination(
            uuid=marker.uuid,
            label=label,
            last_mount_path=str(root),
            capacity_bytes=usage.total,
            free_bytes=usage.free,
            last_seen_at=lib.clock(),
        )
        s.add(row)
        s.flush()
        return row


def get_destination(session: Session, label: str) -> Destination:
    row = session.scalar(select(Destination).where(Destination.label == label))
    if row is None:
        labels = session.scalars(select(Destination.label).order_by(Destination.label)).all()
        known = (
            ", ".join(labels) or "none yet (add one with: archiver drives add PATH --label NAME)"
        )
        raise InputError(f"no destination labelled {label!r}; known: {known}")
    return row


def find_mounted(
    lib: Library, *, scan_roots: Sequence[Path] | None = None, rescan: bool = False
) -> dict[int, MountedDestination]:
    """Destinations mounted now, by id; records where each was found and its free space.

    The last mount path is tried first; then (for the rest, or all with ``rescan``) the OS
    mount points (or ``scan_roots``) are searched for markers, so a drive is recognised
    wherever it is. A drive still at its last path is found with ``rescan`` too (a folder
    outside the mount points was "not mounted" to ``drives scan`` and mounted to ``drives``).
    """
    with lib.session() as s:
        rows = s.scalars(select(Destination).where(Destination.enabled.is_(True))).all()
    found: dict[int, Path] = {}
    for row in rows:
        if row.last_mount_path:
            last = Path(row.last_mount_path).absolute()  # relative once: a --scan-root's
            marker = read_marker(last)
            if marker is not None and marker.uuid == row.uuid:
                found[row.id] = last
    if rescan or len(found) < len(rows) or scan_roots:
        by_uuid = scan_markers(scan_roots)
        for row in rows:
            if row.id not in found and row.uuid in by_uuid:
                found[row.id] = by_uuid[row.uuid]
    now = lib.clock()
    with lib.write() as s:
        for dest_id, mount in found.items():
            row_w = s.get(Destination, dest_id)
            if row_w is None:
                continue
            row_w.last_mount_path, row_w.last_seen_at = str(mount), now
            try:
                usage = shutil.disk_usage(mount)
                row_w.capacity_bytes, row_w.free_bytes = usage.total, usage.free
            except OSError:
                pass
    labels = {row.id: (row.uuid, row.label) for row in rows}
    return {
        i: MountedDestination(i, labels[i][0], labels[i][1], p, lib.id) for i, p in found.items()
    }


def unknown_markers(lib: Library, scan_roots: Sequence[Path] | None = None) -> dict[str, Path]:
    """Marked folders found on mount points that this library does not know (uuid -> path)."""
    with lib.session() as s:
        known = set(s.scalars(select(Destination.uuid)).all())
    return {u: p for u, p in scan_markers(scan_roots).items() if u not in known}
