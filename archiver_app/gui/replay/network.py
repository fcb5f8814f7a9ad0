"""What keeps a replayed page offline: the request interceptor and the scheme handler.

The interceptor sees every request the page makes: ``http``/``https`` are redirected to
``archive-http``/``archive-https``; ``data:``, ``blob:``, ``about:`` and our own schemes
pass; everything else (``file:``, ``ws:``, ``ftp:``, ``chrome:``...) is blocked. The scheme
handler answers ``archive-*`` requests from :class:`~archiver_app.replay.Replayer`, in
process: no server, no port. Chromium applies no CORS check to a scheme handler's
answers, so the handler does: a fetch()/XHR from another archived site gets an empty
answer unless the archived ``Access-Control-Allow-Origin`` granted that site.

Threading contract: Qt calls both on the GUI thread; the handler does its lookups, record
reads and the pointing of a body's addresses at the archive on a two-thread pool, which
touches no Qt object, and answers each job back on the GUI thread (polling for the results
while any are due).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from PySide6.QtCore import QBuffer, QByteArray, QObject, QTimer, QUrl, QUrlQuery, Signal
from PySide6.QtWebEngineCore import (
    QWebEngineUrlRequestInfo,
    QWebEngineUrlRequestInterceptor,
    QWebEngineUrlRequestJob,
    QWebEngineUrlSchemeHandler,
)

from archiver_app.capture.browser import shown_in_tab
from archiver_app.gui.replay import messages
from archiver_app.gui.replay.page_script import for_worker
from archiver_app.gui.replay.pdf_view import PDF_TYPES
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
from archiver_app.replay.cookies import CookieJar
from archiver_app.replay.response import original_header
from archiver_app.replay.rewrite import (
    defuse_integrity,
    prefix_module_imports,
    prefix_schemes,
)
from archiver_app.units import human_bytes

Navigation = QWebEngineUrlRequestInfo.NavigationType
POLL_MS = 2  # how often the GUI thread looks for answers while requests are out
ALLOWED_SCHEMES = frozenset({"data", "blob", "about"})
SERVED, NOT_ARCHIVED, BLOCKED, REDIRECT, FAILED = (
    "served",
    "not archived",
    "blocked",
    "redirect",
    "error",
)
# Bodies whose resource addresses are pointed at the archive schemes as they are served.
_MARKUP_TYPES = ("text/html", "application/xhtml", "text/css")
_HTML_TYPES = ("text/html", "application/xhtml")
# Archived headers never handed to the page (downloads are off; framing is Qt's; caching
# is ours: see _send).
_NOT_FORWARDED = frozenset(
    {"content-type", "content-length", "content-disposition", "cache-control", "expires"}
)


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
        # The top-level page being navigated to (archive URL, how): the one request that
        # is the page, whatever else asks for that address (an iframe, an image) later.
        self.main_frame: tuple[str, Navigation] | None = None
        # How many requests of that page are due at the handler: a page opened again
        # before its last request reached the handler (a reader pressing Return twice,
        # a test opening it twice) makes two, and the later one is the page too.
        self._main_due = 0
        self.sub_frames: set[str] = set()  # archive URLs requested as the pages of frames
        # and as the scripts of workers: the page script tells the handler (a worker's
        # requests reach the handler but never this interceptor)
        self.workers: set[str] = set()
        # Archive URLs asked for by fetch()/XHR, whose answers a script can read: the
        # handler checks those against the archived CORS grants (see _cors_refused).
        self.script_reads: Counter[str] = Counter()

    def interceptRequest(self, info: QWebEngineUrlRequestInfo) -> None:
        url = info.requestUrl()
        scheme = url.scheme().lower()
        kind = info.resourceType()
        types = QWebEngineUrlRequestInfo.ResourceType
        read = kind == types.ResourceTypeXhr
        if scheme in SCHEME_FOR or is_archive_url(url):
            redirect = scheme in SCHEME_FOR
            target = to_archive_url(url) if redirect else url
            if kind == types.ResourceTypeMainFrame:  # a new page: any before it is stale
                key = target.toString(QUrl.ComponentFormattingOption.FullyEncoded)
                again = self.main_frame is not None and self.main_frame[0] == key
                self._main_due = self._main_due + 1 if again else 1
                self.main_frame = (key, info.navigationType())
            elif kind == types.ResourceTypeSubFrame:
                self._remember(self.sub_frames, target)
            if read:
                self._count_read(target)
            if redirect:
                info.redirect(target)
        elif scheme not in ALLOWED_SCHEMES:
            info.block(True)
            self.log.add(url.toString(), BLOCKED, f"{scheme}: is never fetched during replay")

    def _count_read(self, url: QUrl) -> None:
        if len(self.script_reads) > 1000:
            self.script_reads.clear()
        self.script_reads[url.toString(QUrl.ComponentFormattingOption.FullyEncoded)] += 1

    def take_main_frame(self, key: str) -> Navigation | None:
        """How the top-level page ``key`` (an archive address) was navigated to, once: its
        own request; None for any other request of that address."""
        if self.main_frame is None or self.main_frame[0] != key:
            return None
        navigation = self.main_frame[1]
        self._main_due -= 1
        if self._main_due <= 0:
            self.main_frame, self._main_due = None, 0
        return navigation

    def take_script_read(self, key: str) -> bool:
        """True (once per request) when ``key`` was asked for by fetch()/XHR."""
        if self.script_reads[key] <= 0:
            self.script_reads.pop(key, None)
            return False
        self.script_reads[key] -= 1
        return True

    def remember_worker(self, url: QUrl) -> None:
        """Mark ``url`` (an archive address) as the script of a worker."""
        self._remember(self.workers, url)

    @staticmethod
    def _remember(frames: set[str], url: QUrl) -> None:
        if len(frames) > 1000:
            frames.clear()
        frames.add(url.toString(QUrl.ComponentFormattingOption.FullyEncoded))


@dataclass(frozen=True)
class RedirectStart:
    """Where a page shown was first asked for, when its capture there redirected: the
    address (original form) and that capture's redirect."""

    url: str
    response: ReplayResponse


@dataclass
class _Pending:
    """One request being answered off the GUI thread."""

    job: QWebEngineUrlRequestJob
    url: str
    key: str  # the archive address asked for
    main: bool
    frame: bool  # the page of a frame (or the top-level page: main)
    worker: bool = False  # the script of a worker
    reader: str | None = None  # the page origin (original scheme) of a cross-origin read
    serial: int = 0  # of a top-level page: how many were asked for before it, and it
    response: ReplayResponse | None = None
    body: bytes | None = None  # the response's, its addresses pointed at the archive
    error: ReplayError | None = None


class ArchiveSchemeHandler(QWebEngineUrlSchemeHandler):
    """Answer ``archive-http(s)`` requests from the archive.

    Which capture, as a browser-like archive viewer (pywb, ReplayWeb.page) chooses:

    - a page the tab opens (typed, the timeline: the view's own load): the one nearest
      to ``at`` (the newest when None);
    - a page the page on screen leads to (a link, a form, a script, a frame): the one
      nearest to that page's capture; a redirect's target: nearest to the redirect;
    - Back, Forward and Reload: the capture shown at that address before;
    - what a page asks for (images, scripts, frames): the record its own capture stored,
      else the one nearest to its capture.

    Lookups and record reads run on a two-thread pool, so a large record never freezes
    the view; jobs are answered back on the GUI thread. Emits :attr:`pageServed` for each
    top-level page answered (original URL, response or None when an in-view message was
    shown instead, the error kind); :attr:`redirect_start` then says where that page was
    first asked for when redirects led to it.
    """

    pageServed = Signal(str, object, str)

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
        self.page_ts: str | None = None  # the capture time of the page shown (or last shown)
        self.page_capture: int | None = None  # its snapshot (None: a message is shown)
        self._shown: dict[str, str] = {}  # archive address -> time of the capture shown there
        self._redirected: dict[str, str] = {}  # a page redirect's target -> its time
        self._redirect_starts: dict[str, RedirectStart] = {}  # target -> the chain's start
        self.redirect_start: RedirectStart | None = None  # of the top-level page answered
        self._shown_starts: dict[str, RedirectStart] = {}  # of the pages in _shown
        self._pages_asked = 0  # top-level page requests so far (the last one is on screen)
        self.cookies = CookieJar()  # document.cookie of every page of this view
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="replay")
        self._done: queue.SimpleQueue[_Pending] = queue.SimpleQueue()
        # The pool threads never touch a Qt object: the handler dies with its view, and a
        # thread emitting a signal of a QObject that the GUI thread is deleting crashes
        # the process now and then. While requests are out, the GUI thread polls instead.
        self._in_flight = 0
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._finish)

    def requestStarted(self, job: QWebEngineUrlRequestJob) -> None:
        qurl = job.requestUrl()
        if qurl.host() == ACTION_HOST:
            if qurl.path() == "/worker":  # the page script's note (a worker's requests,
                # its script's included, never reach the interceptor)
                worker = QUrlQuery(qurl).queryItemValue(
                    "url", QUrl.ComponentFormattingOption.FullyDecoded
                )
                self.interceptor.remember_worker(QUrl(worker))
            elif qurl.path() == "/cookie":  # the page script's document.cookie
                self._answer_cookie(job, QUrlQuery(qurl))
                return
            job.fail(QWebEngineUrlRequestJob.Error.RequestDenied)  # handled by the page
            return
        key = qurl.toString(QUrl.ComponentFormattingOption.FullyEncoded)
        headers = {
            bytes(k.data()).decode().lower(): bytes(v.data()).decode()
            for k, v in job.requestHeaders().items()
        }
        navigation = self.interceptor.take_main_frame(key)
        main = navigation is not None
        frame = main or key in self.interceptor.sub_frames
        url = to_original_url(qurl)
        pending = _Pending(job, url, key, main, frame, key in self.interceptor.workers)
        if main:
            self._pages_asked += 1
            pending.serial = self._pages_asked
        if self.interceptor.take_script_read(key) and job.initiator().isValid():
            reader = _origin(to_original_url(job.initiator()))
            if reader != _origin(pending.url):
                pending.reader = reader
        if navigation is None:  # a part of the page shown: from its capture first
            at, capture = self.page_ts or self.at, self.page_capture
        else:
            at, capture = self._page_time(key, navigation), None
        self._pool.submit(self._work, pending, at, capture, headers.get("range"))
        self._in_flight += 1
        if not self._poll.isActive():
            self._poll.start()

    def _page_time(self, key: str, navigation: Navigation) -> datetime | str | None:
        """The time the top-level page ``key`` is wanted at (see the class docstring)."""
        if key in self._redirected:
            return self._redirected.pop(key)
        if navigation == Navigation.NavigationTypeTyped:
            return self.at
        again = (Navigation.NavigationTypeBackForward, Navigation.NavigationTypeReload)
        if navigation in again and key in self._shown:
            if key in self._shown_starts:  # shown after a redirect: the same start again
                self._redirect_starts = {key: self._shown_starts[key]}
            return self._shown[key]
        return self.page_ts or self.at

    def _page_shown(self, pending: _Pending, response: ReplayResponse | None) -> None:
        """Remember the top-level page answered: what it asks for comes from its capture,
        and where it leads, nearest to it."""
        start = self._redirect_starts.pop(pending.key, None)
        if response is not None and response.location:
            target = to_archive_url(response.location)
            _remember_time(self._redirected, target, response.ts)
            key = target.toString(QUrl.ComponentFormattingOption.FullyEncoded)
            self._redirect_starts = {key: start or RedirectStart(pending.url, response)}
            return
        self.redirect_start = start
        self._redirect_starts.clear()  # a redirect not followed (another page came first)
        self.page_capture = response.snapshot_id if response is not None else None
        if response is not None:
            self.page_ts = response.ts
            _remember_time(self._shown, QUrl(pending.key), response.ts)
            self._shown_starts.pop(pending.key, None)
            if start is not None:
                if len(self._shown_starts) > 1000:
                    self._shown_starts.clear()
                self._shown_starts[pending.key] = start

    def _answer_cookie(self, job: QWebEngineUrlRequestJob, query: QUrlQuery) -> None:
        """``document.cookie`` of the page named in ``query``, after setting its ``set``
        value: only for a request from that page's own origin (the engine names it), so
        no archived site reads another's cookies."""
        decoded = QUrl.ComponentFormattingOption.FullyDecoded
        page = to_original_url(QUrl(query.queryItemValue("url", decoded)))
        asker = job.initiator()
        if not asker.isValid() or _origin(to_original_url(asker)) != _origin(page):
            job.fail(QWebEngineUrlRequestJob.Error.RequestDenied)
            return
        if query.hasQueryItem("set"):
            self.cookies.set_from_script(page, query.queryItemValue("set", decoded))
        allow = [("Access-Control-Allow-Origin", asker.toString())]
        _send(job, "text/plain; charset=utf-8", self.cookies.for_script(page).encode(), allow)

    def _work(
        self,
        pending: _Pending,
        at: datetime | str | None,
        capture: int | None,
        range_: str | None,
    ) -> None:
        """On a pool thread: resolve and read, for the GUI thread's next poll."""
        try:
            pending.response = self.replayer.serve(
                pending.url, at, range_header=range_, capture=capture
            )
            if pending.main and pending.response.location:
                self.replayer.redirect_chain(pending.url, at)
            elif not pending.response.location:  # here: a large page's is seconds of work
                pending.body = _archive_addresses(pending.response, pending.worker)
        except ReplayError as exc:
            pending.error = exc
        except Exception as exc:  # never leave a request unanswered
            pending.error = ReplayError(f"replay failed: {exc}", url=pending.url)
        self._done.put(pending)

    def _finish(self) -> None:
        while True:
            try:
                pending = self._done.get_nowait()
            except queue.Empty:
                return
            self._in_flight -= 1
            if self._in_flight <= 0:
                self._poll.stop()
            # RuntimeError: the job was deleted meanwhile (request cancelled, page closed).
            with contextlib.suppress(RuntimeError):
                self._answer(pending)

    def _answer(self, pending: _Pending) -> None:
        job, url, main = pending.job, pending.url, pending.main
        exc, response = pending.error, pending.response
        if main and pending.serial != self._pages_asked:
            # A newer page was asked for meanwhile, which cancelled this one's navigation:
            # what it found is not what the tab shows.
            job.fail(QWebEngineUrlRequestJob.Error.RequestAborted)
            return
        if main:
            self._page_shown(pending, response if exc is None else None)
        if isinstance(exc, NotArchived):
            self.log.add(url, NOT_ARCHIVED)
            if main:
                self._reply_message(job, messages.not_archived(url, action_url("capture", url)))
                self.pageServed.emit(url, None, "not-archived")
            else:
                self._reply_missing(job)
            return
        if exc is not None:
            self.log.add(url, FAILED, f"{exc.kind}: {exc}")
            if main:
                self._reply_message(job, _message_for(exc, url))
                self.pageServed.emit(url, None, exc.kind)
            else:
                self._reply_missing(job)
            return
        assert response is not None
        if pending.reader is not None and _cors_refused(response, pending.reader):
            self.log.add(url, BLOCKED, f"not readable by {pending.reader} (no archived CORS grant)")
            # An empty answer, not a failed job: QtWebEngine can leave a script's fetch()
            # of a failed job unsettled.
            self._reply_message(job, b"")
            return
        self.cookies.set_from_response(url, response)
        if response.location:
            self.log.add(url, REDIRECT, response.location)
            job.redirect(to_archive_url(response.location))
            return
        if pending.frame and not shown_in_tab(response.content_type):
            # The engine would start a download, which replay refuses: say what it is.
            self.log.add(url, SERVED, f"{response.status} {response.ts}, shown as a file")
            self._reply_message(job, _file_page(url, response, main))
        else:
            self.log.add(url, SERVED, f"{response.status} {response.ts}")
            body = pending.body
            self._reply(
                job,
                response,
                _archive_addresses(response, pending.worker) if body is None else body,
            )
        if main:
            self.pageServed.emit(url, response, "")

    def _reply(self, job: QWebEngineUrlRequestJob, response: ReplayResponse, body: bytes) -> None:
        headers = [(k, v) for k, v in response.headers if k.lower() not in _NOT_FORWARDED]
        refresh = original_header(response.headers, "Refresh")
        if refresh is not None:  # followed like any navigation: the interceptor redirects it
            headers.append(("Refresh", refresh))
        _send(job, response.content_type, body, headers)

    def _reply_message(self, job: QWebEngineUrlRequestJob, html: bytes) -> None:
        _send(job, "text/html; charset=utf-8", html)

    def _reply_missing(self, job: QWebEngineUrlRequestJob) -> None:
        """An empty answer for a subresource the archive cannot give, which the page goes
        on without, as it did after a 404: a failed job makes QtWebEngine give up the
        whole page (or stop its renderer), and a job's answer can carry no status. An
        image does not decode, a script or style sheet is empty, fetch() reads nothing."""
        _send(job, "text/plain; charset=utf-8", b"")


def _send(
    job: QWebEngineUrlRequestJob,
    content_type: str,
    body: bytes,
    headers: Sequence[tuple[str, str]] = (),
) -> None:
    """Answer ``job``. Every answer says ``no-store`` (the archive address of a resource
    names no capture: the engine must not show one capture's style sheet with another's
    page) and ``Referrer-Policy: no-referrer``."""
    extra: dict[QByteArray, list[QByteArray]] = {}
    sent = [*headers, ("Cache-Control", "no-store"), ("Referrer-Policy", "no-referrer")]
    for name, value in sent:
        key = QByteArray(name.encode("latin-1", "replace"))
        # A list per name: PySide reads a bare QByteArray value as a sequence of bytes.
        extra.setdefault(key, []).append(QByteArray(value.encode("latin-1", "replace")))
    job.setAdditionalResponseHeaders(extra)  # type: ignore[arg-type]
    buffer = QBuffer(job)
    buffer.setData(QByteArray(body))
    buffer.open(QBuffer.OpenModeFlag.ReadOnly)
    job.reply(content_type.encode("latin-1", "replace"), buffer)


def _archive_addresses(response: ReplayResponse, worker: bool) -> bytes:
    """The body with the full addresses that need it pointed at the archive schemes, as
    :mod:`archiver_app.gui.replay.page_script` explains: those of resources in HTML and
    CSS, of modules imported in scripts; a worker's script gets the page script first."""
    body, mime = response.body, response.content_type.lower()
    if response.status == 206:
        return body
    if mime.startswith(_MARKUP_TYPES):
        body = prefix_schemes(body, b"archive-")
        if mime.startswith(_HTML_TYPES):
            body = defuse_integrity(prefix_module_imports(body, b"archive-", html=True))
    elif "javascript" in mime or "ecmascript" in mime or worker:
        body = prefix_module_imports(body, b"archive-")
    return for_worker(body) if worker else body


def _remember_time(times: dict[str, str], url: QUrl, ts: str) -> None:
    if len(times) > 1000:
        times.clear()
    times[url.toString(QUrl.ComponentFormattingOption.FullyEncoded)] = ts


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


def _file_page(url: str, response: ReplayResponse, main: bool) -> bytes:
    mime = response.content_type.split(";", 1)[0].strip().lower()
    what = "a PDF document" if mime in PDF_TYPES else f"a file of type {mime}"
    links = {
        "Save a Copy…": action_url("save", url),
        "Open in My Browser": action_url("own-browser", url),
    }
    return messages.a_file(url, what, human_bytes(len(response.body)), links if main else {})


def _message_for(exc: ReplayError, url: str) -> bytes:
    if isinstance(exc, RecordUnavailable):
        return messages.missing_file(url, exc.path, exc.drives)
    if isinstance(exc, RedirectLoop):
        return messages.redirect_loop(url, exc.chain)
    return messages.damaged(url, str(exc))
