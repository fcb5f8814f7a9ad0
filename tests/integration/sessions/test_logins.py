"""Captures behind a login, with real Chromium: a local site with a login form and a session
cookie (tests/integration/sessions/site.py).

The login window is the real ``archiver login`` in a child process, headed on a private
Xvfb display; the test reaches that window over the DevTools protocol (the browser is
started through ``ARCHIVER_BROWSER`` with a DevTools port) and fills the form as a person
would, then closes the window.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from sqlalchemy import select

from archiver_app.cli import main
from archiver_app.crawl.api import job_detail, tail_log
from archiver_app.library import Library
from archiver_app.profiles import profile_dir
from archiver_app.profiles.prefs import password_saving_off, preferences_file
from archiver_app.store.models import Record, Snapshot
from tests.integration.sessions.conftest import archiver_env
from tests.integration.sessions.site import PASSWORD, PRIVATE_TEXT, USER, LoginSite


def _snapshots(root: Path) -> list[Snapshot]:
    with Library.open(root) as lib, lib.session() as s:
        return list(s.scalars(select(Snapshot).order_by(Snapshot.id)))


def _by_path(snaps: list[Snapshot]) -> dict[str, Snapshot]:
    """``snaps`` by the path of their address (the pages of one run are captured two at a
    time: their order is not the order given)."""
    found = {urlsplit(s.url).path: s for s in snaps}
    assert len(found) == len(snaps), [s.url for s in snaps]
    return found


def _text(root: Path, snap: Snapshot) -> str:
    assert snap.folder is not None
    return (root / snap.folder / "text.txt").read_text(encoding="utf-8")


class _Lines:
    """The lines a child process prints, readable with a timeout."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.seen: list[str] = []
        self._q: queue.Queue[str] = queue.Queue()
        assert proc.stdout is not None
        out = proc.stdout
        self.closed = threading.Event()

        def read() -> None:
            for line in out:
                self._q.put(line)
            self.closed.set()

        threading.Thread(target=read, daemon=True).start()

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._q.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line with {text!r}; got {self.seen}") from None
            self.seen.append(line)
            if text in line:
                return line

    def rest(self) -> list[str]:
        """Every line seen, with those printed since and not read yet."""
        self.closed.wait(10)
        while not self._q.empty():
            self.seen.append(self._q.get())
        return self.seen


def _login_by_hand(
    root: Path, site: LoginSite, display: str, launcher: Path, port: int, *, ctrl_c: bool = False
) -> list[str]:
    """Run ``archiver login uni URL``; log in through its window; close it (or press Ctrl+C
    in the terminal: SIGINT to the whole process group); its output."""
    from playwright.sync_api import sync_playwright

    proc = subprocess.Popen(
        [sys.executable, "-X", "faulthandler", "-m", "archiver_app", "--library", str(root),
         "login", "uni", site.url("/private")],
        env=archiver_env(ARCHIVER_BROWSER=str(launcher), DISPLAY=display),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    lines = _Lines(proc)
    try:
        lines.wait_for("a browser window is open")
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}", timeout=30_000)
            page = browser.contexts[0].pages[0]
            page.wait_for_selector("#password")  # the site sent the window to its login form
            assert "/login" in page.url
            page.fill("#user", USER)
            page.fill("#password", PASSWORD)
            page.click("#go")
            page.wait_for_url("**/private")
            assert PRIVATE_TEXT in page.inner_text("h1")
            # as a person does: close the window once the login shows (Archiver says so)
            lines.wait_for("holds 2 cookies for 127.0.0.1")
            if ctrl_c:
                os.killpg(proc.pid, signal.SIGINT)
            else:
                page.close()
        try:
            code = proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)  # faulthandler prints where each thread waits
            proc.wait(30)
            raise AssertionError(f"still running 60 s later: {lines.rest()}") from None
        assert code == 0, lines.seen
        lines.wait_for("saved")
        return lines.seen
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        lines.closed.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_capture_without_a_profile_reports_login_required(
    login_site: LoginSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    walls = ("/private", "/open-login", "/wall")  # one run: a browser started once
    assert main(["--library", str(root), "capture", *map(login_site.url, walls)]) == 1
    out = capsys.readouterr()
    assert "login required" in out.out and "login required" in out.err
    snaps = _by_path(_snapshots(root))
    assert sorted(snaps) == sorted(walls)
    snap = snaps["/private"]
    assert snap.state == "failed" and snap.profile is None
    assert snap.provenance is not None
    assert snap.provenance["login_check"]["outcome"] == "login_required"
    assert snap.provenance["login_check"]["signal"] == "login-redirect"
    assert snap.folder is not None  # the login form is kept as evidence, not as a capture
    assert (root / snap.folder / "screenshot.png").is_file()
    # a login form served at an ordinary address is found by its password field, and so is
    # a login form as the main content of a page with a big menu and footer (a wall)
    for path in ("/open-login", "/wall"):
        wall = snaps[path]
        assert wall.state == "failed" and wall.provenance is not None, path
        assert wall.provenance["login_check"]["signal"] == "password-field", path
    # asking for the login page itself is not a failure: the next test


def test_a_public_page_with_a_login_box_is_captured(
    login_site: LoginSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A login box beside the content (a sidebar widget, a login bar above a thread), or a
    lone password field that asks for no login (a strength demo), does not make the page a
    login form, and asking for the login page itself is not a failure; --no-login-check
    keeps even a page that is one."""
    root = tmp_path / "lib"
    paths = ("/sidebar", "/thread", "/strength", "/login")  # one run: a browser started once
    code = main(["--library", str(root), "capture", *map(login_site.url, paths)])
    out = capsys.readouterr()
    assert "login required" not in out.out + out.err
    snaps = _by_path(_snapshots(root))
    assert {p: s.state for p, s in snaps.items()} == dict.fromkeys(paths, "complete")
    assert code == 0, out
    assert all("login_check" not in (s.provenance or {}) for s in snaps.values())
    assert "tide tables" in _text(root, snaps["/sidebar"])
    form = login_site.url("/open-login")
    assert main(["--library", str(root), "capture", "--no-login-check", form]) == 0
    last = _snapshots(root)[-1]
    assert last.state == "complete" and "login_check" not in (last.provenance or {})


def test_login_window_then_captures_with_the_profile_until_the_session_expires(
    login_site: LoginSite,
    tmp_path: Path,
    x_display: str,
    cdp_browser: tuple[Path, int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "lib"
    output = _login_by_hand(root, login_site, x_display, *cdp_browser)
    assert any("profile 'uni' saved: 2 cookies for 127.0.0.1" in line for line in output)
    # the window offered no "Save password?": Chromium's password manager stayed off
    assert password_saving_off(profile_dir(root, "uni"))

    # each run captures both pages, in one browser on the profile
    capture = ["--library", str(root), "capture", "--profile", "uni"]
    pages = [login_site.url("/private"), login_site.url("/members")]
    assert main([*capture, *pages]) == 0
    private, members = (_by_path(_snapshots(root))[p] for p in ("/private", "/members"))
    assert private.state == "complete" and private.profile == "uni"
    assert PRIVATE_TEXT in _text(root, private)
    # the login window cached the stylesheet; the capture still fetched and recorded it
    with Library.open(root) as lib, lib.session() as s:
        styles = s.scalars(
            select(Record.status).where(
                Record.snapshot_id == private.id,
                Record.record_type == "response",
                Record.url.endswith("/private.css"),
            )
        ).all()
    assert styles == [200]
    assert members.state == "complete" and members.http_status == 200
    assert private.folder is not None
    sidecar = json.loads((root / private.folder / "index.json").read_text(encoding="utf-8"))
    assert sidecar["profile"] == "uni"
    assert private.job_id is not None
    with Library.open(root) as lib:
        assert job_detail(lib, private.job_id).spec.profile == "uni"  # the job's own record

    capsys.readouterr()
    login_site.expire_sessions()  # the site forgets the session, as sites do
    assert main([*capture, *pages]) == 1
    out = capsys.readouterr().out
    assert "session expired: profile 'uni'" in out
    expired = _by_path(_snapshots(root)[-2:])
    expired_redirect, expired_denied = expired["/private"], expired["/members"]
    assert expired_denied.job_id is not None
    with Library.open(root) as lib:
        log = [line.message for line in tail_log(lib, expired_denied.job_id)]
    for snap, sign in ((expired_redirect, "login-redirect"), (expired_denied, "denied")):
        assert snap.state == "failed" and snap.capture_fidelity is None
        assert snap.provenance is not None
        evidence = snap.provenance["login_check"]["evidence"]
        assert snap.provenance["login_check"] == {
            "outcome": "session_expired",
            "signal": sign,
            "evidence": evidence,
            "profile": "uni",
        }
        # each page said so, in the output and in the job's log (the run holds both)
        said = f"session expired: profile 'uni' is not logged in to this site any more ({evidence})"
        assert any(said in line for line in out.splitlines()), (said, out)
        assert any(said in message for message in log), (said, log)
    assert "403" in expired_denied.provenance["login_check"]["evidence"]  # type: ignore[index]


def test_ctrl_c_in_the_terminal_keeps_the_login(
    login_site: LoginSite, tmp_path: Path, x_display: str, cdp_browser: tuple[Path, int]
) -> None:
    root = tmp_path / "lib"
    output = _login_by_hand(root, login_site, x_display, *cdp_browser, ctrl_c=True)
    assert any("saved: 2 cookies" in line and "closed by Archiver" in line for line in output)
    capture = ["--library", str(root), "capture", "--profile", "uni"]
    assert main([*capture, login_site.url("/private")]) == 0
    assert PRIVATE_TEXT in _text(root, _snapshots(root)[0])


def _session_cookie(site: LoginSite) -> str:
    conn = http.client.HTTPConnection(site.server.host, site.server.port, timeout=10)
    conn.request(
        "POST",
        "/login",
        body=f"user={USER}&password={PASSWORD}",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    resp = conn.getresponse()
    resp.read()
    cookie = resp.getheader("Set-Cookie") or ""
    conn.close()
    assert cookie.startswith("sid=")
    return cookie.split(";")[0].partition("=")[2]


def write_cookies_txt(site: LoginSite, cookies: Path) -> None:
    """A cookies.txt with a fresh session of ``site`` (HttpOnly, no expiry), a long-lived
    cookie, a comment, a blank line and a bad line (line 5)."""
    future = int(time.time()) + 86400
    cookies.write_text(
        "# Netscape HTTP Cookie File\n\n"
        f"#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\t{_session_cookie(site)}\n"
        f"127.0.0.1\tFALSE\t/\tFALSE\t{future}\ttheme\tdark\n"
        "this line is not a cookie\n",
        encoding="utf-8",
    )


def test_cookies_txt_import_then_capture(
    login_site: LoginSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, cookies = tmp_path / "lib", tmp_path / "cookies.txt"
    write_cookies_txt(login_site, cookies)
    assert main(["--library", str(root), "profiles", "import-cookies", "news", str(cookies)]) == 1
    out = capsys.readouterr()
    assert "added 2 cookies to profile 'news'" in out.out
    assert "line 5: 1 tab-separated fields where 7 are needed" in out.err
    folder = profile_dir(root, "news")
    assert password_saving_off(folder)  # set before Chromium ran, kept by it
    prefs = json.loads(preferences_file(folder).read_text(encoding="utf-8"))
    assert len(prefs) > 3  # Chromium's own preferences are there beside them
    capture = ["--library", str(root), "capture", "--profile", "news"]
    assert main([*capture, login_site.url("/private")]) == 0
    (snap,) = _snapshots(root)
    assert snap.state == "complete" and snap.profile == "news"
    assert PRIVATE_TEXT in _text(root, snap)
    # the session cookie (no expiry) outlived the browsers that used it
    assert main([*capture, login_site.url("/members")]) == 0
    assert main(["--library", str(root), "profiles", "list"]) == 0
    assert "news" in capsys.readouterr().out


def test_a_login_window_that_cannot_open_leaves_no_profile_and_says_why(
    library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no display, Chromium cannot open its window: the new profile it was to fill is
    not left behind as an empty one ("never logged in"), and the reason is said."""
    from archiver_app.errors import BrowserNotFoundError
    from archiver_app.profiles.session import run_login
    from archiver_app.profiles.store import list_profiles

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(BrowserNotFoundError, match="no display: DISPLAY and WAYLAND_DISPLAY"):
        run_login(library.root, "harbour", "http://127.0.0.1:9/login")
    assert [p.name for p in list_profiles(library.root)] == []
