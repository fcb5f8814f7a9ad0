"""Find a Chromium-based browser to drive with Playwright, and say how to get one.

Order: ``ARCHIVER_BROWSER`` (a path), Playwright's own Chromium if it was downloaded, then a
system Chrome, Chromium or Edge in the usual places for Linux, macOS and Windows.

Chromium's *headless shell* (Debian's ``chromium-headless-shell``, Playwright's
``chromium-headless-shell`` download) is a browser the user may choose (``ARCHIVER_BROWSER``
or Settings), never one found by default: it is the same engine and version without the
browser around it, so a new tab costs its browser process about a quarter of what full
Chromium's costs (a crawl of 323 local pages: 108 s instead of 165 s here), but pages can tell
it from a person's browser (no ``window.chrome``, no PDF viewer, so ``navigator.plugins`` is
empty and a PDF is a download) and it opens no windows: login and browse windows use the
next browser found (``require_browser(windows=True)``).
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archiver_app.errors import BrowserNotFoundError

BROWSER_ENV = "ARCHIVER_BROWSER"

#: Flags that keep Chromium quiet and offline-friendly: no GPU, no phoning home.
QUIET_FLAGS: tuple[str, ...] = (
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-breakpad",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
    "--mute-audio",
    "--password-store=basic",
    "--use-mock-keychain",
)


@dataclass(frozen=True)
class BrowserInfo:
    kind: str  # "env", "playwright", "system"
    name: str
    path: Path
    version: str | None = None

    @property
    def headless_shell(self) -> bool:
        """Chromium's headless shell: captures only, no windows (see the module docstring)."""
        return is_headless_shell(self.path)

    def describe(self) -> str:
        version = f" {self.version}" if self.version else ""
        shell = ", headless shell" if self.headless_shell else ""
        return f"{self.name}{version} ({self.kind}{shell}) at {self.path}"


def is_headless_shell(path: Path) -> bool:
    """Whether ``path`` is Chromium's headless shell, by the names it ships under
    (``chromium-headless-shell``, ``headless_shell``, ``chrome-headless-shell``)."""
    return "headless-shell" in path.name.lower().replace("_", "-")


def _linux_candidates() -> list[tuple[str, Path]]:
    names = [
        ("Google Chrome", "google-chrome"),
        ("Google Chrome", "google-chrome-stable"),
        ("Chromium", "chromium"),
        ("Chromium", "chromium-browser"),
        ("Microsoft Edge", "microsoft-edge"),
        ("Microsoft Edge", "microsoft-edge-stable"),
    ]
    found: list[tuple[str, Path]] = []
    for label, exe in names:
        where = shutil.which(exe)
        if where:
            found.append((label, Path(where)))
    found.append(("Chromium", Path("/snap/bin/chromium")))
    return found


def _macos_candidates() -> list[tuple[str, Path]]:
    apps = [
        ("Google Chrome", "Google Chrome.app/Contents/MacOS/Google Chrome"),
        ("Chromium", "Chromium.app/Contents/MacOS/Chromium"),
        ("Microsoft Edge", "Microsoft Edge.app/Contents/MacOS/Microsoft Edge"),
    ]
    roots = [Path("/Applications"), Path.home() / "Applications"]
    return [(label, root / rel) for root in roots for label, rel in apps]


def _windows_candidates() -> list[tuple[str, Path]]:
    rels = [
        ("Google Chrome", r"Google\Chrome\Application\chrome.exe"),
        ("Microsoft Edge", r"Microsoft\Edge\Application\msedge.exe"),
        ("Chromium", r"Chromium\Application\chrome.exe"),
    ]
    roots = [os.environ.get(var) for var in ("PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA")]
    return [(label, Path(root) / rel) for root in roots if root for label, rel in rels]


def system_candidates() -> list[tuple[str, Path]]:
    system = platform.system()
    if system == "Darwin":
        return _macos_candidates()
    if system == "Windows":
        return _windows_candidates()
    return _linux_candidates()


#: Where Playwright keeps its Chromium, per ``PLAYWRIGHT_BROWSERS_PATH``: asking costs a
#: start of Playwright's driver (0.6-0.8 s), and a worker or capture asks more than once.
_playwright_paths: dict[str | None, Path] = {}

#: The driver's answer, remembered across processes (in the config folder) with what it
#: depends on: the driver's browser list and the environment it reads.
REMEMBERED_FILE = "playwright-chromium.json"
_DRIVER_ENV = ("PLAYWRIGHT_BROWSERS_PATH", "XDG_CACHE_HOME", "LOCALAPPDATA", "HOME", "USERPROFILE")


def playwright_chromium() -> Path | None:
    """Playwright's downloaded Chromium, if ``playwright install chromium`` was run.

    Where it would be is asked of Playwright once (the answer is remembered for as long as
    the driver and the environment it reads stay the same); whether the file is there, every
    time (a download meanwhile is seen)."""
    key = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    path = _playwright_paths.get(key)
    if path is None:
        path = _remembered_or_asked()  # no answer (no driver, or asked inside an event loop)
        if path is not None:  # is not kept: the next call asks again
            _playwright_paths[key] = path
    return path if path is not None and path.is_file() else None


def _remembered_or_asked() -> Path | None:
    import json

    from archiver_app.durable import atomic_write_text
    from archiver_app.paths import config_dir

    facts = _driver_facts()
    if facts is None:
        return _ask_playwright()  # a driver laid out otherwise: ask, remember nothing
    file = config_dir() / REMEMBERED_FILE
    try:
        kept = json.loads(file.read_text(encoding="utf-8"))
        if kept["facts"] == facts:
            return Path(kept["path"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # none yet, unreadable, or for another driver or place: ask
    path = _ask_playwright()
    if path is not None:
        with contextlib.suppress(OSError):
            text = json.dumps({"facts": facts, "path": str(path)})
            atomic_write_text(file, text, durable=False, make_parent=True)
    return path


def _driver_facts() -> list[str] | None:
    """What the driver's answer depends on, or None if its browser list is not found."""
    import importlib.util

    spec = importlib.util.find_spec("playwright")
    if spec is None or not spec.submodule_search_locations:
        return None
    browsers = Path(next(iter(spec.submodule_search_locations))) / "driver/package/browsers.json"
    try:
        stat = browsers.stat()
    except OSError:
        return None
    return [str(browsers), f"{stat.st_size}:{stat.st_mtime_ns}", sys.platform,
            platform.machine()] + [os.environ.get(name, "") for name in _DRIVER_ENV]  # fmt: skip


#: Node.js's environment variable for its on-disk cache of compiled code.
NODE_CACHE_ENV = "NODE_COMPILE_CACHE"


def use_driver_compile_cache() -> None:
    """Have the Playwright drivers this process starts keep their compiled code on disk.

    Each capture, worker, browse or login session starts Playwright's driver, a Node.js
    process that compiles 13 MB of JavaScript first: 0.75 s and 0.85 s of CPU here, 0.42 s
    and 0.55 s with Node's compile cache (Node checks every entry against its source and its
    own version, so a stale entry is never used). Sets ``NODE_COMPILE_CACHE`` for this
    process and its children unless the user set it (or ``NODE_DISABLE_COMPILE_CACHE``).
    """
    if NODE_CACHE_ENV in os.environ or os.environ.get("NODE_DISABLE_COMPILE_CACHE"):
        return
    from archiver_app.paths import cache_dir

    os.environ[NODE_CACHE_ENV] = str(cache_dir() / "node-compile-cache")


def sync_driver() -> Any:
    """Playwright's synchronous API as a context manager (``with sync_driver() as pw``),
    its driver keeping its compiled code (:func:`use_driver_compile_cache`)."""
    from playwright.sync_api import sync_playwright

    use_driver_compile_cache()
    return sync_playwright()


async def start_async_driver() -> Any:
    """Playwright's asynchronous API, started (stop it with ``await pw.stop()``), its driver
    keeping its compiled code (:func:`use_driver_compile_cache`)."""
    from playwright.async_api import async_playwright

    use_driver_compile_cache()
    return await async_playwright().start()


def _ask_playwright() -> Path | None:
    try:
        with sync_driver() as pw:
            return Path(pw.chromium.executable_path)
    except Exception:  # driver missing or broken: treat as not installed
        return None


def browser_version(path: Path) -> str | None:
    if sys.platform == "win32":
        return None  # chrome.exe --version prints nothing on Windows
    try:
        out = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=15, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"\b(\d+(?:\.\d+){1,3})\b", out.stdout)
    return match.group(1) if match else None


def find_browser(*, with_version: bool = False, windows: bool = False) -> BrowserInfo | None:
    """The browser captures will use, or None; with ``windows``, the one that opens windows
    for the user (a chosen headless shell is passed over for the next one found)."""
    override = os.environ.get(BROWSER_ENV)
    if override:
        path = Path(override)
        if not path.is_file():
            return None
        if not (windows and is_headless_shell(path)):
            return _info("env", "ARCHIVER_BROWSER", path, with_version)
    own = playwright_chromium()
    if own is not None:
        return _info("playwright", "Playwright Chromium", own, with_version)
    for label, path in system_candidates():
        if path.is_file() and os.access(path, os.X_OK):
            return _info("system", label, path, with_version)
    return None


#: Where Debian's ``chromium-headless-shell`` puts the shell itself.
DEBIAN_SHELL = "/usr/lib/chromium/chromium-headless-shell"


def find_headless_shell() -> Path | None:
    """An installed headless shell the user could choose (None if there is none): Debian's
    package, or Playwright's download beside its Chromium."""
    if platform.system() == "Linux":
        for where in (DEBIAN_SHELL, shutil.which("chromium-headless-shell")):  # before its wrapper
            if where and Path(where).is_file():
                return Path(where)
    own = playwright_chromium()  # ms-playwright/chromium-N/chrome-linux/chrome (or deeper)
    store = next(
        (p.parent for p in (own.parents if own else ()) if p.name.startswith("chromium-")), None
    )
    if store is not None:
        for folder in sorted(store.glob("chromium_headless_shell-*"), reverse=True):
            for exe in sorted(folder.glob("*/*")):
                if is_headless_shell(exe) and exe.suffix in {"", ".exe"} and exe.is_file():
                    return exe
    return None


def _info(kind: str, name: str, path: Path, with_version: bool) -> BrowserInfo:
    return BrowserInfo(kind, name, path, browser_version(path) if with_version else None)


def install_hint(*, ignore_choice: bool = False) -> str:
    """The exact commands that get a browser on this platform."""
    override = os.environ.get(BROWSER_ENV)
    if override and not ignore_choice:
        return f"{BROWSER_ENV} is set to {override}, which is not a file; fix or unset it"
    hints = ["archiver browser install   (downloads Playwright's Chromium)"]
    if platform.system() == "Linux":
        hints.append("sudo apt-get install chromium   (Debian/Ubuntu system package)")
    else:
        hints.append("or install Google Chrome or Microsoft Edge")
    return "; or ".join(hints)


def require_browser(*, windows: bool = False) -> BrowserInfo:
    """:func:`find_browser`, or a clear error."""
    found = find_browser(windows=windows)
    if found is None:
        chosen = os.environ.get(BROWSER_ENV, "")
        if windows and chosen and is_headless_shell(Path(chosen)) and Path(chosen).is_file():
            raise BrowserNotFoundError(
                f"the browser chosen for captures ({chosen}) is Chromium's headless shell, "
                "which opens no windows, and no other browser was found for this window. "
                "Get one with: " + install_hint(ignore_choice=True)
            )
        raise BrowserNotFoundError(
            "no Chromium-based browser found. Get one with: " + install_hint()
        )
    return found


#: Extra flags for captures: keep cross-site iframes in the page's process so one DevTools
#: session sees every request of the page (out-of-process iframes would need their own).
#: The WebUI features are browser UI a headless capture never shows: Chromium 15x makes
#: each new window's omnibox popup a renderer process of its own, which cost more than
#: the captured page itself (one per page: a crawl ran at 100 pages a minute, 180 without).
CAPTURE_FLAGS: tuple[str, ...] = (
    "--disable-site-isolation-trials",
    "--disable-features=IsolateOrigins,site-per-process,"
    + ",".join(("PreloadTopChromeWebUI", "WebUIOmniboxPopup", "WebUIOmniboxAimPopup")),
    "--autoplay-policy=no-user-gesture-required",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)


def launch_args(*, extra: tuple[str, ...] = CAPTURE_FLAGS) -> list[str]:
    """Command-line flags for a capture browser: quiet flags, capture flags, and
    ``--no-sandbox`` when running as root (Chromium refuses to start otherwise)."""
    args = [*QUIET_FLAGS, *extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")
    return args


def launch_options(info: BrowserInfo, *, headless: bool = True) -> dict[str, object]:
    """Keyword arguments for Playwright's ``chromium.launch()`` with browser ``info``."""
    return {
        "executable_path": str(info.path),
        "args": launch_args(),
        "headless": headless,
        "handle_sigint": False,
        "handle_sigterm": False,
        "handle_sighup": False,
    }


# What Chromium shows in a tab or frame itself (blink's mime_util, less the codecs PySide6's
# QtWebEngine is built without); a navigation to any other type is a download, which
# capture reads again (capture.recorder) and replay shows as a file (gui.replay.network).
_TEXT_DOWNLOADED = frozenset({
    "text/calendar", "text/x-calendar", "text/vcalendar", "text/x-vcalendar", "text/vcard",
    "text/x-vcard", "text/x-vcf", "text/directory", "text/ldif", "text/qif", "text/x-qif",
    "text/csv", "text/x-csv", "text/comma-separated-values", "text/tab-separated-values",
    "text/tsv", "text/rtf", "text/ofx", "text/vnd.sun.j2me.app-descriptor",
})  # fmt: skip
_SHOWN = frozenset({
    "application/xhtml+xml", "application/xml", "application/json", "application/javascript",
    "application/x-javascript", "application/ecmascript", "multipart/related",
    "message/rfc822", "image/png", "image/jpeg", "image/jpg", "image/pjpeg", "image/gif",
    "image/webp", "image/bmp", "image/x-icon", "image/vnd.microsoft.icon", "image/avif",
    "image/apng", "video/webm", "audio/webm", "video/ogg", "audio/ogg", "application/ogg",
    "audio/wav", "audio/x-wav", "audio/flac", "audio/mpeg", "audio/mp3",
})  # fmt: skip


def shown_in_tab(content_type: str) -> bool:
    """Whether Chromium shows a navigation answered with ``content_type`` itself."""
    mime = content_type.split(";", 1)[0].strip().lower()
    if mime.startswith("text/"):
        return mime not in _TEXT_DOWNLOADED
    return mime in _SHOWN or mime.endswith(("+xml", "+json"))
