"""The runners of the long operations that are not crawls, and the registry holding them.

Each runner reads its arguments from the job's ``config`` (plain JSON, written by the
``*_config`` helper beside it, which the CLI and the GUI both call) and calls the core's
public entry point with the runtime's progress and cancel token. The core modules are
imported when a job runs, not when this module is: opening the registry stays cheap.

Resumable kinds skip the work already done when run again: an import skips files already
in the library, a mirror copies only what still lacks copies, a verify or an offload
re-checks from the database, a migration walks the snapshots still at older layouts, a
moved library's old files are removed from its new place. An export writes a new file
from scratch, so an interrupted export is reported, not resumed.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archiver_app.jobs.kinds import JobKind, KindSpec, Registry, RunningJob, Supersedes
from archiver_app.library import Library
from archiver_app.tasks import CancelToken, Progress

if TYPE_CHECKING:
    from archiver_app.editions.release import ReleaseResult
    from archiver_app.export.writer import ExportResult
    from archiver_app.importers.outcome import ImportReport
    from archiver_app.integrity import IntegrityReport
    from archiver_app.layout.migrator import MigrationReport
    from archiver_app.library_move import MoveResult
    from archiver_app.mirror.offload import OffloadResult
    from archiver_app.mirror.run import MirrorResult
    from archiver_app.mirror.scrub import ScrubResult


def _paths(values: Any) -> list[Path] | None:
    return None if values is None else [Path(v) for v in values]


# --------------------------------------------------------------------------- import


def import_config(
    paths: Sequence[Path],
    *,
    collection: str | None = None,
    link: bool = False,
    tags: Sequence[str] = (),
    stdin_text: str | None = None,
) -> dict[str, Any]:
    """``stdin_text``: what ``-`` reads, taken in by the caller so the job stands alone.
    Paths are kept absolute: a job resumed elsewhere (the app) finds the same files.
    ``collection`` None: the default one, or for an Archiver export, the collections its
    pages list names (:mod:`archiver_app.importers.labels`)."""
    return {
        "paths": [str(p if str(p) == "-" else Path(p).absolute()) for p in paths],
        "collection": collection,
        "link": link,
        "tags": list(tags),
        "stdin_text": stdin_text,
    }


def run_import(
    lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken
) -> ImportReport:
    from archiver_app.importers.run import import_paths

    c = job.config
    text = c.get("stdin_text")
    return import_paths(
        lib,
        [Path(p) for p in c["paths"]],
        collection=c.get("collection"),
        link=bool(c.get("link")),
        tags=c.get("tags", ()),
        stdin=io.StringIO(text) if text is not None else None,
        progress=progress,
        cancel=cancel,
        on_outcome=job.emit,
    )


def import_supersedes(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """An import of the same files (or more) into the same collection does an interrupted
    one's work: the files it had not imported, and those it left half-imported, undone."""
    same_stdin = "-" not in old.get("paths", ()) or old.get("stdin_text") == new.get("stdin_text")
    return (
        set(old.get("paths", ())) <= set(new.get("paths", ()))
        and old.get("collection", "default") == new.get("collection", "default")
        and same_stdin
    )


def same_config(*ignored: str) -> Supersedes:
    """A later job with the same arguments (but ``ignored``) does an interrupted one's work:
    a mirror copies what still lacks copies, a verify or an offload checks from the database."""

    def supersedes(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        keys = (set(old) | set(new)) - set(ignored)
        return all(old.get(k) == new.get(k) for k in keys)

    return supersedes


# --------------------------------------------------------------------------- export


def export_config(
    output: Path,
    *,
    fmt: str = "wacz",
    collection: str | None = None,
    tag: str | None = None,
    query: str | None = None,
    snapshot_ids: tuple[int, ...] | None = None,
    title: str | None = None,
    overwrite: bool = False,
    sign: bool = False,
    timestamp: str | None = None,
    keep_private_headers: bool = False,
    bibliography: bool = False,
    skip_altered: bool = False,
) -> dict[str, Any]:
    return {
        "bibliography": bibliography,
        "skip_altered": skip_altered,
        "timestamp": timestamp,
        "keep_private_headers": keep_private_headers,
        "output": str(Path(output).absolute()),  # the same place whichever process runs it
        "format": fmt,
        "collection": collection,
        "tag": tag,
        "query": query,
        **(
            {"snapshot_ids": list(snapshot_ids), "title": title} if snapshot_ids is not None else {}
        ),
        "overwrite": overwrite,
        "sign": sign,
    }


def check_export(lib: Library, config: Mapping[str, Any]) -> None:
    """Raise ``InputError`` for an export of ``config`` (:func:`export_config`) its job would
    refuse at once: a front end asks before it queues one, so a mistyped place leaves no
    failed job behind. The destination (:func:`archiver_app.export.check_destination`: its
    folder must exist), and a bibliography already beside it without ``overwrite``."""
    from archiver_app.cite.formats import bibliography_paths
    from archiver_app.errors import InputError
    from archiver_app.export import check_destination

    out = Path(config["output"])
    overwrite = bool(config.get("overwrite"))
    check_destination(lib, out, config.get("format", "wacz"), overwrite=overwrite)
    bib = bibliography_paths(out.absolute()) if config.get("bibliography") else ()
    if not overwrite and (taken := [p for p in bib if p.exists()]):
        raise InputError(f"{taken[0]} exists already; use --overwrite to replace it")


def run_export(
    lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken
) -> ExportResult | ReleaseResult:
    from archiver_app.cite.formats import bibliography, bibliography_paths
    from archiver_app.durable import atomic_write_text
    from archiver_app.export import Selection, export
    from archiver_app.export.pending import after_export
    from archiver_app.export.plan import selected_ids
    from archiver_app.export.signing import Signing
    from archiver_app.tasks.liveness import process_gone

    c = job.config
    swept = sweep_export_leftovers(c, process_gone)  # what killed exports left there
    if c.get("edition"):  # an edition's release: its members and reports (editions/)
        from archiver_app.editions.release import run_release

        return run_release(lib, job, progress, cancel)
    signing = Signing(timestamp=c.get("timestamp")) if c.get("sign") else None
    ids = c.get("snapshot_ids")
    selection = Selection(
        collection=c.get("collection"),
        tag=c.get("tag"),
        query=c.get("query"),
        snapshot_ids=tuple(int(i) for i in ids) if ids is not None else None,
        title=c.get("title"),
    )
    check_export(lib, c)
    bib = bibliography_paths(Path(c["output"]).absolute()) if c.get("bibliography") else ()
    result = export(
        lib,
        selection,
        Path(c["output"]),
        fmt=c.get("format", "wacz"),
        overwrite=bool(c.get("overwrite")),
        sign=signing or False,
        keep_private_headers=bool(c.get("keep_private_headers")),
        skip_altered=bool(c.get("skip_altered")),
        progress=progress,
        cancel=cancel,
    )
    result.leftovers_removed = tuple(swept)
    if signing is not None:
        after_export(lib, result, signing)  # a timestamp without network waits in a queue
    if bib:
        left = set(result.left_out.snapshot_ids) if result.left_out else set()
        texts = bibliography(lib, [i for i in selected_ids(lib, selection) if i not in left])
        try:
            for path, text in zip(bib, texts, strict=True):
                atomic_write_text(path, text)
            result.bibliography = bib
        except OSError as exc:  # the export itself is whole: say what is missing beside it
            result.problems.append(f"the bibliography could not be written: {exc}")
    return result


def clean_up_export(config: Mapping[str, Any], pid: int | None) -> None:
    """After a killed export (or release): its temporary files go, and a previous export
    that ``--overwrite`` had set aside, but not yet replaced, comes back under its name."""
    if pid is not None:  # None: it ran on another machine, where its files may be in use
        sweep_export_leftovers(config, lambda writer: writer == pid)


def sweep_export_leftovers(config: Mapping[str, Any], gone: Callable[[int], bool]) -> list[str]:
    """Remove what exports to ``config``'s output left whose writer is ``gone(pid)``: their
    temporary files (the output, its WARC spool, bibliography, a release's reports), after
    putting back under its name a previous export an ``--overwrite`` had set aside (one
    kept while the output exists). Returns the names removed. Every export sweeps its own
    destination's before it writes (one killed in a terminal leaves gigabytes there)."""
    from archiver_app.cite.formats import bibliography_paths
    from archiver_app.durable import discard, rename_folder, writer_pid
    from archiver_app.editions.release import release_paths
    from archiver_app.export.writer import WARC_NAME

    out = Path(config["output"]).absolute()
    try:
        names = sorted(os.listdir(out.parent))
    except (FileNotFoundError, NotADirectoryError):
        return []

    def leftovers(label: str) -> list[Path]:
        pids = ((n, writer_pid(n, label)) for n in names)
        return [out.parent / n for n, pid in pids if pid is not None and gone(pid)]

    set_aside = leftovers(f"{out.name}.old")
    if set_aside and not os.path.lexists(out):
        rename_folder(set_aside.pop(), out)
    labels = [out.name, f"{WARC_NAME}-spool", *(p.name for p in bibliography_paths(out))]
    if config.get("edition"):
        labels += [p.name for p in release_paths(out)]
    removed = [path for label in labels for path in leftovers(label)]
    for path in removed:
        discard(path)
    return [path.name for path in removed]


# --------------------------------------------------------------------------- drives


def mirror_config(
    *, dry_run: bool = False, scan_roots: Sequence[Path] | None = None, lock_wait: float = 0.0
) -> dict[str, Any]:
    return {
        "dry_run": dry_run,
        "scan_roots": None if scan_roots is None else [str(p) for p in scan_roots],
        "lock_wait": lock_wait,
    }


def run_mirror_job(
    lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken
) -> MirrorResult:
    from archiver_app.mirror import run_mirror

    c = job.config
    return run_mirror(
        lib,
        dry_run=bool(c.get("dry_run")),
        scan_roots=_paths(c.get("scan_roots")),
        progress=progress,
        cancel=cancel,
        lock_wait=float(c.get("lock_wait", 0.0)),
        on_plan=job.emit,
    )


def verify_config(
    label: str | None = None,
    *,
    laptop: bool = False,
    everything: bool = False,
    scheduled: bool = False,
    repair: bool = True,
    scan_roots: Sequence[Path] | None = None,
) -> dict[str, Any]:
    """``label``: one drive (None: every mounted one); ``laptop``: this computer's copies;
    ``everything``: this computer's, then every mounted drive's (the drives panel);
    ``scheduled``: only the copy sets whose re-verify interval has passed (the app, idle)."""
    return {
        "label": label,
        "laptop": laptop,
        "everything": everything,
        "scheduled": scheduled,
        "repair": repair,
        "scan_roots": None if scan_roots is None else [str(p) for p in scan_roots],
    }


def run_verify(
    lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken
) -> list[ScrubResult] | IntegrityReport:
    from archiver_app.mirror import (
        scheduled_scrub,
        verify_all,
        verify_destinations,
        verify_library,
    )

    c = job.config
    roots = _paths(c.get("scan_roots"))
    repair = bool(c.get("repair", True))
    if c.get("integrity"):  # `archiver verify`: files against their capture-time digests
        from archiver_app.integrity import verify_snapshots
        from archiver_app.integrity.report import write_job_report

        report = verify_snapshots(
            lib, repair=repair, scan_roots=roots, progress=progress, cancel=cancel
        )
        # every verdict, in a file; the job's row keeps the counts
        report.report = write_job_report(lib, job.id, report.verdicts)
        return report
    if c.get("scheduled"):
        results = scheduled_scrub(lib, scan_roots=roots, progress=progress, cancel=cancel)
    elif c.get("everything"):
        results = verify_all(lib, scan_roots=roots, progress=progress, cancel=cancel)
    elif c.get("laptop"):
        results = [
            verify_library(lib, repair=repair, scan_roots=roots, progress=progress, cancel=cancel)
        ]
    else:
        results = verify_destinations(
            lib, c.get("label"), repair=repair, scan_roots=roots, progress=progress, cancel=cancel
        )
    return _with_report(lib, job.id, results)


def _with_report(lib: Library, job_id: int, results: list[ScrubResult]) -> list[ScrubResult]:
    """Every damaged copy the scrubs found, in the job's report; each result names it."""
    from archiver_app.integrity.report import scrub_verdicts, write_job_report

    verdicts = scrub_verdicts(lib, results)
    if not verdicts:
        return results
    rel = write_job_report(lib, job_id, verdicts)
    for r in results:
        r.report = rel
    return results


def offload_config(
    older_than: timedelta, *, dry_run: bool = False, scan_roots: Sequence[Path] | None = None
) -> dict[str, Any]:
    return {
        "older_than_seconds": older_than.total_seconds(),
        "dry_run": dry_run,
        "scan_roots": None if scan_roots is None else [str(p) for p in scan_roots],
    }


def run_offload(
    lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken
) -> OffloadResult:
    from archiver_app.mirror.offload import offload

    c = job.config
    return offload(
        lib,
        timedelta(seconds=float(c["older_than_seconds"])),
        dry_run=bool(c.get("dry_run")),
        scan_roots=_paths(c.get("scan_roots")),
        progress=progress,
        cancel=cancel,
    )


# --------------------------------------------------------------------------- migrate


def migrate_config(
    *, batch_size: int = 200, resume_from: str | None = None, continuous: bool = False
) -> dict[str, Any]:
    return {"batch_size": batch_size, "resume_from": resume_from, "continuous": continuous}


def run_migrate(
    lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken
) -> MigrationReport:
    from archiver_app.layout.migrator import run_migrator

    c = job.config
    return run_migrator(
        lib,
        batch_size=int(c.get("batch_size", 200)),
        # a resumed run starts from the database's own state, not the first run's cursor
        resume_from=None if job.resumed else c.get("resume_from"),
        continuous=bool(c.get("continuous")),
        progress=progress,
        cancel=cancel,
    )


# --------------------------------------------------------------------------- move


def run_finish_move(
    lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken
) -> MoveResult:
    """A move is started by :func:`archiver_app.library_move.move_library` (the library
    closed everywhere else); the queue only finishes one, at the library's new place."""
    from archiver_app.library_move import finish_move

    return finish_move(lib, job, progress, cancel)


# --------------------------------------------------------------------------- browse


def browse_config(
    *, start_url: str | None = None, collection: str = "default", profile: str | None = None
) -> dict[str, Any]:
    return {"start_url": start_url, "collection": collection, "profile": profile}


def run_browse(lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken) -> Any:
    """Capture while browsing until the user stops or closes the browser. ``job.emit``
    gets the live session once the browser is up, then each page as it is saved. The
    pages saved of watched addresses are compared as the session ends."""
    from archiver_app.capture.browse import BrowseOptions, browse
    from archiver_app.crawl.results import compare_watched_pages

    c = job.config
    options = BrowseOptions(
        start_url=c.get("start_url"),
        collection=c.get("collection", "default"),
        profile=c.get("profile"),
    )
    try:
        return browse(
            lib,
            options,
            job_id=job.id,
            progress=progress,
            cancel=cancel,
            on_page=job.emit,
            on_ready=job.emit,
        )
    finally:  # the pages saved of watched addresses, as a crawl's end compares them
        compare_watched_pages(lib, job.id)


def _run_reindex(lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken) -> Any:
    from archiver_app.search.reindex import run_reindex

    return run_reindex(lib, job, progress, cancel)


def default_registry() -> Registry:
    """Every kind this version of Archiver runs besides crawls and captures."""
    return Registry(
        [
            KindSpec(JobKind.IMPORT, run_import, resumable=True, supersedes=import_supersedes),
            KindSpec(JobKind.EXPORT, run_export, resumable=False, cleanup=clean_up_export),
            KindSpec(
                JobKind.MIRROR, run_mirror_job, resumable=True, supersedes=same_config("lock_wait")
            ),
            KindSpec(JobKind.VERIFY, run_verify, resumable=True, supersedes=same_config()),
            KindSpec(JobKind.OFFLOAD, run_offload, resumable=True, supersedes=same_config()),
            KindSpec(JobKind.MIGRATE, run_migrate, resumable=True, supersedes=same_config()),
            KindSpec(JobKind.MOVE, run_finish_move, resumable=True, supersedes=same_config()),
            # a session is the user's own browsing: after a kill it is reported, not replayed
            KindSpec(JobKind.BROWSE, run_browse, resumable=False),
            KindSpec(JobKind.REINDEX, _run_reindex, resumable=True, supersedes=same_config()),
        ]
    )
