"""Reading WACZ files safely: structure checks, hash verification, bounded extraction.

A WACZ is a zip from someone else, so nothing in it is trusted:

- entry names with ``..``, a leading ``/``, a drive letter or a backslash escape are refused
  (zip slip) — and we never write to a path built from an entry name anyway;
- more than :data:`MAX_ENTRIES` entries, an entry that claims to expand far beyond its
  compressed size, entries whose sizes add up to far more than the file (a bomb split
  across many entries), or a total beyond what the caller allows (the free disk space) are
  refused before anything is extracted (zip bomb); extraction also stops at each entry's
  declared size and at the declared total, so a directory that lies gets no further;
- every WARC is checked against the ``bytes`` and hash ``datapackage.json`` lists for it
  while it is copied out. A WARC that differs, a listed file that is missing, a WARC that is
  not listed, an edited ``datapackage.json``: what the package says differs from what it
  holds is for :func:`archiver_app.export.signing.verify_wacz` to name (the importer reports
  its findings), not a reason to refuse the good records; WARCs not listed are not read.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import IO, Any

from archiver_app.errors import ArchiverError
from archiver_app.units import counted
from archiver_app.warc.listedtext import TextRef, TextSpill
from archiver_app.warc.listing import ListedPage, listed_pages
from archiver_app.warc.ziprecover import (
    LOCAL,
    CutShort,
    Rebuilt,
    Truncation,
    directory_fault,
    open_rebuilt,
    rebuild,
)

#: Largest accepted expansion ratio of one entry (real WACZ WARCs are stored, ratio ~1).
MAX_RATIO = 200
#: Entries smaller than this are never called bombs, whatever their ratio.
RATIO_FLOOR = 10 * 1024 * 1024
DEFAULT_MAX_TOTAL = 256 * 1024**3
#: Most entries a WACZ may have (a real one has a few WARCs, indexes and pages lists).
MAX_ENTRIES = 10_000
#: Largest accepted expansion of all entries together, as a multiple of the file's size...
MAX_TOTAL_RATIO = 50
#: ...once they add up to more than this (small files may be mostly deflated JSON).
TOTAL_RATIO_FLOOR = 64 * 1024 * 1024
CHUNK = 1024 * 1024


class WaczError(ArchiverError, ValueError):
    """The WACZ is unusable; the message says why (shown to the user per file)."""


@dataclass(frozen=True)
class WaczPage:
    url: str
    ts: str | None
    title: str | None
    text: TextRef | None = None  # where its listed text was set aside (warc.listedtext)
    # Archiver's own fields (others' tools ignore them): the page's tags, notes and the
    # slug of its collection in the library it was exported from.
    tags: tuple[str, ...] = ()
    notes: str | None = None
    collection: str | None = None
    id: str | None = None  # its id in the library it was exported from (a capture's uid)
    urn: str | None = None  # the identifier citations give it there (urn:archiver:LIB:UID)


#: Most tags a listed page may bring, and longest tag name and notes kept (a hostile list
#: must not fill the tags table or the memory).
MAX_PAGE_TAGS = 200
MAX_TAG_CHARS = 200
MAX_NOTES_CHARS = 1_000_000
#: Longest page id kept (longer ones are cut, and then no usable id: a uid has at most 40).
MAX_ID_CHARS = 41
#: Longest identifier kept (``urn:archiver:`` with a library id and a uid is under 120).
MAX_URN_CHARS = 200


def _own_fields(item: dict[str, Any]) -> dict[str, Any]:
    """A listed page's tags, notes, collection, id and identifier, as :class:`WaczPage` takes
    them (what is not of the expected type is no field)."""
    raw = item.get("tags")
    tags = (
        [" ".join(t.split())[:MAX_TAG_CHARS] for t in raw if isinstance(t, str)]
        if isinstance(raw, list)
        else []
    )
    notes, collection, uid = item.get("notes"), item.get("collection"), item.get("id")
    urn = item.get("urn")
    return {
        "id": uid[:MAX_ID_CHARS] if isinstance(uid, str) and uid else None,
        "urn": urn if isinstance(urn, str) and len(urn) <= MAX_URN_CHARS else None,
        "tags": tuple(dict.fromkeys(t for t in tags if t))[:MAX_PAGE_TAGS],
        "notes": notes[:MAX_NOTES_CHARS] if isinstance(notes, str) and notes else None,
        "collection": collection if isinstance(collection, str) and collection else None,
    }


@dataclass
class WaczInfo:
    """What a WACZ holds, after the structural checks (hashes are checked on extraction)."""

    path: Path
    warcs: list[str]  # entry names under archive/
    resources: dict[str, dict[str, Any]]  # datapackage resources by path
    datapackage: dict[str, Any]
    pages: list[WaczPage] = field(default_factory=list)
    total: int = 0  # declared uncompressed size of all entries
    extracted: int = 0  # bytes extracted so far (never more than ``total``)
    rebuilt: Rebuilt | None = None  # its zip directory was damaged: the one read instead
    # Its pages lists whose zip CRC-32 did not match their bytes, and how they stand.
    pages_checks: dict[str, PagesCheck] = field(default_factory=dict)


def _unsafe_name(name: str) -> bool:
    if "\\" in name or "\x00" in name or re.match(r"^[A-Za-z]:", name):
        return True
    pure = PurePosixPath(name)
    return pure.is_absolute() or any(part == ".." for part in pure.parts)


#: What reading a zip entry raises besides OSError: a damaged entry (bad CRC, bad deflate
#: data, cut short), a compression method zipfile does not know (NotImplementedError) or
#: an encrypted entry (RuntimeError).
_ENTRY_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError)


class UncheckedEntry:
    """An entry's bytes as stored, read without :mod:`zipfile`'s check against the CRC-32
    its directory gives: where a package lists the entry's hash, that hash is the check,
    and a CRC-32 that differs from bytes that are as listed is damage to the zip's
    bookkeeping (its directory, or the entry's own header), not to the content. The CRC-32
    of what was read is kept (:attr:`crc_matches`, once read through) to tell the two apart.
    """

    def __init__(self, zf: zipfile.ZipFile, name: str) -> None:
        self.zf, self.name = zf, name
        self.expected = zf.getinfo(name).CRC  # the entry zipfile opens by that name
        self.crc = 0

    def chunks(self, size: int = CHUNK) -> Iterator[bytes]:
        with self.zf.open(self.name) as src:
            src._expected_crc = None  # type: ignore[attr-defined]  # CPython's ZipExtFile
            while chunk := src.read(size):
                self.crc = zlib.crc32(chunk, self.crc)
                yield chunk

    @property
    def crc_matches(self) -> bool:
        return self.crc == self.expected

    @property
    def crc_error(self) -> str:
        """What :mod:`zipfile` says of bytes that do not match their CRC-32."""
        return f"Bad CRC-32 for file {self.name!r}"


def _entry_error(exc: BaseException) -> WaczError:
    if isinstance(exc, NotImplementedError):
        return WaczError(f"an entry uses a compression method that cannot be read ({exc})")
    if isinstance(exc, RecursionError):
        return WaczError("a JSON file in it nests too deeply to read")
    if isinstance(exc, RuntimeError):  # "File 'x' is encrypted, password required..."
        return WaczError(f"an entry cannot be read: {exc}")
    return WaczError(f"a damaged entry: {exc}")


def open_wacz(
    path: Path, *, max_total: int = DEFAULT_MAX_TOTAL, texts: TextSpill | None = None
) -> WaczInfo:
    """Check ``path`` and read its datapackage and pages list (nothing is extracted); the
    pages' texts go to ``texts`` when given.

    Raises:
        WaczError: not a zip, unsafe entry names, a zip bomb, no datapackage, bad JSON,
            an entry that cannot be read (damaged, encrypted, unknown compression).
    """
    try:
        zf, rebuilt, _damage = open_zip(path)
    except OSError as exc:
        raise WaczError(f"cannot read it: {exc.strerror}") from exc
    except _ENTRY_ERRORS as exc:
        raise _entry_error(exc) from exc
    try:
        cut = rebuilt.truncation if rebuilt is not None else None
        info = _check_wacz(path, zf, max_total, texts, cut.name if cut else None)
    except _ENTRY_ERRORS as exc:
        raise _entry_error(exc) from exc
    finally:
        zf.close()
    info.rebuilt = rebuilt
    return info


def open_zip(
    path: Path,
) -> tuple[zipfile.ZipFile, Rebuilt | None, zipfile.BadZipFile | None]:
    """``path`` opened as a zip: by its central directory, or, where that is missing or
    damaged, by its entries' own headers (then with what was rebuilt and why).

    A directory :mod:`zipfile` reads can still be damaged: garbled bytes in it gave one
    entry named ``archive/data.warc.gzPK...`` of 4 GiB, read as a zip bomb; a flipped bit
    in its end record moved every entry's offset (one before the file's start: "Invalid
    argument"). One whose entries do not each point at a local header of their name
    counts as damaged (:func:`~archiver_app.warc.ziprecover.directory_fault`).

    Raises:
        WaczError: as :func:`open_damaged_zip`.
        OSError: it cannot be read.
    """
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        return (*open_damaged_zip(path, exc), exc)
    try:
        with path.open("rb") as fh:
            fault = directory_fault(fh, zf.infolist())
    except BaseException:
        zf.close()
        raise
    if fault is None:
        return zf, None, None
    zf.close()
    garbled = zipfile.BadZipFile(fault)
    return (*open_damaged_zip(path, garbled), garbled)


def open_damaged_zip(path: Path, exc: zipfile.BadZipFile) -> tuple[zipfile.ZipFile, Rebuilt]:
    """``path``, which :mod:`zipfile` could not open (``exc``), with its entries read from
    their local headers (:mod:`archiver_app.warc.ziprecover`) when it starts as a zip.

    Raises:
        WaczError: it is cut short, not a zip, or no entry in it reads.
        OSError: it cannot be read.
    """
    with path.open("rb") as fh:
        if fh.read(4) != LOCAL:
            raise WaczError(f"not a zip file ({exc})") from exc
    try:
        rebuilt = rebuild(path, max_entries=MAX_ENTRIES, keep_cut=_part_of_use)
    except CutShort:
        raise WaczError(
            "the file looks cut short: it starts as a zip file but its end (the zip's "
            "central directory, which lists its entries) is missing; copy or download "
            "it again"
        ) from exc
    if not rebuilt.entries:
        raise WaczError(
            "the zip is damaged: its central directory (the list of its entries, at the "
            f"end of the file) cannot be read ({exc}), and no entry could be read from the "
            "file itself; copy or download it again"
        ) from exc
    return open_rebuilt(path, rebuilt), rebuilt


#: Entries of which a part is of no use: JSON cut short does not read.
_WHOLE_ONLY = frozenset({"datapackage.json", "datapackage-digest.json"})


def _part_of_use(name: str) -> bool:
    """Is the part of entry ``name`` a file cut short left of use (a WARC's whole records,
    a pages list's whole lines)?"""
    return name not in _WHOLE_ONLY


def damage_lines(path: Path, exc: zipfile.BadZipFile, rebuilt: Rebuilt) -> list[str]:
    """What :func:`open_damaged_zip` found, in words."""
    if rebuilt.truncation is not None:
        return [_cut_line(path, rebuilt, rebuilt.truncation)]
    said = "" if str(exc) == "File is not a zip file" else f" ({exc})"  # says nothing more
    entries = counted(rebuilt.entries, "entry", "entries")
    lines = [
        f"{path.name}: the zip's central directory (the list of its entries, at the end of "
        f"the file) is damaged or missing{said}; its {entries} were read from their own "
        "headers instead"
    ]
    lines += [
        f"{path.name}: {size} bytes at offset {at} are no zip entry (damaged): skipped"
        for at, size in rebuilt.gaps
    ]
    return lines


def _cut_line(path: Path, rebuilt: Rebuilt, cut: Truncation) -> str:
    """What was kept of a zip cut short, and what was lost."""
    whole = rebuilt.whole_entries
    start = (
        f"{path.name}: the file is cut short (it ends without the zip's central directory, "
        "which lists its entries)"
    )
    kept = f"its {counted(whole, 'entry', 'entries')} before the cut were read whole"
    lost = "whatever came after in the zip is lost"
    if cut.name is None:
        tail = counted(cut.lost, "byte")
        return f"{start}: {kept}; its last {tail} (the start of an entry), and {lost}"
    if cut.dropped:
        return f"{start}: {kept}; it ends inside {cut.name!r} (unreadable cut short), and {lost}"
    of = f" of {cut.size:,}" if cut.size is not None else ""
    how = "decompressed as far as they go" if cut.method == zipfile.ZIP_DEFLATED else "read"
    told = f"{kept}; " if whole else ""
    return (
        f"{start}: it ends inside {cut.name!r}, whose first {counted(cut.kept, 'byte')}{of} "
        f"are there and were {how}; {told}{lost}"
    )


def _check_wacz(
    path: Path, zf: zipfile.ZipFile, max_total: int, texts: TextSpill | None, cut: str | None
) -> WaczInfo:
    """``cut``: the entry the file ends inside (the part there is kept), if any."""
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_ENTRIES:
            raise WaczError(
                f"it has {len(infos)} entries, more than the {MAX_ENTRIES} a WACZ may have: "
                "refusing a likely zip bomb"
            )
        unsafe = [i.filename for i in infos if _unsafe_name(i.filename)]
        if unsafe:
            raise WaczError(
                f"unsafe entry name {unsafe[0]!r} (absolute or with '..'): refusing the "
                "whole file (zip slip)"
            )
        total = 0
        for info in infos:
            total += info.file_size
            if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(
                info.compress_size, 1
            ):
                raise WaczError(
                    f"entry {info.filename!r} would expand from {info.compress_size} to "
                    f"{info.file_size} bytes: refusing a likely zip bomb"
                )
        size = path.stat().st_size
        if total > TOTAL_RATIO_FLOOR and total > MAX_TOTAL_RATIO * size:
            raise WaczError(
                f"its {len(infos)} entries would expand from {size} to {total} bytes in all: "
                "refusing a likely zip bomb"
            )
        if total > max_total:
            raise WaczError(
                f"its entries would expand to {total} bytes, more than the {max_total} allowed"
            )
        names = {i.filename for i in infos}
        datapackage: Any = {"resources": []}
        if "datapackage.json" in names:
            try:
                datapackage = _load_json(zf, "datapackage.json", limit=64 * 1024 * 1024)
            except _ENTRY_ERRORS:  # damaged bytes: as if lost (verify_wacz says which)
                names.discard("datapackage.json")
        # lost from a WACZ: its WARCs are still read, unchecked (verify_wacz says so)
        if not isinstance(datapackage, dict) or not isinstance(datapackage.get("resources"), list):
            raise WaczError("datapackage.json has no resources list")
        resources: dict[str, dict[str, Any]] = {}
        for res in datapackage["resources"]:
            if not isinstance(res, dict) or not isinstance(res.get("path"), str):
                raise WaczError("datapackage.json lists a resource without a path")
            if _unsafe_name(res["path"]):
                raise WaczError(f"datapackage.json lists an unsafe path {res['path']!r}")
            if res["path"] in names:  # a missing one is a finding of verify_wacz
                resources[res["path"]] = res
        present = sorted(
            n
            for n in names
            if n.startswith("archive/") and n.endswith((".warc", ".warc.gz", ".arc", ".arc.gz"))
        )
        if not present:
            missing = "" if "datapackage.json" in names else "no datapackage.json, "
            raise WaczError(f"{missing}no WARC files under archive/: not a WACZ")
        warcs = [w for w in present if w in resources] if resources else present
        if not warcs:
            raise WaczError(f"{present[0]} is not listed (with a hash) in datapackage.json")
        pages: list[WaczPage] = []
        checks: dict[str, PagesCheck] = {}
        try:
            for name in ("pages/pages.jsonl", "pages/extraPages.jsonl"):
                if name in names:
                    read, checks[name] = _read_listed_pages(zf, name, resources.get(name), texts)
                    if name == cut:  # its whole lines are there, the rest is lost
                        checks[name] = PagesCheck.CUT
                    pages.extend(read)
        except _ENTRY_ERRORS:  # a damaged list: the records say which are pages
            pages, checks = [], {}
    doubts: dict[str, PagesCheck] = {n: c for n, c in checks.items() if c is not PagesCheck.INTACT}
    return WaczInfo(path, warcs, resources, datapackage, pages, total=total, pages_checks=doubts)


class PagesCheck(StrEnum):
    """How a pages list's bytes stand against the zip's CRC-32 of them and the hash
    ``datapackage.json`` lists for them."""

    INTACT = "intact"  # its CRC-32 matches
    VOUCHED = "vouched"  # its CRC-32 does not, but the listed hash does: the zip is damaged
    UNCHECKED = "unchecked"  # its CRC-32 does not, and no hash is listed to check it by
    DIFFERS = "differs"  # neither matches: its bytes are not as listed
    CUT = "cut"  # the file ends inside it: the lines there are read, the rest is lost


class _Tallied:
    """An entry's stream whose lines are hashed (CRC-32 and the listed algorithm) as they
    are read."""

    def __init__(self, src: IO[bytes], algo: str) -> None:
        self.src, self.crc, self.digest = src, 0, hashlib.new(algo)

    def readline(self, limit: int = -1) -> bytes:
        line = self.src.readline(limit)
        self.crc = zlib.crc32(line, self.crc)
        self.digest.update(line)
        return line


def _read_listed_pages(
    zf: zipfile.ZipFile, name: str, resource: dict[str, Any] | None, texts: TextSpill | None
) -> tuple[list[WaczPage], PagesCheck]:
    """A pages list's pages, read without :mod:`zipfile`'s CRC-32 check (a damaged checksum
    of an intact list lost its titles, tags and notes), and how its bytes stand: by the hash
    ``datapackage.json`` lists for it when its CRC-32 does not match."""
    algo, _, want = str((resource or {}).get("hash", "")).partition(":")
    if algo not in {"sha256", "sha1", "md5"} or not want:
        algo, want = "sha256", ""
    expected = zf.getinfo(name).CRC
    with zf.open(name) as src:
        src._expected_crc = None  # type: ignore[attr-defined]  # CPython's ZipExtFile
        tallied = _Tallied(src, algo)
        pages = list(read_pages(tallied, texts))  # type: ignore[arg-type]  # readline only
        while tallied.readline(CHUNK):  # the rest (read_pages reads to the end)
            pass
    if tallied.crc == expected:
        return pages, PagesCheck.INTACT
    if not want:
        return pages, PagesCheck.UNCHECKED
    if tallied.digest.hexdigest() == want.lower():
        return pages, PagesCheck.VOUCHED
    return pages, PagesCheck.DIFFERS


def _load_json(zf: zipfile.ZipFile, name: str, *, limit: int) -> Any:
    with zf.open(name) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise WaczError(f"{name} is implausibly large")
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WaczError(f"{name} is not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise WaczError(f"{name} nests too deeply to read") from exc


#: Longest ``pages.jsonl`` line read (lines may carry a page's whole text); a longer one
#: is skipped unread, so a hostile WACZ cannot make one line fill the memory.
MAX_PAGE_LINE = 64 * 1024 * 1024


def _bounded_lines(fh: IO[bytes], limit: int) -> Iterator[bytes]:
    """``fh``'s lines, each at most ``limit`` bytes; longer lines are skipped whole."""
    while line := fh.readline(limit + 1):
        if len(line) <= limit:
            yield line
            continue
        while line and not line.endswith(b"\n"):  # the rest of the long line, piecewise
            line = fh.readline(CHUNK)


def read_pages(fh: IO[bytes], texts: TextSpill | None = None) -> Iterator[WaczPage]:
    """The pages of a ``pages.jsonl`` (a WACZ's, or a folder export's); bad lines skipped.
    Each page's ``"text"`` goes to ``texts`` when given."""
    for raw in _bounded_lines(fh, MAX_PAGE_LINE):
        try:
            item = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            continue  # a bad line is no page (nested too deeply: no page either)
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            title = item.get("title")
            ts = item.get("ts")
            yield WaczPage(
                item["url"],
                ts if isinstance(ts, str) else None,
                title if isinstance(title, str) else None,
                texts.add(item.get("text")) if texts is not None else None,
                **_own_fields(item),
            )


def page_list(
    pages: list[WaczPage],
) -> tuple[frozenset[str] | None, tuple[tuple[str, int], ...], tuple[ListedPage, ...]]:
    """A pages list as the indexer takes it: the URLs (None: no list, the records decide),
    those listed more than once, and the time and title of each listing that gives them
    (:mod:`archiver_app.warc.listing`)."""
    if not pages:
        return None, (), ()
    counts = Counter(p.url for p in pages)
    details = listed_pages([(p.url, p.ts, p.title, p.text) for p in pages])
    return frozenset(counts), tuple((u, n) for u, n in counts.items() if n > 1), details


def extract_verified(
    info: WaczInfo, entry: str, dest: IO[bytes], *, known_changed: bool = False
) -> int:
    """Copy ``entry`` into ``dest``, checking its listed size and sha256 hash.

    ``known_changed``: the entry is known to differ from datapackage.json (the caller
    reports it): copy it anyway, still bounded by the zip directory's declared total.

    Raises:
        WaczError: the bytes or the hash differ from datapackage.json, or the entry cannot
            be read (damaged, encrypted, unknown compression); ``dest`` then holds
            partial data the caller must discard.
    """
    try:
        return _extract_verified(info, entry, dest, known_changed)
    except _ENTRY_ERRORS as exc:
        raise _entry_error(exc) from exc


def _extract_verified(info: WaczInfo, entry: str, dest: IO[bytes], known_changed: bool) -> int:
    known_changed = known_changed or entry not in info.resources  # no datapackage.json
    res = {} if known_changed else info.resources[entry]
    expected = str(res.get("hash", ""))
    algo, _, want = expected.partition(":")
    if not want:
        algo, want = "sha256", expected
    if known_changed:
        algo, want = "sha256", "-"
    elif algo not in {"sha256", "sha1", "md5"} or not want:
        raise WaczError(f"datapackage.json gives no usable hash for {entry}")
    h = hashlib.new(algo)
    size = 0
    limit = res.get("bytes")
    rebuilt = info.rebuilt
    opened = zipfile.ZipFile(info.path) if rebuilt is None else open_rebuilt(info.path, rebuilt)
    # Not by the zip's CRC-32: the listed hash is the check (a CRC-32 damaged in the zip's
    # directory refused bytes that are as signed), and bytes known to differ (reported)
    # are read whole: the scan keeps every record that still reads.
    with opened as zf:
        for chunk in UncheckedEntry(zf, entry).chunks():
            size += len(chunk)
            info.extracted += len(chunk)
            if info.extracted > info.total:
                raise WaczError(
                    f"{entry} expands beyond the {info.total} bytes its zip directory declares "
                    "for all entries: refusing a likely zip bomb"
                )
            if isinstance(limit, int) and size > limit:
                raise WaczError(f"{entry} is larger than the {limit} bytes datapackage.json says")
            h.update(chunk)
            dest.write(chunk)
    if isinstance(limit, int) and size != limit:
        raise WaczError(f"{entry} has {size} bytes, datapackage.json says {limit}")
    if not known_changed and h.hexdigest() != want.lower():
        raise WaczError(f"{entry} does not match its {algo} hash in datapackage.json")
    return size


__all__ = [
    "PagesCheck",
    "UncheckedEntry",
    "WaczError",
    "WaczInfo",
    "WaczPage",
    "damage_lines",
    "extract_verified",
    "open_damaged_zip",
    "open_wacz",
    "open_zip",
]
