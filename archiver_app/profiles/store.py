"""The profiles of a library: list, create, delete, and what Archiver notes about each.

A profile is a folder ``<library>/private/profiles/<name>/`` that Chromium fills (cookies,
local storage, cache) plus ``archiver-profile.json``, Archiver's own notes: when the profile
was made, the last login (address and time) and the user agent of the visible browser that
logged in, which headless captures on the profile present too (a site that ties a session
to the browser's identity then sees the same browser). The private folder is made readable
by its owner only. ``archiver-session-cookies.json`` keeps the session cookies Chromium
would forget (:func:`save_session_cookies`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from archiver_app.durable import atomic_write_text
from archiver_app.errors import InputError
from archiver_app.profiles import PRIVATE_DIR, check_name, profile_dir, profiles_root
from archiver_app.profiles.lock import hold, in_use

NOTES = "archiver-profile.json"
SESSION_COOKIES = "archiver-session-cookies.json"


@dataclass(frozen=True)
class ProfileInfo:
    """One profile as the CLI and the GUI list it."""

    name: str
    path: Path
    created_at: datetime | None
    last_login_url: str | None
    last_login_at: datetime | None
    user_agent: str | None
    cookies_imported_at: datetime | None
    in_use: bool
    size_bytes: int


class ProfileNotFoundError(InputError):
    """No profile of that name in this library."""


def read_notes(library_root: Path, name: str) -> dict[str, Any]:
    """Archiver's notes about profile ``name`` ({} when there are none or they are unreadable)."""
    path = profile_dir(library_root, name) / NOTES
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def update_notes(library_root: Path, name: str, **values: Any) -> None:
    """Merge ``values`` into the profile's notes (datetimes stored as ISO 8601 text)."""
    notes = read_notes(library_root, name)
    for key, value in values.items():
        notes[key] = value.isoformat() if isinstance(value, datetime) else value
    atomic_write_text(
        profile_dir(library_root, name) / NOTES, json.dumps(notes, indent=2, sort_keys=True)
    )


def save_session_cookies(library_root: Path, name: str, cookies: list[dict[str, Any]]) -> int:
    """Keep the profile's session cookies (those without an expiry time); how many.

    Chromium drops session cookies when it closes (unless the profile restores its last
    session, which would also reopen the login window's tabs in every capture), and most
    sites keep a login in one. So Archiver keeps them beside the profile and gives them back
    to each browser it starts on it (:func:`session_cookies`).
    """
    kept = [c for c in cookies if float(c.get("expires", -1)) <= 0]
    atomic_write_text(profile_dir(library_root, name) / SESSION_COOKIES, json.dumps(kept))
    return len(kept)


def session_cookies(library_root: Path, name: str) -> list[dict[str, Any]]:
    """The session cookies kept by :func:`save_session_cookies` ([] when none)."""
    try:
        data = json.loads((profile_dir(library_root, name) / SESSION_COOKIES).read_text("utf-8"))
    except (OSError, ValueError):
        return []
    return [c for c in data if isinstance(c, dict)] if isinstance(data, list) else []


def ensure_profile(library_root: Path, name: str, *, now: datetime | None = None) -> Path:
    """The profile's folder, made (with the private folder, owner-only) if it is new."""
    folder = profile_dir(library_root, name)
    if folder.is_dir():
        return folder
    private = library_root / PRIVATE_DIR
    private.mkdir(exist_ok=True)
    with contextlib.suppress(OSError):  # where permissions exist: only the owner may read
        os.chmod(private, 0o700)
    folder.mkdir(parents=True, exist_ok=True)
    update_notes(library_root, name, created_at=now or datetime.now(UTC))
    return folder


def exists(library_root: Path, name: str) -> bool:
    return profile_dir(library_root, name).is_dir()


def require(library_root: Path, name: str) -> Path:
    """The folder of existing profile ``name``.

    Raises:
        ProfileNotFoundError: there is none (the message says how to make it).
    """
    folder = profile_dir(library_root, name)
    if not folder.is_dir():
        known = ", ".join(p.name for p in list_profiles(library_root)) or "none yet"
        raise ProfileNotFoundError(
            f"there is no profile {name!r} in this library (profiles: {known}); make it with "
            f"`archiver login {name} URL` or `archiver profiles import-cookies {name} FILE`"
        )
    return folder


def list_profiles(library_root: Path) -> list[ProfileInfo]:
    """Every profile of the library, by name."""
    root = profiles_root(library_root)
    if not root.is_dir():
        return []
    out = []
    for entry in sorted(root.iterdir()):
        if entry.is_dir() and not entry.is_symlink() and not entry.name.startswith("."):
            with contextlib.suppress(InputError):  # a folder someone else put there
                out.append(describe(library_root, check_name(entry.name)))
    return out


def describe(library_root: Path, name: str) -> ProfileInfo:
    folder = require(library_root, name)
    notes = read_notes(library_root, name)
    return ProfileInfo(
        name=name,
        path=folder,
        created_at=_when(notes.get("created_at")),
        last_login_url=notes.get("last_login_url"),
        last_login_at=_when(notes.get("last_login_at")),
        user_agent=notes.get("user_agent"),
        cookies_imported_at=_when(notes.get("cookies_imported_at")),
        in_use=in_use(library_root, name),
        size_bytes=_size(folder),
    )


def delete_profile(library_root: Path, name: str) -> None:
    """Remove the profile's folder (its logins and cookies) for good.

    Raises:
        ProfileNotFoundError: there is no such profile.
        ProfileBusyError: a login window or a capture is using it.
    """
    folder = require(library_root, name)
    with hold(library_root, name):
        shutil.rmtree(folder)


def _when(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _size(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total
