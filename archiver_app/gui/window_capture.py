"""Capturing from the main window: the capture dialog, the address field, the clipboard.

Every capture the window starts is a job, made exactly as ``archiver capture`` and
``archiver crawl`` make it (queue, attempts, coverage), and run in a child process through
the window's op runner; its progress shows in the status bar.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QMessageBox

from archiver_app.api.jobs import CrawlOptions, JobStatus
from archiver_app.errors import InputError
from archiver_app.gui.capture_dialog import CaptureDialog
from archiver_app.gui.capture_input import CaptureRequest, build_request, parse_url_lines
from archiver_app.gui.errors import describe, show_error
from archiver_app.gui.message_bar import show_status_error
from archiver_app.gui.ops import CAPTURE_ON_QUIT, BackgroundOp, OpFailure
from archiver_app.library import Library
from archiver_app.tasks import ProgressUpdate
from archiver_app.units import counted
from archiver_app.watch.schedule import describe_schedule

if TYPE_CHECKING:
    from archiver_app.api.jobs import InlineRun
    from archiver_app.api.labels import CollectionView
    from archiver_app.gui.main_window import MainWindow


def run_capture_request(
    library: Library, request: CaptureRequest, *, progress: Any, cancel: Any
) -> Any:
    """The capture dialog's request as a capture or crawl job, run in a child process."""
    jobs = library.jobs
    library.ensure_collection(request.collection, request.collection_name or None)
    if request.crawl is None:
        job_id = jobs.capture(
            request.urls,
            collection=request.collection,
            tags=request.tags,
            profile=request.profile,
            login_check=request.login_check,
        )
    else:
        job_id = queue_crawl(library, request)
    return jobs.run(job_id, progress=progress, cancel=cancel)


def queue_crawl(library: Library, request: CaptureRequest) -> int:
    """The crawl of the dialog's request, queued."""
    assert request.crawl is not None
    o = request.crawl
    options = CrawlOptions(
        scope=o.scope,
        ignore_patterns=tuple(o.ignore_patterns),
        concurrency=o.concurrency,
        user_agent=o.user_agent or None,
        max_depth=o.depth,
        max_pages=o.page_limit,
        login_check=request.login_check,
    )
    return library.jobs.crawl(
        request.urls,
        options,
        collection=request.collection,
        tags=request.tags,
        name=f"Crawl of {request.urls[0]}",
        profile=request.profile,
    )


def start_watch(library: Library, request: CaptureRequest) -> int:
    """The dialog's request with a schedule as a watch, its first capture queued (a crawl
    is watched as a whole: each run crawls again). Returns the job id."""
    assert request.schedule is not None
    jobs = library.jobs
    library.ensure_collection(request.collection, request.collection_name or None)
    if request.crawl is None:
        return jobs.watch(
            request.urls,
            schedule=request.schedule,
            ignore=request.watch_ignore,
            collection=request.collection,
            tags=request.tags,
            profile=request.profile,
        )
    from archiver_app.compare import compile_ignore_patterns

    compile_ignore_patterns(request.watch_ignore)  # refused before the crawl is queued
    jobs.refuse_watched(request.urls, request.profile)  # so is an address watched already
    job_id = queue_crawl(library, request)
    jobs.set_schedule(job_id, request.schedule, ignore=request.watch_ignore)
    return job_id


class WindowCapture(QObject):
    """Starts captures for ``window``. Threading: GUI thread only."""

    finished = Signal()  # a capture finished; its run is in last_result

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.last_result: InlineRun | None = None

    def collections_and_shown(self) -> tuple[list[CollectionView], list[str]]:
        """The library's collections, and the slug of the one the sidebar shows (if any)."""
        found = self.window.library.collections.all()
        entry = self.window.sidebar.current_entry()
        shown = [
            c.slug for c in found if entry and entry.kind == "collection" and entry.value == c.id
        ]
        return found, shown

    def open_dialog(
        self,
        text: str = "",
        *,
        tab: int = 0,
        schedule: str | None = None,
        profile: str | None = None,
        collection: str | None = None,
    ) -> CaptureDialog:
        """The capture dialog on ``text`` (``schedule``: to watch, ``profile``: logged in,
        preset), saving into ``collection`` if given, else the collection the sidebar
        shows, if it shows one."""
        found, shown = self.collections_and_shown()
        profiles = self.window.library.profiles.names()
        dialog = CaptureDialog(
            [(c.slug, c.name) for c in found],
            self.window,
            initial_text=text,
            profiles=profiles,
            schedule=schedule,
            profile=profile,
            default_collection=collection or (shown[0] if shown else "default"),
        )
        dialog.tabs.setCurrentIndex(tab)
        dialog.accepted.connect(lambda: dialog.request and self.run(dialog.request))
        dialog.open()
        return dialog

    def linked_from_replay(self, url: str, linked_from: int) -> CaptureDialog:
        """The capture dialog on ``url``, a page a replay found not archived, in the browser
        profile and collection of the capture ``linked_from`` (0: none) whose page linked
        to it: a page behind a login is captured logged in, as Capture Again does."""
        snapshots = self.window.library.snapshots
        detail = snapshots.detail(linked_from) if linked_from else None
        if detail is None:
            return self.open_dialog(url)
        collection = snapshots.shared_collection([linked_from])
        return self.open_dialog(url, profile=detail.profile, collection=collection)

    def from_field(self) -> None:
        """Capture what the toolbar's address field holds."""
        field = self.window.url_field
        text = field.text().strip()
        if not text:
            return
        urls, rejected = parse_url_lines(text)
        shown = self.collections_and_shown()[1]  # into the collection listed, as Ctrl+N
        try:
            request = build_request(
                urls, collection=shown[0] if shown else "default", rejected=rejected
            )
        except InputError as exc:
            show_error(self.window, exc, "starting the capture")
            return
        field.clear()
        self.run(request)

    def paste(self) -> None:
        """Open the capture dialog on the web addresses of the clipboard."""
        clip = QApplication.clipboard().mimeData()
        if clip.hasUrls():
            text = "\n".join(u.toString() for u in clip.urls() if not u.isLocalFile())
        else:
            text = clip.text()
        if text.strip():
            self.open_dialog(text.strip())

    def watch(self, request: CaptureRequest) -> BackgroundOp[Any]:
        """Make ``request`` a watch (a job with its schedule), then have the watch scheduler
        capture it now: its first capture is compared with any earlier one of the page."""
        library = self.window.library

        def work(_progress: Any, _cancel: Any) -> int:
            return start_watch(library, request)

        def watching(_job_id: int) -> None:
            count = len(request.urls)
            what = request.urls[0] if count == 1 else f"{count} pages"
            self.window.statusBar().showMessage(
                f"Watching {what} ({describe_schedule(request.schedule or '')}); capturing now. "
                "Changes: View > Changes (Ctrl+Shift+H).",
                10_000,
            )
            self.window.watches.run_now()
            self.window.research.refresh_changes()

        return (
            BackgroundOp(self.window.runner, work, label="adding a watch")
            .success(watching)
            .failure(lambda failure: self._watch_refused(failure, request))
            .run_in_background()
        )

    def _watch_refused(self, failure: Any, request: CaptureRequest) -> QMessageBox:
        """Say why (the other addresses typed were not watched either), then, once that is
        dismissed, give the dialog back with what was typed (a page watched already is a
        matter of changing the addresses, not of typing them all again). The dialog
        reopened at once covered the message and, window-modal too, blocked its OK."""
        box = show_error(self.window, failure, "watching")
        others = len(request.urls) - 1
        if others and "not watched either" not in box.text():
            what = "address was" if others == 1 else f"{others} addresses were"
            box.setText(f"{box.text().rstrip('.')}. The other {what} not watched either.")
        if isinstance(getattr(failure, "exception", None), InputError):
            text = "\n".join(request.urls)
            box.finished.connect(
                lambda _answer: self.open_dialog(
                    text, schedule=request.schedule, profile=request.profile
                )
            )
        return box

    def run(self, request: CaptureRequest) -> BackgroundOp[Any]:
        """Queue ``request`` as a capture or crawl job and run it in a child process (a
        request with a schedule: :meth:`watch`)."""
        if request.schedule is not None:
            return self.watch(request)
        library, bar = self.window.library, self.window.statusBar()
        label = f"capturing {len(request.urls)} page{'s' if len(request.urls) != 1 else ''}"

        def work(progress: Any, cancel: Any) -> Any:
            return run_capture_request(library, request, progress=progress, cancel=cancel)

        def progress(update: ProgressUpdate) -> None:
            total = f" of {update.total}" if update.total else ""
            bar.showMessage(f"Capturing {update.done}{total} {update.message}")

        # said at once: a page that answers slowly gave no sign of the capture for seconds
        what = request.urls[0] if len(request.urls) == 1 else counted(len(request.urls), "page")
        bar.showMessage(f"Capturing {what}…")

        return (
            BackgroundOp(self.window.runner, work, label=label, on_quit=CAPTURE_ON_QUIT)
            .with_progress(progress)
            .success(self._done)
            .failure(self._failed)
            .run_in_background()
        )

    def _done(self, result: InlineRun) -> None:
        """``result``: the job's run (pages done and failed; the job log says why). A run
        paused or aborted from the Jobs panel ends before its pages do: said so."""
        pages = counted(result.pages_done, "page")
        stopped = result.status if result.status in (JobStatus.PAUSED, JobStatus.ABORTED) else ""
        if stopped:
            text = f"{stopped.capitalize()} job #{result.job_id} after capturing {pages}"
        else:
            text = f"Captured {pages} (job #{result.job_id})"
        errors = result.error_answers  # captured, but what the site sent was its error page
        if errors and result.pages_done == 1:
            text += f", but the site answered HTTP {errors[0]}: the capture is its error page"
        elif errors:
            codes = ", ".join(str(c) for c in sorted(set(errors)))
            text += f"; error answers from the site: {len(errors)} (HTTP {codes})"
        if result.pages_failed:
            text += f"; {result.pages_failed} failed: see Jobs for why"
        if stopped == "paused":
            text += "; Resume it in the Jobs panel"
        self.window.statusBar().showMessage(f"{text}.", 8000)
        self.window.tray.notify(f"Capture {stopped or 'finished'}", f"{text}.")
        self.window.refresh_all()
        self.last_result = result
        self.finished.emit()

    def _failed(self, failure: OpFailure) -> None:
        """Say why in a box, and in the status bar instead of "Capturing …", which stayed
        there, as if the refused capture still ran."""
        bar = self.window.statusBar()
        if failure.cancelled:
            bar.showMessage("Capture cancelled.", 5000)
            return
        show_status_error(self.window, describe(failure.exception, "capturing")[0])
        show_error(self.window, failure, "capturing")
