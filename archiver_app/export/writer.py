"""Write an :class:`~archiver_app.export.plan.ExportPlan` as a WACZ or a plain folder.

Both formats share the pieces: one ``data.warc.gz`` made by copying each record's bytes
(gzip members are copied as they are; records of uncompressed WARCs are compressed into
their own member; records with private headers are rewritten without them, see
:mod:`.privacy`; ARC records are converted to WARC/1.1 records, warcinfo for the ARC's
``filedesc`` header and response for the others), a CDXJ index of it sorted in ``LC_ALL=C``
order, and ``pages.jsonl`` with every page's title and text.

- WACZ 1.1.1: ``archive/data.warc.gz`` stored (not deflated), ``indexes/index.cdx`` (CDXJ
  lines; the spec's and pywb's name for it: ``wb-manager add --unpack-wacz`` only picks up
  ``*.cdx``/``*.cdx.gz``),
  ``pages/pages.jsonl``, ``datapackage.json`` with sha256 hashes and sizes,
  ``datapackage-digest.json``; zip64 only past 4 GiB, and then in the local header and the
  central directory alike (ReplayWeb.page misreads a zip whose two disagree).
- folder: ``archive/data.warc.gz``, ``index.cdxj``, ``pages.jsonl``, ``README.txt``.

Output is written under a temporary name beside the destination and renamed only when
complete and flushed to disk, so a pulled drive never leaves something that looks whole.
A destination is never the library's folder, inside it or around it; ``overwrite`` replaces
a file with a WACZ, and a folder only when it is empty or an earlier folder export.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from sqlalchemy import text

from archiver_app import __version__
from archiver_app.durable import discard, install, rename_folder, sync_fd, sync_file, temp_name
from archiver_app.errors import InputError
from archiver_app.export.arc import arc_to_warc
from archiver_app.export.captured import LeftOut, check_plan
from archiver_app.export.pages import CARRIED, pages_jsonl
from archiver_app.export.plan import ExportPlan, Selection, plan_export
from archiver_app.export.privacy import HTTP_RECORD_TYPES, CopyIssue, copy_record
from archiver_app.export.signing import Signing, fingerprint, package_digest
from archiver_app.export.timestamps import StampOutcome
from archiver_app.library import Library
from archiver_app.tasks import CancelToken, ProgressUpdate
from archiver_app.units import counted
from archiver_app.warc.cdxj import INDEXED_TYPES, ExportIndex, IndexEntry, cdxj_line
from archiver_app.warc.postkey import MAX_READ, PostedRequest, posted_request

WARC_NAME = "data.warc.gz"
WACZ_VERSION = "1.1.1"
WACZ_INDEX = "indexes/index.cdx"
BUF = 1024 * 1024
ProgressFn = Callable[[ProgressUpdate], None]

README = """\
This folder is a web archive exported by Archiver {version} on {created}.

  archive/data.warc.gz  the captures' WARC records (WARC/1.x, one gzip member per record):
                        HTTP requests, responses and revisits, each page's screenshot,
                        DOM and text as resource records, its page info as a metadata record
  index.cdxj            CDXJ index of the WARC, sorted (LC_ALL=C byte order)
  pages.jsonl           one JSON line per page: url, ts, title, text, and Archiver's
                        tags, notes, collection and urn (the identifier citations give)

Open it with any WARC tool, for example:
  - pywb:      wb-manager init mycoll && wb-manager add mycoll archive/data.warc.gz && wayback
  - ReplayWeb.page (https://replayweb.page): load archive/data.warc.gz
  - warcio:    warcio index archive/data.warc.gz
  - Archiver:  archiver import FOLDER   (this whole folder: pages.jsonl says which
               records are pages and gives back their titles, texts, tags and notes)

{counts}.
"""


@dataclass
class ExportResult:
    path: Path
    format: str
    pages: int = 0
    records: int = 0
    bytes: int = 0
    originals_added: int = 0
    problems: list[str] = field(default_factory=list)
    timestamp: StampOutcome | None = None  # of a signed export given an authority
    bibliography: tuple[Path, ...] = ()  # .bib and .csl.json beside it, when asked for
    left_out: LeftOut | None = None  # captures not as captured, left out on request
    signer: str | None = None  # the fingerprint of the key that signed it
    #: temporary files killed exports to the same place had left there, removed first
    leftovers_removed: tuple[str, ...] = ()

    @property
    def carried(self) -> str:
        """What the export carries besides the archive, and what not (one sentence)."""
        return CARRIED


class _PastPlainZipLimit(Exception):
    """The WARC streamed into a zip entry without zip64 reached the 4 GiB limit."""


class _HashingWriter:
    """Counts and hashes bytes on their way to ``sink``; refuses to pass ``limit``."""

    def __init__(self, sink: IO[bytes], limit: int | None = None) -> None:
        self.sink = sink
        self.size = 0
        self.sha = hashlib.sha256()
        self.limit = limit

    def write(self, data: bytes) -> None:
        if self.limit is not None and self.size + len(data) > self.limit:
            raise _PastPlainZipLimit
        self.sink.write(data)
        self.size += len(data)
        self.sha.update(data)

    def flush(self) -> None:  # for warcio's writer; the sink is flushed when closed
        pass


CANCEL_EVERY_BYTES = 8 << 20  #: cancel looked at after so many bytes (few large records)


def _copy_records(
    plan: ExportPlan,
    out: _HashingWriter,
    result: ExportResult,
    progress: ProgressFn | None,
    cancel: CancelToken | None,
) -> list[str]:
    index = ExportIndex()
    total = plan.total_bytes
    done = 0
    handles: dict[int, IO[bytes]] = {}
    result.problems += plan.missing_lines()
    asked_at = -CANCEL_EVERY_BYTES  # bytes copied when cancel was last looked at
    try:
        for n, rec in enumerate(plan.records):
            if cancel is not None and (n % 200 == 0 or done - asked_at >= CANCEL_EVERY_BYTES):
                cancel.raise_if_cancelled()
                asked_at = done
            if rec.file_id not in plan.files:
                continue
            path, gz = plan.files[rec.file_id]
            fh = handles.get(rec.file_id)
            if fh is None:
                fh = handles[rec.file_id] = path.open("rb")
            start = out.size
            fh.seek(rec.offset)
            digest = rec.digest
            sink: _HashingWriter | _Written = out
            if rec.file_id in plan.arc_files:  # converted, so data.warc.gz holds WARC records only
                try:
                    digest = arc_to_warc(fh, rec.length, out) or digest
                except ValueError as exc:
                    result.problems.append(f"{rec.url}: the ARC record cannot be read ({exc})")
                    continue
            else:  # without Cookie, Authorization, Set-Cookie... unless kept (export.privacy)
                strip = plan.strip_private and rec.record_type in HTTP_RECORD_TYPES
                sink = _Written(out) if rec.record_type == "request" else out
                if (problem := copy_record(fh, rec.length, gz, sink, strip=strip)) is not None:
                    result.problems.append(f"{rec.url}: {path.name}: {problem.message}")
                    if problem.issue is CopyIssue.LEFT_OUT:
                        continue
            result.records += 1
            entry = None
            if rec.record_type in INDEXED_TYPES:
                line = cdxj_line(
                    key=rec.url_key,
                    ts17=rec.ts,
                    url=rec.url,
                    record_type=rec.record_type,
                    status=rec.status,
                    mime=rec.mime,
                    digest=digest,
                    offset=start,
                    length=out.size - start,
                    filename=WARC_NAME,
                )
                chosen = rec.id in plan.page_records
                page = rec.snapshot_id if chosen or rec.id in plan.superseded else None
                entry = IndexEntry(rec.url, rec.record_type, rec.status, line, page, chosen)
            posted = sink.posted if isinstance(sink, _Written) else _nothing_posted
            index.add(rec.record_type, rec.url, entry, posted)
            done += rec.length
            if progress is not None:
                progress(
                    ProgressUpdate(
                        done=n + 1,
                        total=len(plan.records),
                        message="copying records",
                        bytes_done=done,
                        bytes_total=total,
                    )
                )
    finally:
        for fh in handles.values():
            fh.close()
    return index.lines()  # without parts of what is whole too, POSTs keyed (warc.cdxj)


class _Written:
    """Passes a request record on to the export and keeps what it wrote (one gzip member),
    so the index keys a POST by the body the export holds: with a password's value
    blanked (export.privacy), never the library's."""

    def __init__(self, out: _HashingWriter) -> None:
        self.out, self.parts, self.size = out, list[bytes](), 0

    def write(self, data: bytes) -> None:
        self.out.write(data)
        self.size += len(data)
        if self.size <= MAX_READ:  # a larger one (an upload) is not read for its body
            self.parts.append(data)

    def posted(self) -> PostedRequest | None:
        """The POST or PUT the record as written sent (warc.postkey)."""
        return None if self.size > MAX_READ else posted_request(b"".join(self.parts), True)


def _nothing_posted() -> None:
    return None


def _temp_for(dest: Path) -> Path:
    return dest.with_name(temp_name(dest.name))


FOLDER_NAMES = frozenset({"README.txt", "archive", "index.cdxj", "pages.jsonl"})
README_START = "This folder is a web archive exported by Archiver "


def is_folder_export(path: Path) -> bool:
    """True for a folder holding an export of ours and nothing else: safe to replace."""
    if path.is_symlink() or not path.is_dir():
        return False
    names = {p.name for p in path.iterdir()}
    if not {"README.txt", "index.cdxj"} <= names <= FOLDER_NAMES:
        return False
    archive = path / "archive"
    if archive.is_symlink() or (archive.exists() and not archive.is_dir()):
        return False
    if archive.is_dir() and {p.name for p in archive.iterdir()} - {WARC_NAME}:
        return False
    readme = path / "README.txt"
    if readme.is_symlink() or not readme.is_file():
        return False
    with readme.open("rb") as fh:
        return fh.read(len(README_START)) == README_START.encode()


def _replaceable_folder(dest: Path) -> None:
    """Refuse to replace ``dest`` unless it is an empty folder or an earlier export of ours."""
    if dest.is_symlink() or not dest.is_dir():
        raise InputError(f"{dest} exists and is not a folder; a folder export cannot replace it")
    if any(dest.iterdir()) and not is_folder_export(dest):
        raise InputError(
            f"{dest} is not empty and is not an earlier Archiver export; "
            "--overwrite replaces only those: choose a new or empty folder"
        )


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _check_not_library(library: Library, dest: Path) -> None:
    """Refuse a destination that is, holds or lies inside the library or a file it reads."""
    real = dest.resolve()
    root = library.root.resolve()
    if _inside(real, root):
        raise InputError(
            f"{dest} is inside the library folder {root}; export somewhere outside the library"
        )
    if _inside(root, real):
        raise InputError(
            f"{dest} holds the library folder {root}; export somewhere outside the library"
        )
    with library.engine.connect() as conn:
        rows = conn.execute(text("SELECT external_path FROM files WHERE external_path IS NOT NULL"))
        for (external,) in rows:
            linked = Path(external).resolve()
            if _inside(linked, real):
                raise InputError(
                    f"{dest} holds {linked}, a WARC the library reads in place; "
                    "export somewhere else"
                )


def check_destination(library: Library, dest: Path, fmt: str, *, overwrite: bool = False) -> Path:
    """``dest`` made absolute, once it is known to be a safe place for a ``fmt`` export.

    Never the library's folder, anything inside it or a folder holding it, nor a WARC the
    library links to; an existing ``dest`` only with ``overwrite``, and then only a file for
    a WACZ, and for a folder export an empty folder or an earlier export of ours.

    Raises:
        InputError: ``dest`` is not a safe place, with what to do instead.
    """
    if fmt not in {"wacz", "folder"}:
        raise InputError(f"unknown export format {fmt!r}: use wacz or folder")
    dest = dest.expanduser().absolute()
    _check_not_library(library, dest)
    if os.path.lexists(dest):
        if not overwrite:
            raise InputError(f"{dest} already exists; choose another name or pass --overwrite")
        if fmt == "folder":
            _replaceable_folder(dest)
        elif dest.is_dir():
            raise InputError(f"{dest} is a folder; a WACZ export replaces only a file")
    if not dest.parent.is_dir():
        raise InputError(
            f"the folder {dest.parent} does not exist: make it first, or export somewhere else"
        )
    return dest


def write_wacz(
    library: Library,
    plan: ExportPlan,
    dest: Path,
    *,
    title: str = "Archiver export",
    sign: bool | Signing = False,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> ExportResult:
    tmp = _temp_for(dest)
    spool = _may_reach_zip64(plan)
    try:
        while True:
            result = ExportResult(dest, "wacz", originals_added=plan.originals_added)
            try:
                _write_wacz_file(
                    library,
                    plan,
                    tmp,
                    result,
                    title=title,
                    spool=spool,
                    sign=sign,
                    progress=progress,
                    cancel=cancel,
                )
                break
            except _PastPlainZipLimit:  # larger than foreseen: again, sized first
                spool = True
        sync_file(tmp)
        install(tmp, dest)
    except BaseException:
        discard(tmp)
        raise
    return result


def _write_wacz_file(
    library: Library,
    plan: ExportPlan,
    tmp: Path,
    result: ExportResult,
    *,
    title: str,
    spool: bool,
    sign: bool | Signing,
    progress: ProgressFn | None,
    cancel: CancelToken | None,
) -> None:
    """Write the whole WACZ to ``tmp``; see :func:`_write_warc_member` for ``spool``;
    ``sign``: with the user's key (:mod:`archiver_app.export.signing`)."""
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    resources = []
    with tmp.open("wb") as raw, zipfile.ZipFile(raw, "w", allowZip64=True) as zf:
        warc, cdxj = _write_warc_member(
            zf, plan, tmp, result, spool=spool, progress=progress, cancel=cancel
        )
        resources.append(_resource(f"archive/{WARC_NAME}", warc.size, warc.sha.hexdigest()))
        result.bytes = warc.size
        index = ("\n".join(cdxj) + "\n").encode("utf-8") if cdxj else b""
        pages = pages_jsonl(library, plan, result)
        for name, data in ((WACZ_INDEX, index), ("pages/pages.jsonl", pages)):
            zf.writestr(_info(name, zipfile.ZIP_DEFLATED), data)
            resources.append(_resource(name, len(data), hashlib.sha256(data).hexdigest()))
        package = {
            "profile": "data-package",
            "resources": resources,
            "title": title,
            "created": created,
            "wacz_version": WACZ_VERSION,
            "software": f"Archiver {__version__}",
        }
        package_bytes = json.dumps(package, indent=2).encode("utf-8")
        zf.writestr(_info("datapackage.json", zipfile.ZIP_DEFLATED), package_bytes)
        digest = package_digest(package_bytes, sign=sign)
        data = json.dumps(digest, indent=2).encode("utf-8")
        zf.writestr(_info("datapackage-digest.json", zipfile.ZIP_DEFLATED), data)
        signed = digest.get("signedData")
        result.signer = fingerprint(signed["publicKey"]) if signed else None


def _may_reach_zip64(plan: ExportPlan) -> bool:
    """Whether the export's WARC could pass the 4 GiB zip64 limit.

    Gzipped records are copied as they are; compressing plain WARC records and converting
    ARC records can grow them a little (gzip framing, longer WARC headers): half as much
    again plus 4 KiB a record bounds that generously.
    """
    bound = plan.total_bytes * 3 // 2 + 4096 * len(plan.records)
    return bound > zipfile.ZIP64_LIMIT


def _write_warc_member(
    zf: zipfile.ZipFile,
    plan: ExportPlan,
    tmp: Path,
    result: ExportResult,
    *,
    spool: bool,
    progress: ProgressFn | None,
    cancel: CancelToken | None,
) -> tuple[_HashingWriter, list[str]]:
    """Write ``archive/data.warc.gz`` into ``zf``, stored; return its writer and CDXJ lines.

    Its local header and the central directory must agree on the zip64 extra field:
    ReplayWeb.page takes the local header's length from the central directory's entry
    when that has no extra field, so a zip64 field in the local header alone shifts every
    record it reads. zipfile writes the central directory's field only when the size
    passes 4 GiB, and the local header's only when told before the first byte. Unless
    ``spool``, the WARC is streamed straight in without zip64 and
    :class:`_PastPlainZipLimit` raised before it would pass the limit; with ``spool`` it
    is first written to a temporary file beside ``tmp``, so its size is known.
    """
    info = zipfile.ZipInfo(f"archive/{WARC_NAME}", _zip_time())
    info.compress_type = zipfile.ZIP_STORED
    if not spool:
        with zf.open(info, "w", force_zip64=False) as entry:
            warc = _HashingWriter(entry, limit=zipfile.ZIP64_LIMIT)
            cdxj = _copy_records(plan, warc, result, progress, cancel)
        return warc, cdxj
    spooled = tmp.with_name(temp_name(f"{WARC_NAME}-spool"))
    try:
        with spooled.open("w+b") as fh:
            warc = _HashingWriter(fh)
            cdxj = _copy_records(plan, warc, result, progress, cancel)
            fh.seek(0)
            with zf.open(info, "w", force_zip64=warc.size > zipfile.ZIP64_LIMIT) as entry:
                shutil.copyfileobj(fh, entry, BUF)
    finally:
        discard(spooled)
    return warc, cdxj


def _zip_time() -> tuple[int, int, int, int, int, int]:
    now = datetime.now(UTC)
    return (now.year, now.month, now.day, now.hour, now.minute, now.second)


def _info(name: str, compress: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, _zip_time())
    info.compress_type = compress
    return info


def _resource(path: str, size: int, sha: str) -> dict[str, object]:
    return {
        "name": path.rsplit("/", 1)[-1].lower(),
        "path": path,
        "hash": f"sha256:{sha}",
        "bytes": size,
    }


def write_folder(
    library: Library,
    plan: ExportPlan,
    dest: Path,
    *,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> ExportResult:
    result = ExportResult(dest, "folder", originals_added=plan.originals_added)
    tmp = _temp_for(dest)
    try:
        (tmp / "archive").mkdir(parents=True)
        with (tmp / "archive" / WARC_NAME).open("wb") as fh:
            warc = _HashingWriter(fh)
            cdxj = _copy_records(plan, warc, result, progress, cancel)
            fh.flush()
            sync_fd(fh.fileno())
        result.bytes = warc.size
        (tmp / "index.cdxj").write_bytes(("\n".join(cdxj) + "\n").encode() if cdxj else b"")
        (tmp / "pages.jsonl").write_bytes(pages_jsonl(library, plan, result))
        (tmp / "README.txt").write_text(
            README.format(
                version=__version__,
                created=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                counts=f"{counted(result.pages, 'page')}, {counted(result.records, 'record')}",
            ),
            encoding="utf-8",
        )
        for name in ("index.cdxj", "pages.jsonl", "README.txt"):
            sync_file(tmp / name)
        if os.path.lexists(dest):  # --overwrite: the old export goes once the new one is whole
            _replaceable_folder(dest)  # checked again: it may have changed since the start
            old = dest.with_name(temp_name(f"{dest.name}.old"))
            rename_folder(dest, old)
            try:
                rename_folder(tmp, dest)
            except BaseException:
                rename_folder(old, dest)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            rename_folder(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return result


def export(
    library: Library,
    selection: Selection,
    dest: Path,
    *,
    fmt: str = "wacz",
    overwrite: bool = False,
    sign: bool | Signing = False,
    keep_private_headers: bool = False,
    skip_altered: bool = False,
    checked: bool = False,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> ExportResult:
    """Export what ``selection`` picks to ``dest`` as ``wacz`` or ``folder`` (``sign``: signed;
    ``keep_private_headers``: :mod:`.privacy`), its files checked first (:mod:`.captured`:
    ``skip_altered`` leaves out the captures not as captured; ``checked``: a release did)."""
    if sign and fmt != "wacz":
        raise InputError("only a WACZ export can be signed (--format wacz)")
    dest = check_destination(library, dest, fmt, overwrite=overwrite)
    plan = plan_export(library, selection)
    plan.strip_private = not keep_private_headers
    left = None if checked else check_plan(library, plan, skip_altered=skip_altered,
                                           progress=progress, cancel=cancel)  # fmt: skip
    if fmt == "wacz":
        result = write_wacz(library, plan, dest, title=selection.label, sign=sign,
                            progress=progress, cancel=cancel)  # fmt: skip
    else:
        result = write_folder(library, plan, dest, progress=progress, cancel=cancel)
    result.left_out = left
    return result
