"""Import WARC/ARC files (copied into the library or linked in place) and WACZ files.

Each imported file gets its own snapshot folder under the current layout
(``collections/<slug>/<yyyy>/<mm>/<uid>/``, dated by its first record) holding the copied
WARC (or nothing but the sidecar, for ``--link``) and an ``index.json`` sidecar that
describes the import well enough to redo it from the folder alone. Files are registered in
``files`` so the mirror sees them; linked files carry ``external_path``.
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from sqlalchemy import select, update

from archiver_app.durable import atomic_write, discard, install, open_temp, sweep_leftovers, sync_fd
from archiver_app.filelock import held_or_busy
from archiver_app.hashing import sha256_file
from archiver_app.importers import incomplete
from archiver_app.importers.labels import first_id, listed_collection, restore_labels
from archiver_app.importers.outcome import FileOutcome, OutcomeState
from archiver_app.layout import CURRENT_FS_VERSION, snapshot_folder
from archiver_app.layout.sidecar import SIDECAR
from archiver_app.layout.sidecar import write_sidecar as write_sidecar_file
from archiver_app.library import DEFAULT_COLLECTION, Library
from archiver_app.store.files import register_file
from archiver_app.store.models import (
    Collection,
    File,
    FileKind,
    LocalState,
    Origin,
    Setting,
    Snapshot,
)
from archiver_app.tasks import CancelToken, ProgressUpdate
from archiver_app.warc import workers
from archiver_app.warc.indexer import IndexReport, IndexTarget, index_warc, record_time
from archiver_app.warc.listedtext import TextSpill
from archiver_app.warc.listing import ListedPage
from archiver_app.warc.regzip import RegzipReport, regzip_into
from archiver_app.warc.scan import (
    NotAnArchiveError,
    OneGzipStreamError,
    scan_records,
    sniff_archive,
)
from archiver_app.warc.wacz import WaczPage, page_list, read_pages

ProgressFn = Callable[[ProgressUpdate], None]
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_log = logging.getLogger(__name__)


def safe_file_name(name: str, default: str) -> str:
    cleaned = _SAFE_NAME.sub("_", name).strip("._")
    return cleaned[:150] if cleaned else default


def _first_time(path: Path) -> datetime | None:
    for rec in scan_records(path):
        if (at := record_time(rec)) is not None:
            return at
    return None


def new_folder(
    lib: Library, slug: str, at: datetime | None, uid: str | None = None
) -> PurePosixPath:
    """The import's folder, named ``uid`` (its first listed page's id) when no folder has
    that name, else a new one."""
    when = at or lib.clock()
    if uid is not None:
        folder = snapshot_folder(slug, when, uid)
        if not lib.abspath(folder.as_posix()).exists():
            return folder
    return snapshot_folder(slug, when, lib.new_uid(when))


def resolve_collection(lib: Library, slug: str) -> tuple[int, str]:
    cid = lib.ensure_collection(slug)
    with lib.session() as s:
        return cid, str(s.scalar(select(Collection.slug).where(Collection.id == cid)))


def _copy_into(src: Path, dest: Path) -> None:
    """Copy to a temporary sibling, fsync, rename: a crash never leaves a half file named
    like a whole one."""
    with src.open("rb") as fin:
        atomic_write(dest, lambda out: shutil.copyfileobj(fin, out, 1 << 20), make_parent=True)


def write_sidecar(
    lib: Library, folder: PurePosixPath, data: dict[str, Any], snapshot_id: int | None
) -> None:
    write_sidecar_file(lib.abspath(folder.as_posix()), data)
    with lib.write() as s:
        register_file(s, lib.root, f"{folder.as_posix()}/{SIDECAR}", FileKind.SIDECAR, snapshot_id)


def sidecar_data(
    lib: Library,
    folder: PurePosixPath,
    slug: str,
    source: Path,
    reports: list[tuple[str, str, IndexReport]],
) -> dict[str, Any]:
    """The import's ``index.json``: readable by ``layout.sidecar`` (the first page's url,
    time and title, as any snapshot folder has), plus what was imported from where."""
    ids = [i for _, _, r in reports for i in r.snapshot_ids]
    first: dict[str, Any] = {}
    if ids:
        with lib.session() as s:
            snap = s.get(Snapshot, ids[0])
            if snap is not None:
                first = {
                    "url": snap.url,
                    "captured_at": snap.captured_at.isoformat(),
                    "title": snap.title,
                }
    return {
        **first,
        "pages": len(ids),
        "kind": "import",
        "fs_version": CURRENT_FS_VERSION,
        "uid": folder.name,
        "collection": slug,
        "capture_fidelity": "imported",
        "source": str(source),
        "files": [
            {
                "name": name,
                "sha256": sha,
                "records": rep.records,
                "pages": rep.pages,
                "problems": [f"offset {p.offset}: {p.reason}" for p in rep.problems],
            }
            for name, sha, rep in reports
        ],
    }


def index_one(
    lib: Library,
    *,
    read_path: Path,
    rel: str,
    file_id: int,
    collection_id: int,
    folder: PurePosixPath,
    source: Path,
    page_urls: frozenset[str] | None,
    page_counts: tuple[tuple[str, int], ...] = (),
    page_details: tuple[ListedPage, ...] = (),
    page_texts: Path | None = None,
    tags: tuple[str, ...],
    progress: ProgressFn | None,
    cancel: CancelToken | None,
    first: bool = True,
    then: Path | None = None,
) -> IndexReport:
    target = IndexTarget(
        path=read_path,
        file_id=file_id,
        warc_file=rel,
        collection_id=collection_id,
        folder=folder.as_posix(),
        provenance={"imported_from": str(source)},
        page_urls=page_urls,
        page_counts=page_counts,
        page_details=page_details,
        page_texts=page_texts,
        tags=tags,
        first_uid=folder.name if first else None,
        same_as=source if read_path != source else None,
    )
    report = index_warc(lib, target, progress=progress, cancel=cancel, then=then)
    if report.snapshot_ids:
        with lib.write() as s:
            s.execute(
                update(File).where(File.id == file_id).values(snapshot_id=report.snapshot_ids[0])
            )
    return report


def import_warc_file(
    lib: Library,
    path: Path,
    *,
    collection: str | None = None,
    link: bool = False,
    tags: tuple[str, ...] = (),
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
    then: Path | None = None,
) -> FileOutcome:
    """Import one WARC/ARC file; never raises for bad input (the outcome says why).
    ``collection`` None: the default one, or the one a folder export's pages list names
    (:mod:`archiver_app.importers.labels`).

    ``then``: the file the caller imports next, if it knows: it is read ahead while this
    one is written (``index_warc``)."""
    with contextlib.ExitStack() as held:  # a recompressed copy's lock, while it exists
        return _import_warc(
            lib,
            path.absolute(),
            held,
            collection=collection,
            link=link,
            tags=tags,
            progress=progress,
            cancel=cancel,
            then=then,
        )


def _import_warc(
    lib: Library,
    path: Path,
    held: contextlib.ExitStack,
    *,
    collection: str | None,
    link: bool,
    tags: tuple[str, ...],
    progress: ProgressFn | None,
    cancel: CancelToken | None,
    then: Path | None,
) -> FileOutcome:
    regzipped: tuple[Path, RegzipReport] | None = None
    try:
        kind = sniff_archive(path)
    except OneGzipStreamError as exc:
        if exc.kind != "warc" or link:
            hint = "; without --link it is recompressed on import" if exc.kind == "warc" else ""
            return FileOutcome(path, exc.kind, OutcomeState.FAILED, f"{exc}{hint}")
        kind = exc.kind
        regzipped = _regzip(lib, path, held, cancel)
        if regzipped[1].records == 0:
            discard(regzipped[0])
            why = regzipped[1].problems[0] if regzipped[1].problems else "no records found"
            return FileOutcome(path, kind, OutcomeState.FAILED, why)
    except NotAnArchiveError as exc:
        return FileOutcome(path, "warc", OutcomeState.FAILED, str(exc))
    try:
        with contextlib.ExitStack() as locks:
            outcome = _import_warc_file(
                lib,
                path,
                kind,
                regzipped[0] if regzipped else None,
                locks,
                collection=collection,
                link=link,
                tags=tags,
                progress=progress,
                cancel=cancel,
                then=then,
            )
    finally:
        if regzipped is not None:
            discard(regzipped[0])  # moved into the library, or not wanted
    if regzipped is not None and outcome.state is OutcomeState.IMPORTED:
        note = "gzipped as one stream: stored recompressed record by record, records unchanged"
        outcome.reason = f"{note}; {outcome.reason}" if outcome.reason else note
        outcome.problems[:0] = regzipped[1].problems
    return outcome


#: Temporary files in the library's root (recompressions) a day old were left by a process
#: that died (a running recompression keeps its file's mtime fresh).
_STALE_SECONDS = 86_400


def _regzip(
    lib: Library, path: Path, held: contextlib.ExitStack, cancel: CancelToken | None
) -> tuple[Path, RegzipReport]:
    """``path`` rewritten with one gzip member per record into a durable temporary file
    inside the library (on its disk, so it can be renamed into place), labelled with a
    lock held in ``held``: the sweep removes it once no live process holds that lock."""
    sweep_leftovers(lib.root, older_than=_STALE_SECONDS)
    label = f"{incomplete.REGZIP_LABEL}{uuid.uuid4().hex}"
    held.enter_context(held_or_busy(incomplete.root_temp_lock(lib, label)))
    return regzip_to_temp(path, lib.root, cancel, label=label)


def regzip_to_temp(
    path: Path, folder: Path, cancel: CancelToken | None, *, label: str | None = None
) -> tuple[Path, RegzipReport]:
    """``path`` recompressed into a new durable temporary file in ``folder``."""
    label = label or f"regzip-{safe_file_name(path.name, 'import')}"
    temp, fd = open_temp(folder, label)
    try:
        with open(fd, "wb") as out:
            report = regzip_into(path, out, cancel=cancel)
            out.flush()
            sync_fd(out.fileno())
    except BaseException:
        discard(temp)
        raise
    return Path(temp), report


def _place_warc(
    lib: Library, path: Path, rel: str, sha: str, regzipped: Path | None, *, link: bool
) -> tuple[Path, int]:
    """Put the WARC at ``rel`` (copied, moved from ``regzipped``, or linked where it is) and
    register it, marked incomplete; return where to read it and its ``files`` id."""
    if link:
        read_path = path
        with lib.write() as s:
            row = File(
                path=rel,
                size=path.stat().st_size,
                sha256=sha,
                kind=FileKind.WARC,
                external_path=str(path),
                local_state=LocalState.PRESENT,
            )
            s.add(row)
            s.flush()
            file_id = row.id
            s.add(Setting(key=incomplete.incomplete_key(file_id), value=rel))
    else:
        read_path = lib.abspath(rel)
        if regzipped is not None:  # already a durable file on the library's disk
            read_path.parent.mkdir(parents=True, exist_ok=True)
            install(regzipped, read_path)
        else:
            _copy_into(path, read_path)
        try:
            with lib.write() as s:
                file_id = register_file(
                    s, lib.root, rel, FileKind.WARC, sha256=sha, origin=Origin.IMPORT
                ).id
                s.add(Setting(key=incomplete.incomplete_key(file_id), value=rel))
        except BaseException:
            read_path.unlink(missing_ok=True)
            incomplete.remove_empty(read_path.parent, lib.root)
            raise
    return read_path, file_id


def listed_texts(lib: Library, held: contextlib.ExitStack) -> TextSpill:
    """Where the texts of a pages list are set aside while it is read: a temporary file at
    the library root, made when the first text comes, labelled with a lock held in ``held``
    (the sweep removes the file of a process that died) and removed when ``held`` closes."""
    label = f"{incomplete.PAGE_TEXTS_LABEL}{uuid.uuid4().hex}"

    def opener() -> tuple[str, int]:
        held.enter_context(held_or_busy(incomplete.root_temp_lock(lib, label)))
        return open_temp(lib.root, label)

    spill = TextSpill(opener)
    held.callback(_drop_texts, spill)
    return spill


def _drop_texts(spill: TextSpill) -> None:
    spill.close()
    if spill.path is not None:
        discard(spill.path)


def export_pages(path: Path, texts: TextSpill | None = None) -> list[WaczPage]:
    """The pages list beside a WARC of a folder export (``<export>/archive/data.warc.gz``
    with ``<export>/pages.jsonl``) or of an unzipped WACZ (``pages/pages.jsonl``): the pages
    it names are pages whatever their status (a capture of a 404 is one); [] when there is
    none, and the records decide. Their texts go to ``texts`` when given."""
    if path.parent.name != "archive":
        return []
    for listed in (
        path.parent.parent / "pages.jsonl",
        path.parent.parent / "pages" / "pages.jsonl",
    ):
        if listed.is_file():
            with contextlib.suppress(OSError), listed.open("rb") as fh:
                return list(read_pages(fh, texts))
    return []


def _import_warc_file(
    lib: Library,
    path: Path,
    kind: str,
    regzipped: Path | None,
    locks: contextlib.ExitStack,
    *,
    collection: str | None,
    link: bool,
    tags: tuple[str, ...],
    progress: ProgressFn | None,
    cancel: CancelToken | None,
    then: Path | None,
) -> FileOutcome:
    """``import_warc_file`` once ``path`` is known to be an archive; ``regzipped`` is the
    file to store instead of ``path`` (its records, one gzip member each); the file's
    import lock goes into ``locks``."""
    source = regzipped or path
    workers.prestart()  # starts while the file is hashed and copied
    sha = sha256_file(source)
    if (why := incomplete.claim_sha(lib, sha, locks)) is not None:
        return FileOutcome(path, kind, OutcomeState.SKIPPED, why)
    texts = listed_texts(lib, locks)
    listed = export_pages(path, texts)
    texts.close()
    page_urls, page_counts, page_details = page_list(listed)
    into = collection or listed_collection(listed) or DEFAULT_COLLECTION
    collection_id, slug = resolve_collection(lib, into)
    folder = new_folder(lib, slug, _first_time(source), first_id(lib, listed))
    # Marked before its first byte: a kill before the file is recorded is swept too.
    locks.enter_context(
        incomplete.folder_in_progress(lib, folder, incomplete.import_lock(lib, sha))
    )
    name = safe_file_name(path.name, "import.warc.gz")
    rel = f"{folder.as_posix()}/{name}"
    read_path, file_id = _place_warc(lib, path, rel, sha, regzipped, link=link)
    try:
        report = index_one(
            lib,
            read_path=read_path,
            rel=rel,
            file_id=file_id,
            collection_id=collection_id,
            folder=folder,
            source=path,
            page_urls=page_urls,
            page_counts=page_counts,
            page_details=page_details,
            page_texts=texts.path,
            tags=tags,
            progress=progress,
            cancel=cancel,
            then=then,
        )
        if not report.records:  # nothing readable: the file is not kept either
            incomplete.forget_file(lib, file_id)
            incomplete.remove_empty(lib.abspath(folder.as_posix()), lib.root)
            failed = file_outcome(path, kind, folder, [report])
            failed.folder = None
            return failed
        restored = restore_labels(
            lib, report.snapshot_ids, listed, collection=collection, folder_collection=slug
        )
        data = sidecar_data(lib, folder, slug, path, [(name, sha, report)])
        if link:
            data["files"][0]["external_path"] = str(path)
        if regzipped is not None:  # what was imported, before it was recompressed
            data["files"][0]["recompressed_from"] = {
                "sha256": sha256_file(path),
                "size": path.stat().st_size,
            }
        write_sidecar(lib, folder, data, report.snapshot_ids[0] if report.snapshot_ids else None)
    except BaseException:  # failed or cancelled: nothing of it stays
        incomplete.forget_on_error(lib, [file_id])
        incomplete.drop_sidecar(lib, folder)
        raise
    incomplete.mark_complete(lib, [file_id])
    outcome = file_outcome(path, kind, folder, [report])
    restored.tell(outcome, collection)
    return outcome


def file_outcome(
    path: Path, kind: str, folder: PurePosixPath, reports: list[IndexReport]
) -> FileOutcome:
    problems = [f"{r.path.name} offset {p.offset}: {p.reason}" for r in reports for p in r.problems]
    records = sum(r.records for r in reports)
    state = OutcomeState.IMPORTED if records else OutcomeState.FAILED
    reason = "" if records else (problems[0] if problems else "no records found")
    if records and problems:
        n = len(problems)
        reason = f"{n} damaged part{'s' if n != 1 else ''} skipped, the rest imported"
    return FileOutcome(
        path,
        kind,
        state,
        reason,
        records=records,
        pages=sum(r.pages for r in reports),
        problems=problems,
        snapshot_ids=[i for r in reports for i in r.snapshot_ids],
        folder=folder.as_posix(),
    )
