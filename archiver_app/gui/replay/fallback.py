"""When the built-in browser cannot run a page: notice it, and offer the user's own browser.

The replay view is QtWebEngine, whose Chromium is the one PySide6 ships (140 in PySide6
6.11); captures are made in a current Chromium (156 when this was written). A page written
for the newer engine can fail in the older one however complete its archive is. The way out
is always there (the tab's "Open in my browser": the same capture, still offline, from a
replay server on 127.0.0.1, as ``archiver serve`` does); :class:`EngineFallback` puts it in
front of the user, in a bar above the page, when one of these is seen:

- ``LOAD_FAILED``: the engine gave up loading a page the archive served;
- ``SCRIPT_ERROR``: in the first seconds of a page, an uncaught ``SyntaxError`` (the engine
  could not parse a script: new syntax), or, in a capture made by a newer browser, an
  uncaught ``TypeError``/``ReferenceError`` (a missing built-in). Not counted, because they
  do not mean the engine is too old: messages about resources (not archived, refused by
  the replay's isolation), warnings, JSON that does not parse, and "Unexpected token '<'"
  (an HTML error page where a script was expected: a resource missing from the archive);
- ``NEWER_BROWSER``: the capture was made by a Chromium newer than the engine (a quieter
  note: most pages run the same). As every capture by a current browser would bring it, it
  is shown at most once per run of the app (in the first tab that meets it, which keeps it
  until its ✕), and never once the user chose "Don't show again" (``QSettings`` key
  :data:`VERSION_NOTES_KEY`, turned on again in the Settings dialog). Failures are always
  offered;
- ``RENDERER_STOPPED``: the page's renderer process crashed.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from enum import StrEnum

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWebEngineCore import QWebEnginePage, qWebEngineChromiumVersion
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

#: Script errors count as engine trouble only this long after a page starts loading.
FIRST_SECONDS = 10.0

#: ``QSettings`` key: whether notes about browser versions are shown (default: yes).
VERSION_NOTES_KEY = "replay/version_notes"

_MAJOR = re.compile(r"(?:^|Chrom(?:e|ium)/)(\d{2,4})\.")
_UNCAUGHT = re.compile(r"^Uncaught (SyntaxError|TypeError|ReferenceError)\b")
_NOT_THE_ENGINE = re.compile(r"JSON|Unexpected token '<'|Failed to load resource|net::ERR_")


class Trouble(StrEnum):
    LOAD_FAILED = "load-failed"
    SCRIPT_ERROR = "script-error"
    NEWER_BROWSER = "newer-browser"
    RENDERER_STOPPED = "renderer-stopped"


@dataclass(frozen=True)
class EngineTrouble:
    code: Trouble
    message: str


class _Run:
    """What this run of the app has shown: the version note goes to one tab only."""

    version_note_shown = False


def forget_version_note_shown() -> None:
    """Let the next tab show the version note again, as after a restart (for tests)."""
    _Run.version_note_shown = False


def version_notes_enabled(settings: QSettings) -> bool:
    value = settings.value(VERSION_NOTES_KEY, True)
    return value not in (False, "false", "0", 0)


def set_version_notes_enabled(settings: QSettings, enabled: bool) -> None:
    settings.setValue(VERSION_NOTES_KEY, enabled)
    settings.sync()


def engine_version() -> str:
    """The built-in browser's Chromium version (``140.0.7339.264``)."""
    version: object = qWebEngineChromiumVersion()  # a str at run time; the stubs say bytes
    return version.decode() if isinstance(version, bytes) else str(version)


def engine_major() -> int:
    """The major version of the built-in browser's Chromium."""
    return browser_major(engine_version()) or 0


def browser_major(text: str | None) -> int | None:
    """The Chromium major version in a version string (``156.0.8078.108``) or a user agent
    (``... Chrome/156.0.0.0 Safari/537.36``); None when there is none."""
    if not text:
        return None
    match = _MAJOR.search(text.strip())
    return int(match.group(1)) if match else None


def script_trouble(message: str, *, newer_capture: bool) -> bool:
    """Whether an error-level console ``message`` says the engine could not run the page's
    script (see the module docstring for what is and is not counted)."""
    match = _UNCAUGHT.match(message)
    if match is None or _NOT_THE_ENGINE.search(message):
        return False
    return match.group(1) == "SyntaxError" or newer_capture


class EngineFallback(QWidget):
    """The bar that offers "Open in my browser" when the page shown has engine trouble.

    Threading: GUI thread. Fed by the replay widget: :meth:`page_started`,
    :meth:`capture_shown`, :meth:`load_finished`, :meth:`console_message`,
    :meth:`renderer_stopped`. :attr:`trouble` is what it offers the way out for (None:
    nothing seen), :attr:`offered` tells it.
    """

    offered = Signal(str)  # Trouble code

    def __init__(
        self, action: QAction, parent: QWidget | None = None, settings: QSettings | None = None
    ) -> None:
        super().__init__(parent)
        self.settings = settings if settings is not None else QSettings()
        # False: failures only (panes side by side: a note in one would shift its page)
        self.version_notes = True
        self._owns_version_note = False
        self.setObjectName("engineFallback")
        self.setAutoFillBackground(True)
        # a plain QWidget subclass paints a style sheet's background only with this
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.engine_major = engine_major()
        self.trouble: EngineTrouble | None = None
        self.capture_major: int | None = None
        self._started = time.monotonic()
        self.text = QLabel(self)
        self.text.setWordWrap(True)
        self.button = QPushButton("Open in my browser", self)
        self.button.setToolTip(action.toolTip())
        self.button.setDefault(True)
        self.button.clicked.connect(action.trigger)
        self.never_button = QPushButton("Don't show again", self)
        self.never_button.setObjectName("versionNoteNever")
        self.never_button.setFlat(True)
        self.never_button.setToolTip(
            "No more notes about browser versions (Settings turns them on again);"
            " notes about pages that fail still appear"
        )
        self.never_button.clicked.connect(self.never_again)
        close = QToolButton(self)
        close.setText("✕")
        close.setToolTip("Hide this note (a note about versions stays hidden in this tab)")
        close.clicked.connect(self.dismiss)
        self.version_note_dismissed = False
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 8, 4)
        row.addWidget(self.text, 1)
        row.addWidget(self.never_button)
        row.addWidget(self.button)
        row.addWidget(close)
        self.hide()

    # ------------------------------------------------------------------ inputs

    def page_started(self) -> None:
        """A new page starts loading: forget the last one's trouble."""
        self._started = time.monotonic()
        self.trouble = None
        self.capture_major = None
        self.hide()

    def capture_shown(self, browser: str | None) -> None:
        """The capture shown was made by ``browser`` (version or user agent; None: unknown)."""
        self.capture_major = browser_major(browser)
        if self._newer_capture():
            self._offer(
                Trouble.NEWER_BROWSER,
                f"Captured with Chromium {self.capture_major}; the built-in browser is Chromium"
                f" {self.engine_major}. If this page looks wrong or stays empty, open it in"
                " your own browser (still offline).",
            )

    def load_finished(self, ok: bool) -> None:
        if not ok:
            self._offer(
                Trouble.LOAD_FAILED,
                "The built-in browser could not load this page. Open it in your own browser;"
                " it is still served from your archive only.",
            )

    def console_message(
        self, level: QWebEnginePage.JavaScriptConsoleMessageLevel, text: str
    ) -> None:
        if level != QWebEnginePage.JavaScriptConsoleMessageLevel.ErrorMessageLevel:
            return
        if time.monotonic() - self._started > FIRST_SECONDS:
            return
        if script_trouble(text, newer_capture=self._newer_capture()):
            self._offer(
                Trouble.SCRIPT_ERROR,
                "This page's scripts fail in the built-in browser (Chromium"
                f" {self.engine_major}): “{text[:120]}”. Your own browser may run them; it"
                " still shows only what is in your archive.",
            )

    def renderer_stopped(self) -> None:
        self._offer(
            Trouble.RENDERER_STOPPED,
            "The built-in browser stopped while running this page. Open it in your own"
            " browser; it is still served from your archive only.",
        )

    # ------------------------------------------------------------------ state

    def _newer_capture(self) -> bool:
        return self.capture_major is not None and self.capture_major > self.engine_major

    def dismiss(self) -> None:
        """Hide the bar; a version note, once dismissed, is not shown again in this tab
        (every page captured by a current browser would bring it back); failures are."""
        if self.trouble is not None and self.trouble.code is Trouble.NEWER_BROWSER:
            self.version_note_dismissed = True
        self.hide()

    def never_again(self) -> None:
        """Answer "Don't show again": no version note in any tab, now or in later runs."""
        set_version_notes_enabled(self.settings, False)
        self.dismiss()

    def _version_note_allowed(self) -> bool:
        if not self.version_notes or self.version_note_dismissed:
            return False
        if not version_notes_enabled(self.settings):
            return False
        # once per run: the first tab that shows it keeps it, the others stay quiet
        if _Run.version_note_shown and not self._owns_version_note:
            return False
        _Run.version_note_shown = self._owns_version_note = True
        return True

    def _offer(self, code: Trouble, message: str) -> None:
        # A note about versions never replaces a failure already shown.
        if code is Trouble.NEWER_BROWSER and (
            self.trouble is not None or not self._version_note_allowed()
        ):
            return
        self.trouble = EngineTrouble(code, message)
        self.text.setText(message)
        self.never_button.setVisible(code is Trouble.NEWER_BROWSER)
        # a failure in warm red; the version note, which most pages never need, in grey-blue
        background, border, ink = (
            ("#eef2f8", "#c9d3e3", "#27364f")
            if code is Trouble.NEWER_BROWSER
            else ("#fde8e4", "#e9b8ae", "#6b2418")
        )
        self.setStyleSheet(
            f"#engineFallback {{ background: {background}; border-bottom: 1px solid {border}; }}"
            f" #engineFallback QLabel {{ color: {ink}; }}"
        )
        self.show()
        self.offered.emit(str(code))
