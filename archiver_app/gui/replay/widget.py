"""ReplayWidget: one archived page in an embedded, offline browser, with its timeline.

API for the main window (tabs):

- ``ReplayWidget(library, url=None, at=None, parent=None)``; ``open(url, at=None)``
  shows the capture of ``url`` nearest to ``at`` (newest when None): an address typed in
  the tab opens the newest; a link followed, the capture nearest to the page it is on;
  what a page loads comes from its own capture first (see ``ArchiveSchemeHandler``).
- Back and Forward (buttons, Alt+Left/Right) step through the engine's pages and the
  places an archived PDF's own links moved to (:mod:`.history`); Older and Newer through
  the captures of the page's route (:mod:`.timeline`).
- ``find_text(text, backward=False)`` finds in the page (an archived PDF: in its text, by
  :mod:`.pdf_view`, whose links open in the replay); ``Ctrl+F`` opens the find bar.
- ``open_in_own_browser()`` ("Open in my browser", ``own_browser_action``: the toolbar
  button, the page's context menu, Ctrl+Shift+O) shows the capture, still offline, in the
  system browser through a replay server on 127.0.0.1 (``own_browser_url()``): the way out
  when the embedded engine, older than capture browsers, cannot run a page. ``fallback``
  (:mod:`.fallback`) offers it above the page when the load fails, scripts fail as an
  older engine makes them fail, the capture's browser is newer, or the renderer stops.
- signals ``titleChanged(str)``, ``urlChanged(str)`` (the original URL, never the
  archive scheme), ``captureChanged(str)`` (ts17 of the capture shown, '' for a message),
  ``captureRequested(str, int)`` (a URL not archived the user asked to capture, and the
  capture shown before it, 0: none; confirm before fetching anything live),
  ``deletedChanged(bool)`` (the capture shown was deleted; False: another is shown now) and
  ``requestLogged(str, str, str)``.
- ``refresh_timeline()`` (the window calls it when captures were added or deleted, here or
  elsewhere) lists the page's captures again; a capture shown that was deleted is replaced
  by a page saying so (``show_deleted()``), and nothing offers it any more.
- A capture the engine would only download (a zip, a CSV; downloads are off) is shown as a
  page saying what it is, whose buttons call ``save_copy()`` ("Save a Copy…": the archived
  bytes, where the user chooses) and ``open_in_own_browser()``.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from PySide6.QtCore import QPoint, QSize, Qt, QUrl, Signal
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence, QPixmap
from PySide6.QtWebEngineCore import QWebEngineFindTextResult, QWebEnginePage
from PySide6.QtWebEngineWidgets import QWebEngineView
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from archiver_app.api.timeline import OtherView, route_of
from archiver_app.durable import atomic_write
from archiver_app.gui.replay import keys, messages
from archiver_app.gui.replay.fallback import EngineFallback
from archiver_app.gui.replay.find_bar import FindBar
from archiver_app.gui.replay.history import ReplayHistory
from archiver_app.gui.replay.network import ArchiveSchemeHandler, OfflineInterceptor, RequestLog
from archiver_app.gui.replay.page import ReplayPage, make_profile
from archiver_app.gui.replay.pdf_view import ArchivedPdfView, is_pdf
from archiver_app.gui.replay.schemes import register_schemes, to_archive_url, to_original_url
from archiver_app.gui.replay.timeline import CaptureTimeline
from archiver_app.library import Library
from archiver_app.replay import Capture, Replayer, ReplayResponse
from archiver_app.units import counted
from archiver_app.urls import display_url
from archiver_app.warc.httpmsg import file_name
from archiver_app.warc.timestamps import parse_ts

if TYPE_CHECKING:
    from archiver_app.replay.server import ReplayServer

NO_SCREENSHOT = "This capture has no screenshot."
DELETED = "This capture was deleted from the library."


def describe_ts(ts: str) -> str:
    return f"{parse_ts(ts):%Y-%m-%d %H:%M:%S} UTC"


class ReplayWidget(QWidget):
    """An offline replay tab. Threading: GUI thread only."""

    titleChanged = Signal(str)
    urlChanged = Signal(str)
    captureChanged = Signal(str)
    captureRequested = Signal(str, int)
    requestLogged = Signal(str, str, str)
    deletedChanged = Signal(bool)

    def __init__(
        self,
        library: Library,
        url: str | None = None,
        at: datetime | str | None = None,
        parent: QWidget | None = None,
        *,
        replayer: Replayer | None = None,
        version_notes: bool = True,
    ) -> None:
        super().__init__(parent)
        register_schemes()  # no-op when done before the QApplication, as it must be
        self.library = library
        self.replayer = replayer or Replayer.for_library(library)
        self.at: datetime | str | None = at
        self.current: ReplayResponse | None = None
        self.deleted: ReplayResponse | None = None  # the capture shown, deleted since
        self.last_capture = 0  # the capture of the last archived page shown (0: none yet)
        self.capture_browser: str | None = None  # the browser that made ``current``
        self.current_url = ""
        self.pdf_title: str | None = None  # the tab's title while the PDF view shows one
        self.route_url = ""  # the page's address with its route, as last known

        self.log = RequestLog(self)
        self.log.logged.connect(self.requestLogged)
        # Ownership: view -> page -> profile -> (interceptor, handler), so the page always
        # dies before its profile, as QtWebEngine requires.
        self.profile = make_profile(self.log)
        self.interceptor = OfflineInterceptor(self.log, self.profile)
        self.profile.setUrlRequestInterceptor(self.interceptor)
        self.handler = ArchiveSchemeHandler(self.replayer, self.interceptor, self.log, self.profile)
        for scheme in (b"archive-http", b"archive-https"):
            self.profile.installUrlSchemeHandler(scheme, self.handler)
        self.handler.pageServed.connect(self._page_served)

        self.view = QWebEngineView(self)
        self.page = ReplayPage(self.profile, self.log, self.view)
        self.view.setPage(self.page)
        self.profile.setParent(self.page)
        self.page.titleChanged.connect(self._page_title)
        self.page.urlChanged.connect(self._url_changed)
        self.page.actionRequested.connect(self._page_action)
        self.page.renderProcessTerminated.connect(self._engine_stopped)
        self._server: ReplayServer | None = None
        self._build_ui()
        buttons = (self.back_button, self.forward_button)
        self.history = ReplayHistory(self, self.view, self.pdf_view, *buttons)
        self.fallback.version_notes = version_notes
        self.page.loadStarted.connect(self.fallback.page_started)
        self.page.loadFinished.connect(self._load_finished)
        self.page.consoleMessage.connect(self.fallback.console_message)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._context_menu)
        if url:
            self.open(url, at)

    # ------------------------------------------------------------------ layout

    # Long: the replay tab's toolbar, view and bars laid out in order read best whole.
    def _build_ui(self) -> None:
        self.back_button = self._tool("◀", "Back")  # both: ReplayHistory's
        self.forward_button = self._tool("▶", "Forward")
        self.address = QLineEdit(self)
        self.address.setPlaceholderText("Archived URL")
        # a typed address opens its newest capture, as in pywb or ReplayWeb.page
        self.address.returnPressed.connect(lambda: self.open(self.address.text()))
        self.timeline_bar = CaptureTimeline(self.library, self.replayer, self)
        self.timeline_bar.captureChosen.connect(self.open)
        self.timeline_bar.routeChosen.connect(lambda url: self.open(url, self.shown_at()))
        self.timeline = self.timeline_bar.combo
        self.older_button = self.timeline_bar.older_button
        self.newer_button = self.timeline_bar.newer_button
        self.views_button = self.timeline_bar.views_button
        self.screenshot_button = QPushButton("Screenshot", self)
        self.screenshot_button.setCheckable(True)
        self.screenshot_button.toggled.connect(self.show_screenshot)
        self.live_button = QPushButton("Open live page", self)
        self.live_button.setToolTip("Open the original address in your web browser")
        self.live_button.clicked.connect(self.open_live)
        self.own_browser_action = QAction(keys.OWN_BROWSER_TEXT, self)
        self.own_browser_action.setShortcut(QKeySequence(keys.OWN_BROWSER))
        self.own_browser_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.own_browser_action.setToolTip(
            "Open this capture in your own web browser, still offline: served from your"
            " archive on 127.0.0.1 (as `archiver serve` does), for pages the built-in"
            f" browser cannot run ({keys.OWN_BROWSER})"
        )
        self.own_browser_action.triggered.connect(self.open_in_own_browser)
        self.addAction(self.own_browser_action)
        self.own_browser_button = QPushButton("Open in my browser", self)
        self.own_browser_button.setToolTip(self.own_browser_action.toolTip())
        self.own_browser_button.clicked.connect(self.own_browser_action.trigger)
        self.fallback = EngineFallback(self.own_browser_action, self)

        bar = QHBoxLayout()
        for w in (
            self.back_button,
            self.forward_button,
            self.address,
            *self.timeline_bar.widgets(),
            self.screenshot_button,
            self.own_browser_button,
            self.live_button,
        ):
            bar.addWidget(w)
        bar.setStretchFactor(self.address, 1)

        self.banner = QLabel(self)
        self.banner.setObjectName("replayBanner")
        self.banner.setStyleSheet(
            "#replayBanner { background: #fdf6e3; color: #5b4a14; padding: 4px 8px;"
            " border-bottom: 1px solid #e8dcb0; }"
        )
        self.banner.setText("Offline replay: nothing is fetched from the live web.")
        self.banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner.setWordWrap(True)  # a long one (a redirect named) widens no pane of Compare

        self.screenshot_label = QLabel(self)
        self.screenshot_label.setAlignment(
            Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignHCenter
        )
        scroll = QScrollArea(self)
        scroll.setWidget(self.screenshot_label)
        scroll.setWidgetResizable(True)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.view)
        self.stack.addWidget(scroll)
        self.find_bar = FindBar(self)
        self.find_bar.findRequested.connect(self.find_text)
        self.find_edit, self.find_count = self.find_bar.edit, self.find_bar.count
        self.pdf_view = ArchivedPdfView(self)  # a PDF page: QtWebEngine would download it
        self.pdf_view.linkActivated.connect(self._follow_pdf_link)
        self.pdf_view.found.connect(self.find_bar.show_count)
        self.stack.addWidget(self.pdf_view)
        # Ctrl+F (find in page) is the window's Find, which calls start_find; Alt+Left and
        # Alt+Right are ReplayHistory's
        self.page.findTextFinished.connect(self._found)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.banner)
        layout.addWidget(self.fallback)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.find_bar)
        self.timeline_bar.update_controls()
        self._offer_capture_actions()

    def _tool(self, label: str, tip: str, slot: object = None) -> QToolButton:
        button = QToolButton(self)
        button.setText(label)
        button.setToolTip(tip)
        if slot is not None:
            button.clicked.connect(slot)
        return button

    def sizeHint(self) -> QSize:
        return QSize(1200, 800)

    # ------------------------------------------------------------------ navigation

    def open(self, url: str, at: datetime | str | None = None) -> None:
        """Show the capture of ``url`` nearest to ``at`` (newest when None); ``url`` as
        stored or as people read it (typed, or shown in the address box) is the same."""
        url = url.strip()
        url = to_original_url(to_archive_url(url if "://" in url else "https://" + url))
        self.at = at
        self.handler.at = at
        self._show_address(url)
        self.route_url = url
        self.screenshot_button.setChecked(False)
        self.history.leaving()
        self.view.load(to_archive_url(url))

    def shown_at(self) -> datetime | str | None:
        """The time of the capture on screen (or last shown): a link followed from it
        opens the capture nearest to it."""
        return self.current.ts if self.current is not None else self.handler.page_ts or self.at

    def step(self, delta: int) -> None:
        """Show the previous (-1) or next (+1) capture of this URL group."""
        self.timeline_bar.step(delta)

    @property
    def captures(self) -> list[Capture]:
        """The captures of the page's route, as the timeline lists them."""
        return self.timeline_bar.captures

    @property
    def other_views(self) -> tuple[OtherView, ...]:
        """The document's other routes (its "Other views" menu)."""
        return self.timeline_bar.other_views

    def open_live(self) -> None:
        """Open the original address in the system browser (explicit user action only)."""
        if self.current_url:
            QDesktopServices.openUrl(QUrl(self.current_url))

    def own_browser_url(self) -> str | None:
        """The capture shown, at its address on a replay server on 127.0.0.1 (started on
        first use, one per tab, closed with the tab); None when no capture is shown (a
        message is: not archived, a missing file...)."""
        if not self.current_url or self.current is None or self.deleted is not None:
            return None
        if self._server is None:
            from archiver_app.replay.server import ReplayServer

            server = self._server = ReplayServer(self.library).start()
            self.destroyed.connect(lambda *_: server.close())
        return self._server.url_for(self.current_url, self.current.ts[:14])

    def open_in_own_browser(self) -> None:
        """Open the capture shown, offline, in the system browser (explicit action only)."""
        url = self.own_browser_url()
        if url and not QDesktopServices.openUrl(QUrl(url)):
            self.banner.setText(  # no browser set up: say so, and give the address to copy
                f"No web browser could be opened. Open {url} in yours: it is served from"
                " your archive only, while this tab is open."
            )

    def _engine_stopped(self, *_args: object) -> None:
        self.banner.setText(
            "The built-in browser could not run this page. Use “Open in my browser” to see"
            " it, still offline, in your own browser."
        )
        self.fallback.renderer_stopped()

    def _load_finished(self, ok: bool) -> None:
        # A message page (not archived, missing file) is no engine trouble: only a capture
        # the archive served counts.
        if self.current is not None:
            if self.current.snapshot_id is not None and self.fallback.capture_major is None:
                # Under load, loadStarted can come after the capture was served (and forget
                # it): tell the bar again which browser made what it shows.
                self.fallback.capture_shown(self.capture_browser)
            # a sound or video shown by its address: the tab's player ends the page's own
            # load to read the file in ranges, which the engine reports as a failed load
            kind = (self.current.header("Content-Type") or "").strip().lower()
            played = bool(self.current.body) and kind.startswith(("audio/", "video/"))
            self.fallback.load_finished(ok or played)

    def _page_action(self, action: str, url: str) -> None:
        """A button of a message page: capture a page not archived, or the file page's."""
        if action == "capture":
            self.captureRequested.emit(url, self.last_capture)
        elif action == "own-browser":
            self.open_in_own_browser()
        elif action == "save":  # the capture shown: the file page is its own
            self.save_copy()

    def save_copy(self) -> None:
        """Save the body of the capture shown (a file the engine does not show) where the
        user chooses."""
        if self.current is None:
            return
        name = file_name(self.current_url, self._disposition())
        start = str(Path.home() / name)
        path, _filter = QFileDialog.getSaveFileName(self, "Save a Copy", start)
        if not path:
            return
        try:
            atomic_write(path, self.current.body)
        except OSError as exc:
            self.banner.setText(f"The copy could not be saved: {exc.strerror or exc}")
            return
        self.banner.setText(f"Saved a copy of the archived file as {path}")

    def _disposition(self) -> str | None:
        headers = self.current.headers if self.current is not None else []
        return next((v for k, v in headers if k.lower() == "content-disposition"), None)

    def _page_title(self, title: str) -> None:
        # not the title of the file page behind a PDF, nor of the page saying it was deleted
        if self.pdf_title is None and self.deleted is None:
            self.titleChanged.emit(title)

    def _follow_pdf_link(self, target: str) -> None:
        """A link to an address in the PDF shown: its capture, as a link of a page opens."""
        url = urljoin(self.current_url, target.strip())
        if urlsplit(url).scheme.lower() in ("http", "https"):
            self.open(url, self.shown_at())
        else:
            self.banner.setText(
                f"This link leads out of the archive ({url}): replay does not open it."
            )

    def _context_menu(self, pos: QPoint) -> None:
        # the engine's own menu needs the engine's request (a real right-click in the page)
        if self.view.lastContextMenuRequest() is None:
            menu = QMenu(self.view)
        else:
            menu = self.view.createStandardContextMenu()
            # saving (a download) and the source view (a new window) are off in replay
            for action in (QWebEnginePage.WebAction.SavePage, QWebEnginePage.WebAction.ViewSource):
                menu.removeAction(self.page.action(action))
        menu.addSeparator()
        menu.addAction(self.own_browser_action)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(self.view.mapToGlobal(pos))

    def find_text(self, text_: str, backward: bool = False) -> None:
        """Find in the page shown: the PDF's text when it is a PDF."""
        self.find_bar.finding = text_  # what the count is of
        if self.pdf_title is not None:
            self.pdf_view.find_text(text_, backward)
            return
        flags = QWebEnginePage.FindFlag.FindBackward if backward else QWebEnginePage.FindFlag(0)
        self.page.findText(text_, flags)

    def _found(self, result: QWebEngineFindTextResult) -> None:
        if self.pdf_title is None:  # not the file page behind a PDF
            self.find_bar.show_count(result.activeMatch(), result.numberOfMatches())

    def start_find(self) -> None:
        self.find_bar.start()

    def close_find(self) -> None:
        self.find_bar.close_find()

    # ------------------------------------------------------------------ state

    def _show_address(self, url: str) -> None:
        """``url`` in the address box from its start (scheme and host), as browsers show
        it, not scrolled to its end, and as people read it (``/мир``, not ``/%D0%BC...``)."""
        self.address.setText(display_url(url))
        self.address.setCursorPosition(0)

    def _url_changed(self, qurl: QUrl) -> None:
        original = to_original_url(qurl)
        if qurl.scheme().startswith("archive-"):
            self.current_url = original
            self.route_url = original
            self._show_address(original)
            self.urlChanged.emit(original)
            # another route of the same document (no new request): its own timeline
            shown = self.captures[0].url if self.captures else ""
            if self.current is not None and shown and route_of(original) != route_of(shown):
                self.timeline_bar.show(original, self.current.ts, self.current.snapshot_id)

    def _page_served(self, url: str, response: ReplayResponse | None, kind: str) -> None:
        self.current = response
        self._mark_deleted(None)
        self._offer_capture_actions()
        self.capture_browser = None
        self.current_url = url
        pdf = response is not None and is_pdf(response.headers) and 200 <= response.status < 300
        if not pdf:
            self.history.page_shown()
            self.pdf_title = None  # the engine's page, and its title, are what is shown
            if self.stack.currentWidget() is self.pdf_view:
                self.stack.setCurrentWidget(self.view)
        if response is None:
            self.timeline_bar.set_route(url if kind != "not-archived" else None)
            label = {
                "not-archived": "Not archived: nothing was fetched from the live web.",
                "missing-file": "The archive file of this capture is not on this computer.",
                "redirect-loop": "This archived page redirects in a loop.",
            }.get(kind, "This capture cannot be shown.")
            self.banner.setText(label)
            self.timeline_bar.fill("")
            self.captureChanged.emit("")
            return
        if pdf:
            self.pdf_view.show_pdf(response.body)
            self.stack.setCurrentWidget(self.pdf_view)
            self.history.pdf_shown(url)
            # the table's title: the document's own, else the file's name
            self.pdf_title = self.pdf_view.title() or file_name(url, self._disposition())
            self.titleChanged.emit(self.pdf_title)
        if response.snapshot_id is not None:
            self.last_capture = response.snapshot_id
            self.capture_browser = self.library.snapshots.capture_browser(response.snapshot_id)
            self.fallback.capture_shown(self.capture_browser)
        # The request carries no fragment: the route is the one the page was opened at.
        same_document = self.route_url.split("#", 1)[0] == url.split("#", 1)[0]
        page_url = self.route_url if same_document else url
        start = self.handler.redirect_start
        self._show_banner(response, self.timeline_bar.show_page(page_url, response, start))
        self.captureChanged.emit(response.ts)

    def _show_banner(self, response: ReplayResponse, position: int) -> None:
        total = len(self.captures)
        ts = response.ts  # the capture's time, as the timeline says it, when it is listed
        redirect = self.timeline_bar.redirect  # the listed capture that redirected here
        chosen = redirect.response if redirect is not None else response
        if 0 <= position < total and self.captures[position].snapshot_id == chosen.snapshot_id:
            ts = self.captures[position].ts
        where = f" — capture {position + 1} of {total}" if total and position >= 0 else ""
        note = ""
        if redirect is not None:
            where += f" of {display_url(redirect.url)}, which redirected to this page"
        if response.match != "exact":
            note = f" (closest match: {response.url})"
        if response.truncated:
            note += f" — this capture was cut short when it was made ({response.truncated})"
        retried = self.timeline_bar.retried_mark(response.snapshot_id)
        if retried is not None:  # the timeline's mark, and what it means
            note += f" — {retried}: the page was tried again in the same run (the next capture)"
        self.banner.setText(f"Archived on {describe_ts(ts)}{where}{note}")

    def refresh_timeline(self) -> None:
        """Read the shown page's captures again, keeping the one shown: a capture, a watch
        or an import may have added one since, or a deletion taken one away (the window
        calls this when a job ends and when captures change, here or elsewhere). The
        capture shown, deleted, is said to be deleted."""
        if self.deleted is not None and self.timeline_bar.url:
            self.timeline_bar.show_deleted(self.timeline_bar.url, self.deleted.ts)
        elif self.current is not None and self.timeline_bar.url:
            if not self._still_stored():
                self.show_deleted()
                return
            self._show_banner(self.current, self.timeline_bar.refresh(self.current))

    def lists_any(self, snapshot_ids: Collection[int]) -> bool:
        """Whether the tab shows or lists any of these captures."""
        listed = {c.snapshot_id for c in self.captures}
        listed.update(r.snapshot_id for r in (self.current, self.deleted) if r is not None)
        return not listed.isdisjoint(snapshot_ids)

    def _still_stored(self) -> bool:
        sid = self.current.snapshot_id if self.current is not None else None
        return sid is None or self.library.snapshots.exists(sid)

    def show_deleted(self) -> None:
        """The capture shown was deleted (in this window, another, or on another computer
        sharing the library): a page says so in its place, the timeline lists the captures
        left with none chosen, and nothing offers the deleted one any more (its
        screenshot, a copy, your own browser)."""
        response = self.current
        if response is None:
            return
        self.current = None
        self.replayer.invalidate()  # at once (its next lookup would see the deletion too)
        self.screenshot_button.setChecked(False)
        self.history.leaving()
        self.pdf_title = None
        self.stack.setCurrentWidget(self.view)
        self._mark_deleted(response)
        self._offer_capture_actions()
        self.timeline_bar.show_deleted(self.timeline_bar.url or self.current_url, response.ts)
        when = describe_ts(response.ts)
        page = messages.deleted(self.current_url, when, len(self.captures))
        self.view.setHtml(page.decode("utf-8"), QUrl("about:blank"))
        self.history.page_shown()
        left = counted(len(self.captures), "other capture")
        left = f"The timeline lists the {left} of this address." if self.captures else ""
        self.banner.setText(f"{DELETED} It was made on {when}. {left}".strip())
        self.captureChanged.emit("")

    def _mark_deleted(self, response: ReplayResponse | None) -> None:
        """Remember the deleted capture shown (None: a capture is shown again)."""
        if (self.deleted is None) == (response is None):
            return
        self.deleted = response
        self.deletedChanged.emit(response is not None)

    def _offer_capture_actions(self) -> None:
        """Screenshot and Open in my browser act on the capture shown: off while a message
        (not archived, a missing file...) or a deleted capture is shown in its place."""
        shown = self.current is not None and self.deleted is None
        for control in (self.screenshot_button, self.own_browser_button, self.own_browser_action):
            control.setEnabled(shown)

    # ------------------------------------------------------------------ screenshot

    def screenshot(self) -> Path | bytes | None:
        """The screenshot of the capture shown (its file, or the PNG its WARC keeps)."""
        if self.current is None or self.current.snapshot_id is None:
            return None
        return self.library.snapshots.screenshot(self.current.snapshot_id)

    def show_screenshot(self, on: bool) -> None:
        """Show the screenshot taken at capture time instead of the live rendering."""
        if not on:
            showing_pdf = self.current is not None and is_pdf(self.current.headers)
            self.stack.setCurrentWidget(self.pdf_view if showing_pdf else self.view)
            return
        shot = self.screenshot()
        if shot is None and not self._still_stored():  # deleted, and not yet told
            self.show_deleted()  # (which turns the screenshot off)
            return
        pixmap = QPixmap(str(shot)) if isinstance(shot, Path) else QPixmap()
        if isinstance(shot, bytes):
            pixmap.loadFromData(shot)
        if pixmap.isNull():
            self.screenshot_label.setPixmap(QPixmap())
            self.screenshot_label.setText(DELETED if self.deleted is not None else NO_SCREENSHOT)
        else:
            self.screenshot_label.setPixmap(pixmap)
        self.stack.setCurrentIndex(1)
