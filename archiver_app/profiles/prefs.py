"""Chromium preferences of a browser Archiver starts on a profile folder.

A login window is where people type passwords, and Chromium offers to save them ("Save
password?"). Saved, a password would sit in the profile's ``Login Data``, encrypted with
``--password-store=basic``'s fixed, public key: anyone who can read the profile could read
it. Archiver needs the session cookies a login leaves, never the password, so before any
browser starts on a profile folder :func:`no_password_saving` turns Chromium's password
manager off in the folder's ``Default/Preferences`` (``credentials_enable_service``,
``profile.password_manager_enabled``, and automatic sign-in), keeping every other
preference as it is. Chromium reads the file when it starts and keeps these values.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from archiver_app.durable import atomic_write_text

#: Dotted preference paths and the values that turn password saving off.
NO_PASSWORD_SAVING: dict[str, Any] = {
    "credentials_enable_service": False,
    "credentials_enable_autosignin": False,
    "profile.password_manager_enabled": False,
}


def preferences_file(folder: Path) -> Path:
    return folder / "Default" / "Preferences"


def no_password_saving(folder: Path) -> None:
    """Turn Chromium's password manager off in the profile ``folder`` (call with the
    profile's lock held, before a browser starts on it)."""
    path = preferences_file(folder)
    prefs: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            prefs = loaded  # an unreadable file Chromium would reset anyway: start afresh
    changed = False
    for dotted, value in NO_PASSWORD_SAVING.items():
        *parents, leaf = dotted.split(".")
        node = prefs
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        if node.get(leaf) != value:
            node[leaf], changed = value, True
    if changed:
        atomic_write_text(path, json.dumps(prefs), make_parent=True)


def password_saving_off(folder: Path) -> bool:
    """Whether the profile's preferences keep the password manager off (for checks)."""
    try:
        prefs = json.loads(preferences_file(folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    for dotted, value in NO_PASSWORD_SAVING.items():
        node: Any = prefs
        for part in dotted.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node != value:
            return False
    return True
