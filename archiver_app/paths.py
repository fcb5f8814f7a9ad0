"""Where things live on disk. Pure functions: nothing is created at import or call time."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

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
    """Per-user cache folder (thumbnails); safe to delete."""
    return Path(platformdirs.user_cache_dir(APP_NAME, APP_AUTHOR))


def resolve_library_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The library root chosen by the command line, the environment, or the default.

    Args:
        explicit: the ``--library`` argument, if any; it wins over the environment.
    """
    if explicit:
        chosen = Path(explicit)
    elif os.environ.get(LIBRARY_ENV):
        chosen = Path(os.environ[LIBRARY_ENV])
    else:
        chosen = default_library_root()
    return chosen.expanduser().absolute()
