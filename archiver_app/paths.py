"""Where things live on disk. Pure functions (nothing is created at import or call time),
except :func:`remember_library_root`, which writes the remembered library place."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from archiver_app.durable import atomic_write_text

APP_NAME = "Archiver"
APP_AUTHOR = "Archiver"
LIBRARY_ENV = "ARCHIVER_LIBRARY"


def default_library_root() -> Path:
    """The library used when neither ``--library`` nor ``ARCHIVER_LIBRARY`` is given."""
    return Path(platformdirs.user_data_dir(APP_NAME, APP_AUTHOR)) / "Library"


def config_dir() -> Path:
    """Per-user settings folder (window geometry, recent libraries)."""
    return Path(platformdirs.user_config_dir(APP_NAME, APP_AUTHOR))


def cache_dir() -> Path:
    """Per-user folder for what can be made again (Node.js's compiled driver code)."""
    return Path(platformdirs.user_cache_dir(APP_NAME, APP_AUTHOR))


def location_file() -> Path:
    """Where the library's place is remembered after it was moved or chosen elsewhere."""
    return config_dir() / "library-location"


def remembered_library_root() -> Path | None:
    """The library place remembered by :func:`remember_library_root`, if any."""
    try:
        text = location_file().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return Path(text) if text else None


def remember_library_root(root: Path) -> None:
    """Make ``root`` the library every front end opens by default (atomic write)."""
    target = location_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, str(root.expanduser().absolute()) + "\n")


def resolve_library_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The library root chosen by the command line, the environment, the remembered place
    (a moved library), or the default.

    Args:
        explicit: the ``--library`` argument, if any; it wins over the environment.
    """
    if explicit:
        chosen = Path(explicit)
    elif os.environ.get(LIBRARY_ENV):
        chosen = Path(os.environ[LIBRARY_ENV])
    else:
        chosen = remembered_library_root() or default_library_root()
    return chosen.expanduser().absolute()
