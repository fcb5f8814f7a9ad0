"""Screenshots of the login flow for docs/screenshots (run under Xvfb, not a test).

The Log In dialog before it starts, then the visible Chromium window it opens on a local
site's login form, with the dialog reporting. Run (Xvfb on :93)::

    Xvfb :93 -screen 0 1400x900x24 &
    DISPLAY=:93 QT_QPA_PLATFORM=xcb .venv/bin/python tests/gui/make_login_screenshots.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "docs" / "screenshots"


def shoot(name: str) -> None:
    subprocess.run(["import", "-window", "root", str(OUT / name)], check=True)
    print("wrote", OUT / name)


def main() -> None:
    from PySide6.QtWidgets import QApplication

    from archiver_app.gui.login_dialog import LoginDialog
    from archiver_app.gui.ops import OpRunner
    from archiver_app.library import Library
    from tests.helpers.webserver import LocalServer
    from tests.integration.sessions.site import LoginSite

    app = QApplication([])
    server = LocalServer().start()
    site = LoginSite(server)
    with tempfile.TemporaryDirectory() as tmp, Library.open(Path(tmp), create=True) as lib:
        lib.profiles.create("news")
        runner = OpRunner()
        dialog = LoginDialog(lib, runner)
        dialog.profile.setCurrentText("university")
        dialog.url.setText(site.url("/private"))
        dialog.move(820, 40)
        dialog.show()
        _settle(app, 1.0)
        shoot("login-dialog.png")
        dialog.start()
        deadline = time.monotonic() + 60
        while "window is open" not in dialog.status.text() and time.monotonic() < deadline:
            _settle(app, 0.2)
        _settle(app, 3.0)  # let Chromium paint its window
        shoot("login-window.png")
        dialog.reject()  # "Stop": closes the browser window
        while dialog.op is not None and time.monotonic() < deadline + 60:
            _settle(app, 0.2)
        runner.shutdown()
    server.stop()


def _settle(app: object, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()  # type: ignore[attr-defined]
        time.sleep(0.02)


if __name__ == "__main__":
    main()
