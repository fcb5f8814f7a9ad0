"""`archiver move-library` while the desktop app has the library open: refused, naming
the app; the real app and the real command, as a user runs them.

Before, the move went ahead ("moved the library to ... (renamed)") and the open window
went on over a folder that was gone: screenshots missing, captures failing, and later a
new empty library made where the old one had been."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from archiver_app import library_use
from archiver_app.library import Library
from tests.helpers.snapshots import add_snapshot

ARCHIVER = Path(sys.executable).with_name("archiver")


def test_the_app_holding_the_library_refuses_the_move_until_it_is_gone(tmp_path: Path) -> None:
    src, dest = tmp_path / "lib", tmp_path / "moved"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "QTWEBENGINE_DISABLE_SANDBOX": "1",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    env.pop("ARCHIVER_LIBRARY", None)
    with Library.open(src) as lib:
        add_snapshot(lib, "https://harbour.example/tides", title="Tides")
    with (tmp_path / "app.log").open("wb") as log:
        app = subprocess.Popen(
            [str(ARCHIVER), "--library", str(src)], env=env, stdout=log, stderr=log
        )
    try:
        deadline = time.monotonic() + 60
        while not library_use.holders(src) and time.monotonic() < deadline:
            assert app.poll() is None, (tmp_path / "app.log").read_text()
            time.sleep(0.1)
        assert [h.what for h in library_use.holders(src)] == ["Archiver"]
        move = [str(ARCHIVER), "--library", str(src), "move-library", str(dest)]
        done = subprocess.run(move, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 2, done.stdout + done.stderr
        assert (
            f"archiver: error: the library is open in Archiver (pid {app.pid}): close it first"
            in done.stderr
        )
        assert "moved the library" not in done.stdout
        assert (src / "library.json").is_file() and not dest.exists()
    finally:
        app.kill()  # gone without closing anything: what it held goes with it
        app.wait(timeout=30)
    done = subprocess.run(move, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    with Library.open(dest) as lib:
        assert lib.info().snapshots == 1
