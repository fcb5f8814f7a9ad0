"""``import_paths``: recognise each input by its content and import it.

Folders are walked for WARC/ARC/WACZ files. Every input yields a
:class:`~archiver_app.importers.outcome.FileOutcome`; one bad file never stops the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

from archiver_app.errors import ArchiverError
from archiver_app.importers.bookmarks import BookmarksError, looks_like_bookmarks, parse_bookmarks
from archiver_app.importers.history import SQLITE_MAGIC, HistoryError, read_history
from archiver_app.importers.incomplete import sweep_interrupted_imports
from archiver_app.importers.outcome import FileOutcome, ImportReport, OutcomeState
from archiver_app.importers.queue import Queued, queue_capture_jobs
from archiver_app.importers.repeats import altered, earlier_copies, repeats_lines
from archiver_app.importers.urllists import looks_like_url_list, parse_url_list
from archiver_app.importers.wacz import import_wacz_file
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import DEFAULT_COLLECTION, Library
from archiver_app.tasks import Cancelled, CancelToken, ProgressUpdate
from archiver_app.warc import workers

WARC_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
ARCHIVE_SUFFIXES = (*WARC_SUFFIXES, ".wacz")
STDIN = Path("-")
#: What an imported WACZ's line says when --link was asked for: it does not apply.
WACZ_COPIED = (
    "copied: --link applies to WARC/ARC files, a WACZ's WARCs are extracted into the library"
)
_log = logging.getLogger(__name__)


def _archive_files(folder: Path) -> list[Path]:
    return sorted(
        p for p in folder.rglob("*") if p.is_file() and p.name.lower().endswith(ARCHIVE_SUFFIXES)
    )


def detect_kind(path: Path) -> str:
    """``warc``, ``wacz``, ``bookmarks``, ``urls``, ``history`` or ``unknown``."""
    name = path.name.lower()
    with path.open("rb") as fh:
        head = fh.read(4096)
    if name.endswith(".wacz") or head.startswith(b"PK\x03\x04"):
        return "wacz"
    if name.endswith(WARC_SUFFIXES) or head.startswith((b"\x1f\x8b", b"WARC/")):
        return "warc"
    if head.startswith(SQLITE_MAGIC):
        return "history"
    if looks_like_bookmarks(head):
        return "bookmarks"
    if looks_like_url_list(head) or name.endswith((".txt", ".urls", ".list")):
        return "urls"
    return "unknown"


def import_paths(
    lib: Library,
    paths: Sequence[Path],
    *,
    collection: str | None = None,
    link: bool = False,
    tags: Iterable[str] = (),
    stdin: TextIO | None = None,
    progress: Callable[[ProgressUpdate], None] | None = None,
    cancel: CancelToken | None = None,
    on_outcome: Callable[[FileOutcome], None] | None = None,
) -> ImportReport:
    """Import every path (files, folders, ``-`` for a URL list on ``stdin``) into
    ``collection``; None: the default one, or the collections an Archiver export's pages
    list names (:mod:`archiver_app.importers.labels`)."""
    report = ImportReport()
    tag_tuple = tuple(tags)
    sweep_interrupted_imports(lib)  # what a killed import left behind goes first

    def done(outcome: FileOutcome) -> None:
        if outcome.state is OutcomeState.IMPORTED and outcome.snapshot_ids:
            found = earlier_copies(lib, outcome.snapshot_ids)
            outcome.problems += repeats_lines(found, altered(lib, found) if found else set())
        report.outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)

    try:
        for given in paths:
            if cancel is not None:
                cancel.raise_if_cancelled()
            if given == STDIN:
                text = stdin.read() if stdin is not None else ""
                done(_queue_urls(lib, STDIN, text, collection or DEFAULT_COLLECTION, tag_tuple))
                continue
            path = given.expanduser()
            if not path.exists():
                done(FileOutcome(path, "unknown", OutcomeState.FAILED, "no such file or folder"))
                continue
            files = _archive_files(path) if path.is_dir() else [path]
            if path.is_dir() and not files:
                done(
                    FileOutcome(
                        path, "folder", OutcomeState.FAILED, "no WARC, ARC or WACZ files in it"
                    )
                )
            for i, file in enumerate(files):
                if cancel is not None:
                    cancel.raise_if_cancelled()
                done(
                    _import_file_safely(
                        lib,
                        file,
                        collection=collection,
                        link=link,
                        tags=tag_tuple,
                        progress=progress,
                        cancel=cancel,
                        then=_next_warc(files, i),
                    )
                )
    finally:
        workers.drop_read_ahead()  # read ahead but not imported (cancelled, failed)
    return report


def _next_warc(files: list[Path], i: int) -> Path | None:
    """The file after ``files[i]`` if it looks like a WARC/ARC file (one to read ahead)."""
    if i + 1 < len(files) and files[i + 1].name.lower().endswith(WARC_SUFFIXES):
        return files[i + 1]
    return None


def _import_file_safely(lib: Library, path: Path, **kwargs: Any) -> FileOutcome:
    """One file's import; an I/O error (unreadable file, full disk) or any other error
    fails that file only (the traceback goes to the log). Cancelling stops them all."""
    try:
        return _import_file(lib, path, **kwargs)
    except Cancelled:
        raise
    except ArchiverError as exc:
        return FileOutcome(path, "unknown", OutcomeState.FAILED, exc.message)
    except OSError as exc:
        return FileOutcome(
            path, "unknown", OutcomeState.FAILED, f"{exc.strerror or exc}: {exc.filename or path}"
        )
    except Exception as exc:
        _log.exception("importing %s failed", path)
        return FileOutcome(
            path, "unknown", OutcomeState.FAILED, f"unexpected error: {type(exc).__name__}: {exc}"
        )


def _import_file(
    lib: Library,
    path: Path,
    *,
    collection: str | None,
    link: bool,
    tags: tuple[str, ...],
    progress: Callable[[ProgressUpdate], None] | None,
    cancel: CancelToken | None,
    then: Path | None = None,
) -> FileOutcome:
    try:
        if path.stat().st_size == 0:
            return FileOutcome(path, "unknown", OutcomeState.FAILED, "the file is empty (0 bytes)")
        kind = detect_kind(path)
    except OSError as exc:
        return FileOutcome(path, "unknown", OutcomeState.FAILED, f"cannot read it: {exc.strerror}")
    if kind == "warc":
        return import_warc_file(
            lib,
            path,
            collection=collection,
            link=link,
            tags=tags,
            progress=progress,
            cancel=cancel,
            then=then,
        )
    if kind == "wacz":
        outcome = import_wacz_file(
            lib, path, collection=collection, tags=tags, progress=progress, cancel=cancel
        )
        if link and outcome.state is OutcomeState.IMPORTED:
            outcome.reason = "; ".join(filter(None, [WACZ_COPIED, outcome.reason]))
        return outcome
    collection = collection or DEFAULT_COLLECTION  # only an archive's pages list names others
    if kind == "bookmarks":
        try:
            marks = parse_bookmarks(path.read_bytes())
        except BookmarksError as exc:
            return FileOutcome(path, kind, OutcomeState.FAILED, str(exc))
        web = [b for b in marks if b.url.lower().startswith(("http://", "https://"))]
        skipped = len(marks) - len(web)
        queued = queue_capture_jobs(
            lib,
            [(b.url, [*b.tags, *tags]) for b in web],
            collection=collection,
            name=f"bookmarks: {path.name}",
        )
        if skipped:
            queued.problems.insert(0, f"{skipped} non-http(s) bookmark(s) skipped")
        return _queued(path, kind, queued, "no http(s) bookmarks in it")
    if kind == "history":
        try:
            urls = read_history(path)
        except HistoryError as exc:
            return FileOutcome(path, kind, OutcomeState.FAILED, str(exc))
        queued = queue_capture_jobs(
            lib, [(u, tags) for u in urls], collection=collection, name=f"history: {path.name}"
        )
        return _queued(path, kind, queued, "no http(s) URLs in the history")
    if kind == "urls":
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            return FileOutcome(
                path,
                kind,
                OutcomeState.FAILED,
                f"unknown encoding: the URL list is not UTF-8 ({exc.reason})",
            )
        return _queue_urls(lib, path, text, collection, tags)
    return FileOutcome(
        path,
        "unknown",
        OutcomeState.FAILED,
        "not a WARC, ARC, WACZ, bookmarks file, URL list or browser history",
    )


def _queued(path: Path, kind: str, queued: Queued, empty: str) -> FileOutcome:
    if not queued.job_ids:
        reason = queued.problems[-1] if queued.problems else empty
        return FileOutcome(path, kind, OutcomeState.FAILED, reason, problems=queued.problems)
    return FileOutcome(
        path,
        kind,
        OutcomeState.QUEUED,
        urls=queued.urls,
        job_id=queued.job_ids[0],
        job_ids=queued.job_ids,
        problems=queued.problems,
    )


def _queue_urls(
    lib: Library, path: Path, text: str, collection: str, tags: tuple[str, ...]
) -> FileOutcome:
    parsed = parse_url_list(text)
    name = "standard input" if path == STDIN else path.name
    queued = queue_capture_jobs(
        lib, [(u, tags) for u in parsed.urls], collection=collection, name=f"urls: {name}"
    )
    queued.problems[:0] = parsed.problems
    return _queued(path, "urls", queued, "no URLs in it")
