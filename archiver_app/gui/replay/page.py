"""The web page and profile a replay view uses: off the record and locked down."""

from __future__ import annotations

import re

from PySide6.QtCore import QObject, QUrl, QUrlQuery, Signal
from PySide6.QtWebEngineCore import (
    QWebEngineDownloadRequest,
    QWebEnginePage,
    QWebEnginePermission,
    QWebEngineProfile,
    QWebEngineSettings,
)

from archiver_app.gui.replay.network import BLOCKED, RequestLog
from archiver_app.gui.replay.page_script import install_page_script
from archiver_app.gui.replay.schemes import ACTION_HOST, to_original_url

_LOCAL_REFUSED = re.compile(r"Not allowed to load local resource: (\S+)")
_OFF = (
    QWebEngineSettings.WebAttribute.JavascriptCanOpenWindows,
    QWebEngineSettings.WebAttribute.LocalContentCanAccessRemoteUrls,
    QWebEngineSettings.WebAttribute.LocalContentCanAccessFileUrls,
    QWebEngineSettings.WebAttribute.AllowRunningInsecureContent,
    QWebEngineSettings.WebAttribute.AllowGeolocationOnInsecureOrigins,
    QWebEngineSettings.WebAttribute.DnsPrefetchEnabled,
    QWebEngineSettings.WebAttribute.HyperlinkAuditingEnabled,
    QWebEngineSettings.WebAttribute.ScreenCaptureEnabled,
    QWebEngineSettings.WebAttribute.AllowWindowActivationFromJavaScript,
    QWebEngineSettings.WebAttribute.JavascriptCanAccessClipboard,
    QWebEngineSettings.WebAttribute.JavascriptCanPaste,
    QWebEngineSettings.WebAttribute.NavigateOnDropEnabled,
)


def make_profile(log: RequestLog, parent: QObject | None = None) -> QWebEngineProfile:
    """A fresh off-the-record profile: no disk storage, no push, no downloads; the page
    script of :mod:`.page_script` in every page."""
    profile = QWebEngineProfile(parent)  # no storage name: off the record
    assert profile.isOffTheRecord()
    profile.setPushServiceEnabled(False)
    profile.setPersistentPermissionsPolicy(
        QWebEngineProfile.PersistentPermissionsPolicy.AskEveryTime
    )
    settings = profile.settings()
    for attribute in _OFF:
        settings.setAttribute(attribute, False)
    settings.setAttribute(QWebEngineSettings.WebAttribute.WebRTCPublicInterfacesOnly, True)
    # mailto:, tel:, custom app schemes: never handed to another program.
    settings.setUnknownUrlSchemePolicy(
        QWebEngineSettings.UnknownUrlSchemePolicy.DisallowUnknownUrlSchemes
    )

    def refuse_download(download: QWebEngineDownloadRequest) -> None:
        log.add(download.url().toString(), BLOCKED, "downloads are off during replay")
        download.cancel()

    profile.downloadRequested.connect(refuse_download)
    install_page_script(profile)
    return profile


class ReplayPage(QWebEnginePage):
    """Refuses new windows and every permission; turns the links of the app's own message
    pages (``action_url``) into :attr:`actionRequested` and passes console messages on (the
    engine-trouble check reads them)."""

    actionRequested = Signal(str, str)  # action ("capture", "save", "own-browser"), url
    consoleMessage = Signal(object, str)  # level (JavaScriptConsoleMessageLevel), text

    def __init__(self, profile: QWebEngineProfile, log: RequestLog, parent: QObject) -> None:
        super().__init__(profile, parent)
        self.log = log
        self.permissionRequested.connect(self._deny)

    def _deny(self, permission: QWebEnginePermission) -> None:
        self.log.add(
            to_original_url(permission.origin()),
            BLOCKED,
            f"permission {permission.permissionType().name} denied",
        )
        permission.deny()

    def createWindow(  # type: ignore[override]
        self, _type: QWebEnginePage.WebWindowType
    ) -> QWebEnginePage | None:
        self.log.add(to_original_url(self.url()), BLOCKED, "new window refused")
        return None

    def acceptNavigationRequest(
        self, url: QUrl | str, nav_type: QWebEnginePage.NavigationType, is_main_frame: bool
    ) -> bool:
        qurl = QUrl(url)
        if qurl.host() != ACTION_HOST:
            return True
        clicked = nav_type == QWebEnginePage.NavigationType.NavigationTypeLinkClicked
        if clicked and is_main_frame:
            self.actionRequested.emit(qurl.path().strip("/"), QUrlQuery(qurl).queryItemValue("url"))
        return False

    def javaScriptConsoleMessage(
        self,
        level: QWebEnginePage.JavaScriptConsoleMessageLevel,
        message: str,
        line: int,
        source: str,
    ) -> None:
        self.consoleMessage.emit(level, message)
        # Chromium refuses file: URLs from other origins itself, before any interceptor;
        # its console note is the only trace, so it goes to the request log.
        match = _LOCAL_REFUSED.search(message)
        if match:
            self.log.add(match.group(1), BLOCKED, "local files are never loaded by replay")
