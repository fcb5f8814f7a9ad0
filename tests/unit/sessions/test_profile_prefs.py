"""The password manager is turned off in a profile's Chromium preferences, others kept."""

from __future__ import annotations

import json
from pathlib import Path

from archiver_app.profiles.prefs import (
    no_password_saving,
    password_saving_off,
    preferences_file,
)


def test_password_saving_is_turned_off_and_other_preferences_kept(tmp_path: Path) -> None:
    new = tmp_path / "new"
    no_password_saving(new)
    assert password_saving_off(new)

    used = tmp_path / "used"
    path = preferences_file(used)
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps({"intl": {"accept_languages": "fr"}, "credentials_enable_service": True,
                    "profile": {"name": "Mine", "password_manager_enabled": True}}),
        encoding="utf-8",
    )  # fmt: skip
    assert not password_saving_off(used)
    no_password_saving(used)
    prefs = json.loads(path.read_text(encoding="utf-8"))
    assert prefs["intl"] == {"accept_languages": "fr"}
    assert prefs["profile"] == {"name": "Mine", "password_manager_enabled": False}
    assert prefs["credentials_enable_service"] is False
    assert password_saving_off(used)

    path.write_text("{not json", encoding="utf-8")  # Chromium would reset it anyway
    no_password_saving(used)
    assert password_saving_off(used)
