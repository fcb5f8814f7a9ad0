"""The app's Log In dialog, for real: it runs the login window in a child process (a headed
Chromium on a private Xvfb display), stays responsive, reports what the window does, and
the profile it saves lets a capture reach the private page."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from archiver_app.capture.engine import capture_urls
from archiver_app.gui.login_dialog import LoginDialog
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
from tests.integration.sessions.site import PASSWORD, PRIVATE_TEXT, USER, LoginSite


def test_the_dialog_logs_in_and_the_profile_works(
    qtbot: QtBot,
    library: Library,
    op_runner: OpRunner,
    login_site: LoginSite,
    x_display: str,
    cdp_browser: tuple[Path, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from playwright.sync_api import sync_playwright

    launcher, port = cdp_browser
    monkeypatch.setenv("ARCHIVER_BROWSER", str(launcher))  # the child process inherits both
    monkeypatch.setenv("DISPLAY", x_display)
    dialog = LoginDialog(library, op_runner)
    qtbot.addWidget(dialog)
    dialog.profile.setCurrentText("university")
    dialog.url.setText(login_site.url("/private"))
    op = dialog.start()
    assert op is not None and not dialog.open_button.isEnabled()
    qtbot.waitUntil(lambda: "window is open" in dialog.status.text(), timeout=60_000)
    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}", timeout=30_000)
        page = browser.contexts[0].pages[0]
        page.wait_for_selector("#password")
        page.fill("#user", USER)
        page.fill("#password", PASSWORD)
        page.click("#go")
        page.wait_for_url("**/private")
        qtbot.waitUntil(lambda: "2 cookies" in dialog.status.text(), timeout=30_000)
        page.close()
    qtbot.waitUntil(lambda: dialog.op is None, timeout=60_000)
    assert "Profile 'university' saved: 2 cookies for 127.0.0.1" in dialog.status.text()
    assert dialog.open_button.isEnabled()
    monkeypatch.delenv("DISPLAY")
    monkeypatch.delenv("ARCHIVER_BROWSER")
    (result,) = capture_urls(library, [login_site.url("/private")], profile="university")
    assert result.ok, result.error
    text = library.abspath(_folder(library, result.snapshot_id)) / "text.txt"
    assert PRIVATE_TEXT in text.read_text(encoding="utf-8")


def _folder(library: Library, snapshot_id: int | None) -> str:
    detail = library.snapshots.detail(snapshot_id or 0)
    assert detail is not None and detail.folder is not None
    return detail.folder
