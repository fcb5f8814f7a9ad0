"""What keeps a replayed page offline: the request interceptor and the scheme handler.

The interceptor sees every request the page makes: ``http``/``https`` are redirected to
``archive-http``/``archive-https``; ``data:``, ``blob:``, ``about:`` and our own schemes
pass; everything else (``file:``, ``ws:``, ``ftp:``, ``chrome:``...) is blocked. The scheme
handler answers ``archive-*`` requests from :class:`~archiver_app.replay.Replayer`, in
process: no server, no port. Chromium applies no CORS check to a scheme handler's
answers, so the handler does: a fetch()/XHR from another archived site gets an empty
answer unless the archived ``Access-Control-Allow-Origin`` granted that site.

Threading contract: Qt calls both on the GUI thread; the handler does its lookups and
record reads on a two-thread pool and answers each job back on the GUI thread.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from PySide6.QtCore import QBuffer, QByteArray, QObject, Qt, QUrl, Signal
from PySide6.QtWebEngineCore import (
    QWebEngineUrlRequestInfo,
    QWebEngineUrlRequestInterceptor,
    QWebEngineUrlRequestJob,
    QWebEngineUrlSchemeHandler,
)

from archiver_app.gui.replay import messages
from archiver_app.gui.replay.schemes import (
    ACTION_HOST,
    SCHEME_FOR,
    action_url,
    is_archive_url,
    to_archive_url,
    to_original_url,
)
from archiver_app.replay import (
    NotArchived,
    RecordUnavailable,
    RedirectLoop,
    Replayer,
    ReplayError,
    ReplayResponse,
)
from archiver_app.replay.response import original_header

ALLOWED_SCHEMES = frozenset({"data", "blob", "about"})
SERVED, NOT_ARCHIVED, BLOCKED, REDIRECT, FAILED = (
    "served",
    "not archived",
    "blocked",
    "redirect",
    "error",
)
# Response headers never handed to the page (downloads are off; framing is Qt's).
_NOT_FORWARDED = frozenset({"content-type", "content-length", "content-disposition"})


@dataclass(frozen=True)
class LoggedRequest:
    url: str  # the original (http/https) URL, or the blocked one as asked
    outcome: str
    detail: str = ""


class RequestLog(QObject):
    """Every request a replay view saw and what became of it, in order."""

    logged = Signal(str, str, str)  # url, outcome, detail

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._entries: list[LoggedRequest] = []

    def add(self, url: str, outcome: str, detail: str = "") -> None:
        with self._lock:
            self._entries.append(LoggedRequest(url, outcome, detail))
        self.logged.emit(url, outcome, detail)

    def entries(self) -> list[LoggedRequest]:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class OfflineInterceptor(QWebEngineUrlRequestInterceptor):
    """Redirect http(s) to the archive schemes; block every other scheme."""

    def __init__(self, log: RequestLog, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.log = log
        self.main_frames: set[str] = set()  # archive URLs requested as top-level pages
        # Archive URLs asked for by fetch()/XHR, whose answers a script can read: the
        # handler checks those against the archived CORS grants (see _cors_refused).
        self.script_reads: Counter[str] = Counter()

    def interceptRequest(self, info: QWebEngineUrlRequestInfo) -> None:
        url = info.requestUrl()
        scheme = url.scheme().lower()
        kind = info.resourceType()
        main = kind == QWebEngineUrlRequestInfo.ResourceType.ResourceTypeMainFrame
        read = kind == QWebEngineUrlRequestInfo.ResourceType.ResourceTypeXhr
        if scheme in SCHEME_FOR:
            target = to_archive_url(url)
            if main:
                self._remember(target)
            if read:
                self._count_read(target)
            info.redirect(target)
        elif is_archive_url(url):
            if main:
                self._remember(url)
            if read:
                self._count_read(url)
        elif scheme not in ALLOWED_SCHEMES:
            info.block(True)
            self.log.add(url.toString(), BLOCKED, f"{scheme}: is never fetched during replay")

    def _count_read(self, url: QUrl) -> None:
        if len(self.script_reads) > 1000:
            self.script_reads.clear()
        self.script_reads[url.toString(QUrl.ComponentFormattingOption.FullyEncoded)] += 1

    def take_script_read(self, key: str) -> bool:
        """True (once per request) when ``key`` was asked for by fetch()/XHR."""
        if self.script_reads[key] <= 0:
            self.script_reads.pop(key, None)
            return False
        self.script_reads[key] -= 1
        return True

    def _remember(self, url: QUrl) -> None:
        if len(self.main_frames) > 1000:
            self.main_frames.clear()
        self.main_frames.add(url.toString(QUrl.ComponentFormattingOption.FullyEncoded))


@dataclass
class _Pending:
    """One request being answered off the GUI thread."""

    job: QWebEngineUrlRequestJob
    url: str
    main: bool
    reader: str | None = None  # the page origin (original scheme) of a cross-origin read
    response: ReplayResponse | None = None
    error: ReplayError | None = None


class ArchiveSchemeHandler(QWebEngineUrlSchemeHandler):
    """Answer ``archive-http(s)`` requests from the archive, nearest to ``at``.

    Lookups and record reads run on a two-thread pool, so a large record never freezes
    the view; jobs are answered back on the GUI thread. Emits :attr:`pageServed` for each
    top-level page answered (original URL, response or None when an in-view message was
    shown instead, the error kind).
    """

    pageServed = Signal(str, object, str)
    _answered = Signal()  # no payload: results travel through a queue

    def __init__(
        self,
        replayer: Replayer,
        interceptor: OfflineInterceptor,
        log: RequestLog,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.replayer = replayer
        self.interceptor = interceptor
        self.log = log
        self.at: datetime | str | None = None
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="replay")
        self._done: queue.SimpleQueue[_Pending] = queue.SimpleQueue()
        self._answered.connect(self._finish, Qt.ConnectionType.QueuedConnection)

    def requestStarted(self, job: QWebEngineUrlRequestJob) -> None:
        qurl = job.requestUrl()
        if qurl.host() == ACTION_HOST:
            job.fail(QWebEngineUrlRequestJob.Error.RequestDenied)  # handled by the page
            return
        key = qurl.toString(QUrl.ComponentFormattingOption.FullyEncoded)
        headers = {
            bytes(k.data()).decode().lower(): bytes(v.data()).decode()
            for k, v in job.requestHeaders().items()
        }
        pending = _Pending(job, to_original_url(qurl), key in self.interceptor.main_frames)
        if self.interceptor.take_script_read(key) and job.initiator().isValid():
            reader = _origin(to_original_url(job.initiator()))
            if reader != _origin(pending.url):
                pending.reader = reader
        self._pool.submit(self._work, pending, self.at, headers.get("range"))

    def _work(self, pending: _Pending, at: datetime | str | None, range_: str | None) -> None:
        """On a pool thread: resolve and read, then wake the GUI thread."""
        try:
            pending.response = self.replayer.serve(pending.url, at, range_header=range_)
            if pending.main and pending.response.location:
                self.replayer.redirect_chain(pending.url, at)
        except ReplayError as exc:
            pending.error = exc
        except Exception as exc:  # never leave a request unanswered
            pending.error = ReplayError(f"replay failed: {exc}", url=pending.url)
        self._done.put(pending)
        with contextlib.suppress(RuntimeError):  # the handler was deleted (view closed)
            self._answered.emit()

    def _finish(self) -> None:
        while True:
            try:
                pending = self._done.get_nowait()
            except queue.Empty:
                return
            # RuntimeError: the job was deleted meanwhile (request cancelled, page closed).
            with contextlib.suppress(RuntimeError):
                self._answer(pending)

    def _answer(self, pending: _Pending) -> None:
        job, url, main = pending.job, pending.url, pending.main
        exc, response = pending.error, pending.response
        if isinstance(exc, NotArchived):
            self.log.add(url, NOT_ARCHIVED)
            if main:
                self._reply_message(job, messages.not_archived(url, action_url("capture", url)))
                self.pageServed.emit(url, None, "not-archived")
            else:
                job.fail(QWebEngineUrlRequestJob.Error.UrlNotFound)
            return
        if exc is not None:
            self.log.add(url, FAILED, f"{exc.kind}: {exc}")
            if main:
                self._reply_message(job, _message_for(exc, url))
                self.pageServed.emit(url, None, exc.kind)
            else:
                job.fail(QWebEngineUrlRequestJob.Error.RequestFailed)
            return
        assert response is not None
        if pending.reader is not None and _cors_refused(response, pending.reader):
            self.log.add(url, BLOCKED, f"not readable by {pending.reader} (no archived CORS grant)")
            # An empty answer, not a failed job: QtWebEngine can leave a script's fetch()
            # of a failed job unsettled.
            self._reply_message(job, b"")
            return
        if response.location:
            self.log.add(url, REDIRECT, response.location)
            job.redirect(to_archive_url(response.location))
            return
        self.log.add(url, SERVED, f"{response.status} {response.ts}")
        self._reply(job, response)
        if main:
            self.pageServed.emit(url, response, "")

    def _reply(self, job: QWebEngineUrlRequestJob, response: ReplayResponse) -> None:
        headers = [(k, v) for k, v in response.headers if k.lower() not in _NOT_FORWARDED]
        refresh = original_header(response.headers, "Refresh")
        if refresh is not None:  # followed like any navigation: the interceptor redirects it
            headers.append(("Refresh", refresh))
        headers.append(("Referrer-Policy", "no-referrer"))
        extra = {
            QByteArray(k.encode("latin-1", "replace")): QByteArray(v.encode("latin-1", "replace"))
            for k, v in headers
        }
        if extra:
            job.setAdditionalResponseHeaders(extra)
        buffer = QBuffer(job)
        buffer.setData(QByteArray(response.body))
        buffer.open(QBuffer.OpenModeFlag.ReadOnly)
        job.reply(response.content_type.encode("latin-1", "replace"), buffer)

    def _reply_message(self, job: QWebEngineUrlRequestJob, html: bytes) -> None:
        buffer = QBuffer(job)
        buffer.setData(QByteArray(html))
        buffer.open(QBuffer.OpenModeFlag.ReadOnly)
        job.reply(b"text/html; charset=utf-8", buffer)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _cors_refused(response: ReplayResponse, reader: str) -> bool:
    """Whether a script of the page at origin ``reader`` may not read ``response``.

    Chromium applies no CORS check to answers from a custom scheme handler, so without
    this any archived page could read any other archived site. The archived grant
    (``Access-Control-Allow-Origin``, kept as ``X-Archive-Orig-...``) decides, as it did
    on the live web: ``*`` or the reader's own (original) origin.
    """
    granted = (original_header(response.headers, "Access-Control-Allow-Origin") or "").strip()
    return granted != "*" and granted.rstrip("/").lower() != reader


def _message_for(exc: ReplayError, url: str) -> bytes:
    if isinstance(exc, RecordUnavailable):
        return messages.missing_file(url, exc.path, exc.drives)
    if isinstance(exc, RedirectLoop):
        return messages.redirect_loop(url, exc.chain)
    return messages.damaged(url, str(exc))
