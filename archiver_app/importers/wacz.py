"""Import WACZ files: verify them, extract their WARCs into one snapshot folder, index them.

Tampering is reported, not a reason to lose the good records: :func:`check_package` runs
the checks of ``archiver verify-export`` (:func:`archiver_app.export.signing.verify_wacz`),
each difference (a WARC changed, a file added or missing, ``datapackage.json`` edited) and
the signature's state go into the outcome (``FileOutcome.package`` and its problems), and
a changed WARC is still indexed: every record that reads is kept.

A WACZ is someone else's zip: :mod:`archiver_app.warc.wacz` checks its structure, its
totals (zip bombs) and its hashes; here each verified WARC is extracted under a temporary
name, checked (a WARC gzipped whole is recompressed record by record), claimed by its hash
like any imported WARC (:mod:`archiver_app.importers.incomplete`) and indexed with the
WACZ's pages list deciding what a page is; a list that is not as signed
(:attr:`PackageCheck.pages_list_doubt`) gives no titles or texts, the WARC's are kept.
Failure or cancellation undoes the whole WACZ.
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from sqlalchemy import select
from warcio.archiveiterator import ArchiveIterator

from archiver_app.durable import discard, install, open_temp, sweep_leftovers, sync_fd
from archiver_app.export.signing import Difference, fingerprint, verify_wacz
from archiver_app.filelock import held_or_busy
from archiver_app.hashing import sha256_file
from archiver_app.importers import incomplete
from archiver_app.importers.labels import first_id, listed_collection, restore_labels
from archiver_app.importers.outcome import FileOutcome, OutcomeState, PackageCheck
from archiver_app.importers.warcs import (
    ProgressFn,
    file_outcome,
    index_one,
    listed_texts,
    new_folder,
    regzip_to_temp,
    resolve_collection,
    safe_file_name,
    sidecar_data,
    write_sidecar,
)
from archiver_app.library import DEFAULT_COLLECTION, Library
from archiver_app.store.files import register_file
from archiver_app.store.models import FileKind, Origin, Setting, Snapshot
from archiver_app.tasks import CancelToken
from archiver_app.units import counted
from archiver_app.warc import workers
from archiver_app.warc.indexer import IndexReport
from archiver_app.warc.listing import ListingsLeft, listed_digits
from archiver_app.warc.scan import NotAnArchiveError, OneGzipStreamError, sniff_archive
from archiver_app.warc.timestamps import parse_ts, parse_warc_date, to_ts17
from archiver_app.warc.wacz import (
    PagesCheck,
    WaczError,
    WaczInfo,
    WaczPage,
    extract_verified,
    open_wacz,
)
from archiver_app.warc.ziprecover import open_rebuilt


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


def _regzip_in_place(path: Path, cancel: CancelToken | None) -> bool:
    """Replace ``path`` by its records one gzip member each; False when none is readable."""
    tmp, report = regzip_to_temp(path, path.parent, cancel)
    if report.records == 0:
        discard(tmp)
        return False
    install(tmp, path)
    return True


def import_wacz_file(
    lib: Library,
    path: Path,
    *,
    collection: str | None = None,
    tags: tuple[str, ...] = (),
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> FileOutcome:
    """Verify and import one WACZ: its WARCs are extracted (always copied) and indexed with
    its pages list deciding what a page is, and giving its pages their tags, notes and
    collections (``collection`` None: those it names, else the default one)."""
    with contextlib.ExitStack() as locks:  # each WARC's import lock, until all are done
        return _import_wacz_file(
            lib, path, locks, collection=collection, tags=tags, progress=progress, cancel=cancel
        )


def _import_wacz_file(
    lib: Library,
    path: Path,
    locks: contextlib.ExitStack,
    *,
    collection: str | None,
    tags: tuple[str, ...],
    progress: ProgressFn | None,
    cancel: CancelToken | None,
) -> FileOutcome:
    path = path.absolute()
    if path.stat().st_size == 0:
        return FileOutcome(path, "wacz", OutcomeState.FAILED, "the file is empty (0 bytes)")
    try:
        free = shutil.disk_usage(lib.root).free
        texts = listed_texts(lib, locks)
        info = open_wacz(path, max_total=free, texts=texts)
    except WaczError as exc:
        return FileOutcome(path, "wacz", OutcomeState.FAILED, str(exc))
    texts.close()  # written: the indexer's workers read it
    workers.prestart()  # starts while the WACZ is hashed and its WARCs extracted
    sha = sha256_file(path)
    whole = incomplete.import_lock(lib, f"wacz-{sha}")  # held until its WARCs are done
    if not locks.enter_context(held_or_busy(whole)):
        return FileOutcome(path, "wacz", OutcomeState.SKIPPED, incomplete.BEING_IMPORTED)
    package = check_package(path)
    changed = {f.name for f in package.findings if f.kind in _CHANGED}
    into = collection or listed_collection(info.pages) or DEFAULT_COLLECTION
    collection_id, slug = resolve_collection(lib, into)
    folder = new_folder(lib, slug, capture_time(info), first_id(lib, info.pages))
    # Marked before its first byte: a kill before the WARCs are recorded is swept too.
    locks.enter_context(incomplete.folder_in_progress(lib, folder, whole))
    placed = _extract_all(lib, info, folder, changed)
    if isinstance(placed, str):
        return FileOutcome(path, "wacz", OutcomeState.FAILED, f"verification failed: {placed}")
    doubt = package.pages_list_doubt if info.pages else None
    checks = info.pages_checks.values()
    differs = PagesCheck.DIFFERS in checks or PagesCheck.CUT in checks
    # Damaged bytes (neither its checksum nor its hash matches) may have lost lines: the
    # records say which are pages, as when the list does not read at all.
    listings = None if differs else _listings(info.pages, trusted=doubt is None)
    run = _WaczRun(lib, path, folder, collection_id, tags, listings, texts.path, progress, cancel)
    try:
        for name, tmp in placed:
            run.index(name, tmp, locks)
    except BaseException:  # failed or cancelled: nothing of the WACZ stays
        _undo_wacz(lib, folder, None, [tmp for _, tmp in placed], run.file_ids)
        raise
    if not run.reports:
        incomplete.remove_empty(lib.abspath(folder.as_posix()), lib.root)
        state = OutcomeState.FAILED if run.refused else OutcomeState.SKIPPED
        reason = "; ".join([*run.refused, *run.skipped])
        return FileOutcome(path, "wacz", state, reason, problems=package.lines(), package=package)
    try:
        ids = [i for _, _, r in run.reports for i in r.snapshot_ids]
        restored = restore_labels(
            lib, ids, info.pages, collection=collection, folder_collection=slug
        )
        data = sidecar_data(lib, folder, slug, path, run.reports)
        data["wacz"] = {
            "sha256": sha,
            "title": info.datapackage.get("title"),
            "pages": len(info.pages),
        }
        write_sidecar(lib, folder, data, ids[0] if ids else None)
    except BaseException:
        _undo_wacz(lib, folder, None, [], run.file_ids)
        raise
    incomplete.mark_complete(lib, run.file_ids)
    outcome = file_outcome(path, "wacz", folder, [r for _, _, r in run.reports])
    outcome.problems[:0] = package.lines()  # what was tampered with comes first
    outcome.problems.extend([*run.refused, *run.skipped, *_unlisted(run.listings)])
    outcome.problems.extend(_pages_lines(info, package, doubt))
    restored.tell(outcome, collection)
    outcome.package = package
    return outcome


_NOT_USED = (
    "the titles and texts it gives were not used (each page has the title and text its "
    "WARC records)"
)


def _pages_lines(info: WaczInfo, package: PackageCheck, doubt: str | None) -> list[str]:
    """The import's lines on its pages lists: one whose zip CRC-32 did not match its bytes
    (used, as its listed hash says or unchecked), one not as listed or signed."""
    out: list[str] = []
    signed = " (and was signed)" if package.signed else ""
    for name, check in info.pages_checks.items():
        if check is PagesCheck.VOUCHED:
            out.append(
                f"its pages list ({name}) was used: its checksum (CRC-32) in the zip did not "
                "match, but its bytes are as datapackage.json lists them (their hash matches)"
            )
        elif check is PagesCheck.CUT:
            out.append(
                f"its pages list ({name}) is cut short: the {counted(len(info.pages), 'page')} "
                "whose lines are there gave their tags and notes; its WARCs' records "
                "decided which are pages"
            )
            doubt = None  # said
        elif check is PagesCheck.UNCHECKED:
            out.append(
                f"its pages list ({name}) was used, though its checksum (CRC-32) in the zip "
                "did not match and no hash in datapackage.json could check it: it may be "
                "damaged (lines that do not read were skipped)"
            )
        else:
            out.append(
                f"its pages list ({name}) differs from what datapackage.json lists{signed}: "
                "neither its checksum (CRC-32) in the zip nor its hash matches: its WARCs' "
                f"records decided which are pages, and {_NOT_USED}"
            )
            doubt = None  # said
    if doubt is not None:
        out.append(f"its pages list cannot be trusted: {doubt}; {_NOT_USED}")
    return out


def _listings(pages: list[WaczPage], *, trusted: bool) -> ListingsLeft | None:
    """The pages list as the indexer takes it (None: there is none, the records decide).
    One that cannot be trusted (not as signed) still says which records are pages, and of
    which time, but gives no title or text: a page then has those its WARC records."""
    if not pages:
        return None
    if trusted:
        return ListingsLeft((p.url, p.ts, p.title, p.text) for p in pages)
    return ListingsLeft((p.url, p.ts, None, None) for p in pages)


def capture_time(info: WaczInfo) -> datetime | None:
    """When the WACZ's captures were made, which names its folder (as a capture's time
    names a capture's, and a WARC's first record an imported WARC's): the earliest time
    its pages list gives, else its first WARC's first dated record, read from the zip (a
    few records' headers); None when neither is readable (then the import's time)."""
    times = [at for p in info.pages if (at := _listed_time(p.ts)) is not None]
    if times:
        return min(times)
    try:
        zf = (
            zipfile.ZipFile(info.path)
            if info.rebuilt is None
            else open_rebuilt(info.path, info.rebuilt)
        )
        with zf, zf.open(info.warcs[0]) as fh:
            for rec in itertools.islice(ArchiveIterator(fh), 8):
                if date := rec.rec_headers.get_header("WARC-Date"):
                    return parse_warc_date(date)
    except Exception:  # a damaged or odd first WARC: the extraction says what is wrong
        return None
    return None


def _listed_time(ts: str | None) -> datetime | None:
    digits = listed_digits(ts)
    try:
        return parse_ts(digits) if digits else None
    except (ValueError, OverflowError):
        return None


#: Findings that mean a member's bytes are not what the package lists: extracted anyway
#: (the scan keeps every record that still reads) and reported. A stored member whose bytes
#: were altered (its zip CRC-32 fails too) is a changed one; an unreadable one does not
#: inflate, or is encrypted: what reads of it is kept.
_CHANGED = (Difference.CHANGED, Difference.SIZE, Difference.UNREADABLE)


def check_package(path: Path) -> PackageCheck:
    """The WACZ's hashes and signature, checked the way ``archiver verify-export`` does
    (after :func:`open_wacz` refused bombs and unsafe names, so reading it is bounded)."""
    report = verify_wacz(path)
    return PackageCheck(
        tuple(report.findings),
        report.signed,
        report.signature_valid,
        fingerprint(report.public_key) if report.public_key else None,
    )


def _extract_all(
    lib: Library, info: WaczInfo, folder: PurePosixPath, changed: set[str]
) -> list[tuple[str, Path]] | str:
    """Extract and verify every WARC of the WACZ into ``folder`` under temporary names
    (those in ``changed`` differ from the package's hashes, known and reported: they are
    extracted unverified); the (clean name, temporary path) of each, or why extraction
    failed (nothing left)."""
    base = lib.abspath(folder.as_posix())
    base.mkdir(parents=True, exist_ok=True)
    placed: list[tuple[str, Path]] = []
    used: set[str] = set()
    try:
        for entry in info.warcs:
            name = _unique_name(safe_file_name(PurePosixPath(entry).name, "data.warc.gz"), used)
            temp, fd = open_temp(base, name)
            tmp = Path(temp)
            placed.append((name, tmp))
            with open(fd, "wb") as fh:
                extract_verified(info, entry, fh, known_changed=entry in changed)
                fh.flush()
                sync_fd(fh.fileno())
    except (WaczError, zipfile.BadZipFile, zlib.error, EOFError) as exc:
        for _, tmp in placed:
            discard(tmp)
        sweep_leftovers(base, older_than=0)
        incomplete.remove_empty(base, lib.root)
        return str(exc)
    return placed


@dataclass
class _WaczRun:
    """The WARCs of one WACZ being indexed into one folder, one after the other."""

    lib: Library
    source: Path
    folder: PurePosixPath
    collection_id: int
    tags: tuple[str, ...]
    listings: ListingsLeft | None  # the pages list (None: none, the records decide)
    page_texts: Path | None  # where its texts were set aside (warc.listedtext)
    progress: ProgressFn | None
    cancel: CancelToken | None
    reports: list[tuple[str, str, IndexReport]] = field(default_factory=list)
    file_ids: list[int] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def index(self, name: str, tmp: Path, locks: contextlib.ExitStack) -> None:
        """Check, claim, place, register and index one extracted WARC."""
        lib = self.lib
        try:
            sniff_archive(tmp)
        except OneGzipStreamError as exc:
            if exc.kind != "warc" or not _regzip_in_place(tmp, self.cancel):
                tmp.unlink()
                self.refused.append(f"{name}: {exc}")
                return
        except NotAnArchiveError as exc:
            tmp.unlink()
            self.refused.append(f"{name}: {exc}")
            return
        wsha = sha256_file(tmp)
        if (why := incomplete.claim_sha(lib, wsha, locks)) is not None:
            tmp.unlink()
            self.skipped.append(f"{name}: {why}")
            return
        final = lib.abspath(self.folder.as_posix()) / name
        install(tmp, final)
        rel = f"{self.folder.as_posix()}/{name}"
        try:
            with lib.write() as s:
                file_id = register_file(
                    s, lib.root, rel, FileKind.WARC, sha256=wsha, origin=Origin.IMPORT
                ).id
                s.add(Setting(key=incomplete.incomplete_key(file_id), value=rel))
        except BaseException:
            final.unlink(missing_ok=True)
            raise
        self.file_ids.append(file_id)
        urls, counts, details = self.listings.spec() if self.listings else (None, (), ())
        report = index_one(
            lib,
            first=not any(r.snapshot_ids for _, _, r in self.reports),
            read_path=final,
            rel=rel,
            file_id=file_id,
            collection_id=self.collection_id,
            folder=self.folder,
            source=self.source,
            page_urls=urls,
            page_counts=counts,
            page_details=details,
            page_texts=self.page_texts,
            tags=self.tags,
            progress=self.progress,
            cancel=self.cancel,
        )
        if not report.records:  # no whole record (a WARC cut short): not kept either
            incomplete.forget_file(lib, file_id)
            self.file_ids.remove(file_id)
            said = [f"{name} offset {p.offset}: {p.reason}" for p in report.problems]
            self.refused.extend(said or [f"{name}: no records found"])
            return
        self.reports.append((name, wsha, report))
        if self.listings is not None:
            held = self.listings.held()
            self.listings.took(report.snapshot_ids, _pages(lib, [*report.snapshot_ids, *held]))


def _unlisted(listings: ListingsLeft | None) -> list[str]:
    """A line on the listed pages no WARC of the WACZ holds, if any."""
    unfound = listings.unfound() if listings is not None else []
    if not unfound:
        return []
    shown = ", ".join(unfound[:3]) + (f" and {len(unfound) - 3} more" if len(unfound) > 3 else "")
    return [
        f"its pages list names {counted(len(unfound), 'page')} its WARCs hold no capture "
        f"of: {shown}"
    ]


def _pages(lib: Library, ids: list[int]) -> dict[int, tuple[str, str]]:
    """The address and time (17 digits) of pages ``ids``."""
    out: dict[int, tuple[str, str]] = {}
    with lib.session() as s:
        for start in range(0, len(ids), 500):
            rows = s.execute(
                select(Snapshot.id, Snapshot.url, Snapshot.captured_at).where(
                    Snapshot.id.in_(ids[start : start + 500])
                )
            )
            for sid, url, at in rows:
                out[sid] = (url, to_ts17(at if at.tzinfo else at.replace(tzinfo=UTC)))
    return out


def _undo_wacz(
    lib: Library,
    folder: PurePosixPath,
    current: Path | None,
    extracted: list[Path],
    file_ids: list[int],
) -> None:
    """A WACZ import that failed or was cancelled: forget the WARCs registered so far and
    remove what was extracted for the rest."""
    incomplete.forget_on_error(lib, file_ids)
    for leftover in [*extracted, *([current] if current is not None else [])]:
        leftover.unlink(missing_ok=True)
    incomplete.drop_sidecar(lib, folder)
