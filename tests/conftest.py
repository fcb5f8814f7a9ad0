"""Suite-wide setup: headless Qt, markers by folder, shared fixtures from tests/helpers."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest


def _for_this_run(prefix: str) -> str:
    """A temporary folder removed when this process ends."""
    folder = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


# No test reads or writes the real user's settings (the remembered library place, QSettings):
# a throw-away config folder for this run, inherited by every subprocess.
os.environ["XDG_CONFIG_HOME"] = _for_this_run("archiver-test-config-")
# Node.js's compiled Playwright driver (capture.browser.use_driver_compile_cache) is kept
# for the run (its workers share the first process's), not in the user's cache folder.
if "NODE_COMPILE_CACHE" not in os.environ:
    os.environ["NODE_COMPILE_CACHE"] = _for_this_run("archiver-test-node-")
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
    "tests.helpers.sqlite_template",
    "tests.helpers.frozen_build",
]

FOLDER_MARKERS = ("unit", "gui", "integration", "e2e", "bench")
TESTS = Path(__file__).parent


#: The longest test files (minutes each in a whole run), run first: with ``--dist loadfile``
#: each file is one worker's, and one started last would run alone after the rest is done.
LONGEST_FIRST = (
    "integration/crawl/test_crawl_site.py",
    "integration/fidelity/test_corpus.py",
    "integration/sessions/test_logins.py",
    "integration/capture/test_watch.py",
    "integration/hostile/test_serve.py",
    "integration/capture/test_capture_site.py",
    "unit/integrity/test_verify_report.py",
    "gui/test_panels.py",
    "integration/jobs/test_kill.py",
    "integration/layout/test_migrate_kill.py",
    "unit/shared/test_lost_database.py",
    "bench/test_bench_smoke.py",
    "integration/editions/test_edition_release.py",
    "integration/shared/test_lost_database_worker.py",
    "e2e/test_clean_exit.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        rel = Path(item.path).relative_to(TESTS)
        if rel.parts and rel.parts[0] in FOLDER_MARKERS:
            item.add_marker(getattr(pytest.mark, rel.parts[0]))
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(Path(item.path).relative_to(TESTS).as_posix(), len(rank)))
    from tests.helpers.frozen_build import place_frozen_tests

    place_frozen_tests(items)  # their build runs beside the run's start
