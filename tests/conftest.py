"""Suite-wide setup: headless Qt, markers by folder, shared fixtures from tests/helpers."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# No test reads or writes the real user's settings (the remembered library place, QSettings):
# a throw-away config folder for this run, inherited by every subprocess.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="archiver-test-config-")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QTWEBENGINE_DISABLE_SANDBOX", "1")
os.environ.setdefault("QTWEBENGINE_CHROMIUM_FLAGS", "--disable-gpu --no-sandbox")

pytest_plugins = [
    "tests.helpers.fixtures",
    "tests.helpers.testsite",
    "tests.helpers.corpus",
    "tests.helpers.legacy",
    "tests.helpers.postgres",
    "tests.helpers.replay_schemes",
    "tests.helpers.gui_fixtures",
]

FOLDER_MARKERS = ("unit", "gui", "integration", "e2e", "bench")
TESTS = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        rel = Path(item.path).relative_to(TESTS)
        if rel.parts and rel.parts[0] in FOLDER_MARKERS:
            item.add_marker(getattr(pytest.mark, rel.parts[0]))
