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
import zipfile
import zlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from sqlalchemy import delete, select, update

from archiver_app.durable import (
    atomic_write,
    discard,
    install,
    open_temp,
    sweep_leftovers,
    sync_fd,
)
from archiver_app.filelock import held_or_busy
from archiver_app.hashing import sha256_file
from archiver_app.importers.outcome import FileOutcome, OutcomeState
from archiver_app.layout import CURRENT_FS_VERSION, snapshot_folder
from archiver_app.layout.sidecar import SIDECAR, write_sidecar
from archiver_app.library import Library
from archiver_app.store.files import register_file
from archiver_app.store.fulltext import delete_snapshot_text
from archiver_app.store.models import (
    Collection,
    File,
    FileKind,
    LocalState,
    Record,
    Setting,
    Snapshot,
    SnapshotTag,
)
from archiver_app.tasks import CancelToken, ProgressUpdate
from archiver_app.warc import workers
from archiver_app.warc.indexer import IndexReport, IndexTarget, index_warc, record_time
from archiver_app.warc.regzip import RegzipReport, regzip_into
from archiver_app.warc.scan import (
    NotAnArchiveError,
    OneGzipStreamError,
    scan_records,
    sniff_archive,
)
from archiver_app.warc.wacz import WaczError, extract_verified, open_wacz

ProgressFn = Callable[[ProgressUpdate], None]
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_log = logging.getLogger(__name__)


def safe_file_name(name: str, default: str) -> str:
    cleaned = _SAFE_NAME.sub("_", name).strip("._")
    return cleaned[:150] if cleaned else default


def _unique_name(name: str, used: set[str]) -> str:
    """``name``, or ``name-2``, ``-3``... before its extension when a file of the same
    import already has it: two WACZ entries (``archive/x/data.warc.gz`` and
    ``archive/y/data.warc.gz``, or ``a b.warc.gz`` and ``a_b.warc.gz``) clean to one name.
    Compared without case (some file systems ignore it); ``used`` is updated."""
    lower = name.lower()
    ext = next((e for e in (".warc.gz", ".arc.gz", ".warc", ".arc") if lower.endswith(e)), "")
    stem = name[: len(name) - len(ext)]
    candidate, n = name, 1
    while candidate.lower() in used:
        n += 1
        candidate = f"{stem}-{n}{name[len(stem) :]}"
    used.add(candidate.lower())
    return candidate


def _first_time(path: Path) -> datetime | None:
    for rec in scan_records(path):
        if (at := record_time(rec)) is not None:
            return at
    return None


#: A ``settings`` key per WARC being imported, from its ``files`` row until its import is
#: complete (indexed, sidecar written): a file whose indexing stopped (a crash) is then
#: told from one already in the library, and imported again.
INCOMPLETE_PREFIX = "import-incomplete:"


def _incomplete_key(file_id: int) -> str:
    return f"{INCOMPLETE_PREFIX}{file_id}"


#: Why a file is skipped while another process (a second window, a terminal) imports the
#: same bytes.
BEING_IMPORTED = "the same file is being imported right now by another Archiver window or command"


def _claim_sha(lib: Library, sha: str, locks: contextlib.ExitStack) -> str | None:
    """Why the file with this hash is not to be imported now (already in the library, or
    being imported by another process), or None: go on, holding its import lock in
    ``locks`` until they close. Only a holder of the lock may forget an import that
    stopped partway (:func:`_known_sha`): one still running holds it."""
    lock = lib.root / ".locks" / f"import-{sha}.lock"
    if not locks.enter_context(held_or_busy(lock)):
        return BEING_IMPORTED
    existing = _known_sha(lib, sha)
    return None if existing is None else f"already in the library as {existing}"


def _known_sha(lib: Library, sha: str) -> str | None:
    """The path of the WARC with this hash already in the library, if it is complete; one
    whose import stopped partway is forgotten (rows, file) so that it is imported again."""
    with lib.session() as s:
        rows = s.execute(
            select(File.id, File.path).where(File.sha256 == sha, File.kind == FileKind.WARC)
        ).all()
        pending = set(
            s.scalars(
                select(Setting.key).where(
                    Setting.key.in_([_incomplete_key(fid) for fid, _ in rows])
                )
            )
        )
    complete = None
    for file_id, path in rows:
        if _incomplete_key(file_id) in pending:
            _forget_file(lib, file_id)
        elif complete is None:
            complete = path
    return complete


def _forget_file(lib: Library, file_id: int) -> None:
    """Undo a WARC's import that did not complete: its records, snapshots (text, tags), its
    ``files`` row and its copy in the library (a linked file is left where it is)."""
    with lib.write() as s:
        row = s.get(File, file_id)
        if row is None:
            s.execute(delete(Setting).where(Setting.key == _incomplete_key(file_id)))
            return
        rel, external = row.path, row.external_path
        ours = select(Record.id).where(Record.file_id == file_id).scalar_subquery()
        s.execute(
            update(Record)
            .where(Record.revisit_of_id.in_(ours), Record.file_id != file_id)
            .values(revisit_of_id=None)
        )
        s.execute(update(Record).where(Record.file_id == file_id).values(revisit_of_id=None))
        s.execute(delete(Record).where(Record.file_id == file_id))
        snapshot_ids = list(s.scalars(select(Snapshot.id).where(Snapshot.warc_file == rel)))
        conn = s.connection()
        for sid in snapshot_ids:
            delete_snapshot_text(conn, sid)
        snaps = select(Snapshot.id).where(Snapshot.warc_file == rel).scalar_subquery()
        s.execute(delete(SnapshotTag).where(SnapshotTag.snapshot_id.in_(snaps)))
        s.execute(delete(Snapshot).where(Snapshot.warc_file == rel))
        s.execute(delete(File).where(File.id == file_id))
        s.execute(delete(Setting).where(Setting.key == _incomplete_key(file_id)))
    if external is None:
        copy = lib.abspath(rel)
        copy.unlink(missing_ok=True)
        _remove_empty(copy.parent, lib.root)


def _completed(lib: Library, file_ids: list[int]) -> None:
    with lib.write() as s:
        s.execute(delete(Setting).where(Setting.key.in_([_incomplete_key(i) for i in file_ids])))


def _forget_on_error(lib: Library, file_ids: list[int]) -> None:
    """After a failed or cancelled import: forget its files; an error doing so is logged
    (the files stay marked incomplete, so a re-import still redoes them)."""
    for file_id in file_ids:
        try:
            _forget_file(lib, file_id)
        except Exception:
            _log.exception("could not undo the import of file %s", file_id)


def _new_folder(lib: Library, slug: str, at: datetime | None) -> PurePosixPath:
    when = at or lib.clock()
    return snapshot_folder(slug, when, lib.new_uid(when))


def _collection(lib: Library, slug: str) -> tuple[int, str]:
    cid = lib.ensure_collection(slug)
    with lib.session() as s:
        return cid, str(s.scalar(select(Collection.slug).where(Collection.id == cid)))


def _copy_into(src: Path, dest: Path) -> None:
    """Copy to a temporary sibling, fsync, rename: a crash never leaves a half file named
    like a whole one."""
    with src.open("rb") as fin:
        atomic_write(dest, lambda out: shutil.copyfileobj(fin, out, 1 << 20), make_parent=True)


def _write_sidecar(
    lib: Library, folder: PurePosixPath, data: dict[str, Any], snapshot_id: int | None
) -> None:
    write_sidecar(lib.abspath(folder.as_posix()), data)
    with lib.write() as s:
        register_file(s, lib.root, f"{folder.as_posix()}/{SIDECAR}", FileKind.SIDECAR, snapshot_id)


def _sidecar(
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


def _index_one(
    lib: Library,
    *,
    read_path: Path,
    rel: str,
    file_id: int,
    collection_id: int,
    folder: PurePosixPath,
    source: Path,
    page_urls: frozenset[str] | None,
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
    collection: str = "default",
    link: bool = False,
    tags: tuple[str, ...] = (),
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
    then: Path | None = None,
) -> FileOutcome:
    """Import one WARC/ARC file; never raises for bad input (the outcome says why).

    ``then``: the file the caller imports next, if it knows: it is read ahead while this
    one is written (``index_warc``)."""
    path = path.absolute()
    regzipped: tuple[Path, RegzipReport] | None = None
    try:
        kind = sniff_archive(path)
    except OneGzipStreamError as exc:
        if exc.kind != "warc" or link:
            hint = "; without --link it is recompressed on import" if exc.kind == "warc" else ""
            return FileOutcome(path, exc.kind, OutcomeState.FAILED, f"{exc}{hint}")
        kind = exc.kind
        regzipped = _regzip(lib, path, cancel)
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


def _regzip(lib: Library, path: Path, cancel: CancelToken | None) -> tuple[Path, RegzipReport]:
    """``path`` rewritten with one gzip member per record into a durable temporary file
    inside the library (on its disk, so it can be renamed into place)."""
    sweep_leftovers(lib.root, older_than=_STALE_SECONDS)
    return _regzip_to_temp(path, lib.root, cancel)


def _regzip_to_temp(
    path: Path, folder: Path, cancel: CancelToken | None
) -> tuple[Path, RegzipReport]:
    """``path`` recompressed into a new durable temporary file in ``folder``."""
    temp, fd = open_temp(folder, f"regzip-{safe_file_name(path.name, 'import')}")
    try:
        with open(fd, "wb") as out:
            report = regzip_into(path, out, cancel=cancel)
            out.flush()
            sync_fd(out.fileno())
    except BaseException:
        discard(temp)
        raise
    return Path(temp), report


def _regzip_in_place(path: Path, cancel: CancelToken | None) -> bool:
    """Replace ``path`` by its records one gzip member each; False when none is readable."""
    tmp, report = _regzip_to_temp(path, path.parent, cancel)
    if report.records == 0:
        discard(tmp)
        return False
    install(tmp, path)
    return True


def _import_warc_file(
    lib: Library,
    path: Path,
    kind: str,
    regzipped: Path | None,
    locks: contextlib.ExitStack,
    *,
    collection: str,
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
    if (why := _claim_sha(lib, sha, locks)) is not None:
        return FileOutcome(path, kind, OutcomeState.SKIPPED, why)
    collection_id, slug = _collection(lib, collection)
    folder = _new_folder(lib, slug, _first_time(source))
    name = safe_file_name(path.name, "import.warc.gz")
    rel = f"{folder.as_posix()}/{name}"
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
            s.add(Setting(key=_incomplete_key(file_id), value=rel))
    else:
        read_path = lib.abspath(rel)
        if regzipped is not None:  # already a durable file on the library's disk
            read_path.parent.mkdir(parents=True, exist_ok=True)
            install(regzipped, read_path)
        else:
            _copy_into(path, read_path)
        try:
            with lib.write() as s:
                file_id = register_file(s, lib.root, rel, FileKind.WARC, sha256=sha).id
                s.add(Setting(key=_incomplete_key(file_id), value=rel))
        except BaseException:
            read_path.unlink(missing_ok=True)
            _remove_empty(read_path.parent, lib.root)
            raise
    try:
        report = _index_one(
            lib,
            read_path=read_path,
            rel=rel,
            file_id=file_id,
            collection_id=collection_id,
            folder=folder,
            source=path,
            page_urls=None,
            tags=tags,
            progress=progress,
            cancel=cancel,
            then=then,
        )
        data = _sidecar(lib, folder, slug, path, [(name, sha, report)])
        if link:
            data["files"][0]["external_path"] = str(path)
        if regzipped is not None:  # what was imported, before it was recompressed
            data["files"][0]["recompressed_from"] = {
                "sha256": sha256_file(path),
                "size": path.stat().st_size,
            }
        _write_sidecar(lib, folder, data, report.snapshot_ids[0] if report.snapshot_ids else None)
    except BaseException:  # failed or cancelled: nothing of it stays
        _forget_on_error(lib, [file_id])
        _drop_sidecar(lib, folder)
        raise
    _completed(lib, [file_id])
    return _outcome(path, kind, folder, [report])


def _outcome(
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


def import_wacz_file(
    lib: Library,
    path: Path,
    *,
    collection: str = "default",
    tags: tuple[str, ...] = (),
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> FileOutcome:
    """Verify and import one WACZ: its WARCs are extracted (always copied) and indexed with
    its pages list deciding what a page is."""
    with contextlib.ExitStack() as locks:  # each WARC's import lock, until all are done
        return _import_wacz_file(
            lib, path, locks, collection=collection, tags=tags, progress=progress, cancel=cancel
        )


def _import_wacz_file(
    lib: Library,
    path: Path,
    locks: contextlib.ExitStack,
    *,
    collection: str,
    tags: tuple[str, ...],
    progress: ProgressFn | None,
    cancel: CancelToken | None,
) -> FileOutcome:
    path = path.absolute()
    if path.stat().st_size == 0:
        return FileOutcome(path, "wacz", OutcomeState.FAILED, "the file is empty (0 bytes)")
    try:
        free = shutil.disk_usage(lib.root).free
        info = open_wacz(path, max_total=free)
    except WaczError as exc:
        return FileOutcome(path, "wacz", OutcomeState.FAILED, str(exc))
    workers.prestart()  # starts while the WACZ is hashed and its WARCs extracted
    sha = sha256_file(path)
    collection_id, slug = _collection(lib, collection)
    folder = _new_folder(lib, slug, None)
    base = lib.abspath(folder.as_posix())
    base.mkdir(parents=True, exist_ok=True)
    placed: list[tuple[str, Path]] = []
    used: set[str] = set()
    try:
        for entry in info.warcs:
            name = _unique_name(safe_file_name(PurePosixPath(entry).name, "data.warc.gz"), used)
            temp, fd = open_temp(base, name)
            placed.append((name, Path(temp)))
            with open(fd, "wb") as fh:
                extract_verified(info, entry, fh)
                fh.flush()
                sync_fd(fh.fileno())
    except (WaczError, zipfile.BadZipFile, zlib.error, EOFError) as exc:
        sweep_leftovers(base, older_than=0)  # a new folder: only this import's files
        _remove_empty(base, lib.root)
        return FileOutcome(path, "wacz", OutcomeState.FAILED, f"verification failed: {exc}")
    page_urls = frozenset(p.url for p in info.pages) if info.pages else None
    reports: list[tuple[str, str, IndexReport]] = []
    skipped: list[str] = []
    refused: list[str] = []
    file_ids: list[int] = []
    for name, tmp in placed:
        try:
            sniff_archive(tmp)
        except OneGzipStreamError as exc:
            if exc.kind != "warc" or not _regzip_in_place(tmp, cancel):
                discard(tmp)
                refused.append(f"{name}: {exc}")
                continue
        except NotAnArchiveError as exc:
            discard(tmp)
            refused.append(f"{name}: {exc}")
            continue
        wsha = sha256_file(tmp)
        if (why := _claim_sha(lib, wsha, locks)) is not None:
            discard(tmp)
            skipped.append(f"{name}: {why}")
            continue
        final = base / name
        install(tmp, final)
        rel = f"{folder.as_posix()}/{name}"
        try:
            with lib.write() as s:
                file_id = register_file(s, lib.root, rel, FileKind.WARC, sha256=wsha).id
                s.add(Setting(key=_incomplete_key(file_id), value=rel))
            file_ids.append(file_id)
            rep = _index_one(
                lib,
                first=not any(r.snapshot_ids for _, _, r in reports),
                read_path=final,
                rel=rel,
                file_id=file_id,
                collection_id=collection_id,
                folder=folder,
                source=path,
                page_urls=page_urls,
                tags=tags,
                progress=progress,
                cancel=cancel,
            )
        except BaseException:  # failed or cancelled: nothing of the WACZ stays
            _undo_wacz(lib, folder, final, [tmp for _, tmp in placed], file_ids)
            raise
        reports.append((name, wsha, rep))
    if not reports:
        _remove_empty(base, lib.root)
        state = OutcomeState.FAILED if refused else OutcomeState.SKIPPED
        return FileOutcome(path, "wacz", state, "; ".join([*refused, *skipped]))
    try:
        data = _sidecar(lib, folder, slug, path, reports)
        data["wacz"] = {
            "sha256": sha,
            "title": info.datapackage.get("title"),
            "pages": len(info.pages),
        }
        ids = [i for _, _, r in reports for i in r.snapshot_ids]
        _write_sidecar(lib, folder, data, ids[0] if ids else None)
    except BaseException:
        _undo_wacz(lib, folder, None, [], file_ids)
        raise
    _completed(lib, file_ids)
    outcome = _outcome(path, "wacz", folder, [r for _, _, r in reports])
    outcome.problems.extend([*refused, *skipped])
    return outcome


def _undo_wacz(
    lib: Library,
    folder: PurePosixPath,
    current: Path | None,
    extracted: list[Path],
    file_ids: list[int],
) -> None:
    """A WACZ import that failed or was cancelled: forget the WARCs registered so far and
    remove what was extracted for the rest."""
    _forget_on_error(lib, file_ids)
    for leftover in [*extracted, *([current] if current is not None else [])]:
        leftover.unlink(missing_ok=True)
    _drop_sidecar(lib, folder)


def _drop_sidecar(lib: Library, folder: PurePosixPath) -> None:
    """Remove the sidecar (file and row) of an import undone, if it got that far, and the
    folder if nothing else is in it."""
    base = lib.abspath(folder.as_posix())
    rel = f"{folder.as_posix()}/{SIDECAR}"
    try:
        with lib.write() as s:
            s.execute(delete(File).where(File.path == rel))
        (base / SIDECAR).unlink(missing_ok=True)
        _remove_empty(base, lib.root)
    except Exception:
        _log.exception("could not remove %s", rel)


def _remove_empty(folder: Path, root: Path) -> None:
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
