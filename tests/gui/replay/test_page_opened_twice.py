"""A page opened again before its first request reached the scheme handler (Return
pressed twice, the same address opened right after a refused navigation) is the page
both times: the second request is not taken for a part of the page, and the first,
cancelled, does not say what the tab shows."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QUrl
from PySide6.QtWebEngineCore import QWebEngineUrlRequestInfo, QWebEngineUrlRequestJob
from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.network import ArchiveSchemeHandler, OfflineInterceptor, RequestLog
from archiver_app.library import Library
from archiver_app.replay import Replayer
from tests.helpers.archive import ArchiveWriter, at

HOME = "archive-https://site.example/"
Types = QWebEngineUrlRequestInfo.ResourceType


class _Info:
    """What the interceptor reads of a top-level request typed in the tab."""

    def __init__(self, url: str) -> None:
        self.url = QUrl(url)

    def requestUrl(self) -> QUrl:
        return self.url

    def resourceType(self) -> QWebEngineUrlRequestInfo.ResourceType:
        return Types.ResourceTypeMainFrame

    def navigationType(self) -> QWebEngineUrlRequestInfo.NavigationType:
        return QWebEngineUrlRequestInfo.NavigationType.NavigationTypeTyped


class _Job(QObject):
    """A request as the handler sees it, keeping its answer."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = QUrl(url)
        self.answer: tuple[str, bytes] | None = None

    def requestUrl(self) -> QUrl:
        return self.url

    def requestHeaders(self) -> dict[Any, Any]:
        return {}

    def initiator(self) -> QUrl:
        return QUrl()

    def setAdditionalResponseHeaders(self, _headers: object) -> None:
        pass

    def reply(self, content_type: bytes, device: Any) -> None:
        self.answer = (content_type.decode(), bytes(device.data().data()))

    def fail(self, error: QWebEngineUrlRequestJob.Error) -> None:
        self.answer = ("failed", error.name.encode())


def test_a_page_opened_twice_at_once_is_the_page_both_times(qtbot: QtBot, library: Library) -> None:
    w = ArchiveWriter(library)
    w.response("https://site.example/", "<h1>home</h1>", at=at(2024), page=True)
    w.commit()
    log = RequestLog()
    interceptor = OfflineInterceptor(log)
    handler = ArchiveSchemeHandler(Replayer.for_library(library), interceptor, log)
    shown: list[str] = []
    handler.pageServed.connect(lambda url, response, _kind: shown.append(response.ts[:4]))

    first, second = _Job(HOME), _Job(HOME)
    interceptor.interceptRequest(_Info(HOME))  # type: ignore[arg-type]
    interceptor.interceptRequest(_Info(HOME))  # type: ignore[arg-type]  # the first cancelled
    handler.requestStarted(first)  # type: ignore[arg-type]
    handler.requestStarted(second)  # type: ignore[arg-type]
    qtbot.waitUntil(lambda: first.answer is not None and second.answer is not None)

    # The page on screen is the second one's, said once; the first's answer is dropped.
    assert second.answer is not None and b"<h1>home</h1>" in second.answer[1]
    assert first.answer == ("failed", b"RequestAborted")
    assert shown == ["2024"]
    assert handler.page_ts is not None and handler.page_ts.startswith("2024")
    assert interceptor.main_frame is None  # nothing left to take a later request for the page
