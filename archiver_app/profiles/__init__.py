"""Named browser profiles: where a library keeps the logins a user made by hand.

A profile is a Chromium user-data folder under the library's private folder
(`<library root>/private/profiles/<name>/`). Captures, crawls, watches and capture-while-
browsing that name a profile run Chromium on it, so they see what the user sees when logged
in. The private folder is never exported or mirrored unless the user asks.

- :mod:`.store`: list, create and delete profiles, and what Archiver notes about each
  (``archiver-profile.json``: when it was made, the last login, the browser's user agent);
- :mod:`.lock`: one process at a time on a profile folder (Chromium locks it too);
- :mod:`.cookies_txt`: reading a Netscape ``cookies.txt`` file;
- :mod:`.session`: the Playwright side: the visible login window, adding cookies.
"""

from __future__ import annotations

import re
from pathlib import Path

from archiver_app.errors import InputError

PRIVATE_DIR = "private"
PROFILES_DIR = "profiles"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class ProfileNameError(InputError):
    """A profile name that cannot be a folder name on every platform."""


def check_name(name: str) -> str:
    """Return ``name`` if it is a valid profile name, else raise :class:`ProfileNameError`."""
    if not _NAME.match(name) or name in {".", ".."}:
        raise ProfileNameError(
            f"{name!r} is not a profile name: use letters, digits, '.', '_' or '-' "
            "(at most 64, starting with a letter or digit)"
        )
    return name


def profiles_root(library_root: Path) -> Path:
    """The folder that holds every profile of the library at ``library_root``."""
    return library_root / PRIVATE_DIR / PROFILES_DIR


def profile_dir(library_root: Path, name: str) -> Path:
    """The Chromium user-data folder of profile ``name`` (not created here)."""
    return profiles_root(library_root) / check_name(name)
