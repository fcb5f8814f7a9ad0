"""Is this WACZ the very file cited? Its SHA-256 against a citation's, and against the
releases a library has on record.

What an export holds is checked by its ``datapackage.json`` and signature
(:func:`~archiver_app.export.signing.verify_wacz`); a byte changed where neither looks (a
zip header, the directory's end record) leaves a copy whose content is as signed but
whose bytes are not those of the release ``archiver cite`` quotes by its SHA-256. So the
file's own SHA-256 is always taken (:func:`file_sha256`), and compared with the digest a
reader has from a citation (``verify-export --sha256``: :func:`compare_digest`) and, run
with a library, with the editions' releases it recorded (:func:`compare_releases`): a file
of a release's SHA-256 is named as that release; one of a release's content (its
``datapackage.json``) but other bytes is said to be not byte-identical to it.
"""

from __future__ import annotations

import hashlib
import re
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from archiver_app.errors import InputError

if TYPE_CHECKING:
    from archiver_app.export.verify_report import VerifyReport

_CHUNK = 1024 * 1024
#: Largest datapackage.json :func:`package_hash_of` reads (one lists every file once).
_MAX_PACKAGE = 64 * 1024 * 1024


def parse_sha256(text: str) -> str:
    """The SHA-256 ``text`` gives (64 hexadecimal digits; spaces, case and a ``sha256:``
    prefix do not matter), in lower case.

    Raises:
        InputError: ``text`` is not a whole SHA-256 (a shortened one, another hash).
    """
    bare = "".join(text.split()).lower().removeprefix("sha256:")
    if not re.fullmatch(r"[0-9a-f]{64}", bare):
        raise InputError(
            f"{text!r} is not a SHA-256 digest: one is 64 hexadecimal digits, as `archiver "
            "cite` and `archiver edition export` print it"
        )
    return bare


def file_sha256(path: Path, chunk: Callable[[str, int], None]) -> str:
    """The SHA-256 of the file at ``path``; ``chunk(name, size)`` after each chunk read
    (progress, and a cancel between chunks).

    Raises:
        InputError: it cannot be read.
    """
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            while data := fh.read(_CHUNK):
                digest.update(data)
                chunk(path.name, len(data))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return digest.hexdigest()


def package_hash_of(path: Path) -> str | None:
    """``"sha256:…"`` of the ``datapackage.json`` in the WACZ at ``path``, as its digest
    file gives it; None when it has none that reads. Every copy of one export has the same,
    whatever else of its bytes differs."""
    try:
        with zipfile.ZipFile(path) as zf:
            if zf.getinfo("datapackage.json").file_size > _MAX_PACKAGE:
                return None
            data = zf.read("datapackage.json")
    except (OSError, KeyError, EOFError, RuntimeError, NotImplementedError,
            zipfile.BadZipFile, zlib.error):  # fmt: skip  # gone, not a zip, damaged
        return None
    return "sha256:" + hashlib.sha256(data).hexdigest()


def compare_digest(report: VerifyReport, asked: str) -> None:
    """``report``'s file against the SHA-256 the reader gave: another is a finding."""
    from archiver_app.export.verify_report import Difference

    report.asked_sha256 = asked
    if report.sha256 != asked:
        text = f"NOT {asked}, the digest asked for: it is not that file, byte for byte"
        report.add(Difference.DIGEST, "", text)


@dataclass(frozen=True)
class KnownRelease:
    """An edition's release a library recorded: its WACZ as written, its SHA-256 now, the
    hash of its ``datapackage.json`` (None: not known), and whether ``archiver cite``
    quotes it (else ``why`` not)."""

    edition: str
    path: str
    sha256: str
    package_hash: str | None
    signed: bool
    released_at: datetime | None
    cited: bool
    why: str | None = None

    def describe(self) -> str:
        """'the signed release of edition E written … as F.wacz, the one `archiver cite E`
        quotes' (or 'a … release …, not the one cited: WHY')."""
        when = f" {self.released_at:%Y-%m-%d %H:%M} UTC" if self.released_at else ""
        name = self.path.replace("\\", "/").rsplit("/", 1)[-1]
        signed = "signed" if self.signed else "unsigned"
        said = f"{signed} release of edition {self.edition} written{when} as {name}"
        if self.cited:
            return f"the {said}, the one `archiver cite {self.edition}` quotes"
        a = "a" if self.signed else "an"
        return f"{a} {said}, not the one cited ({self.why or 'another is'})"


@dataclass(frozen=True)
class ReleasesOnRecord:
    """The releases of library ``library`` (its folder, as said), newest first."""

    library: str
    releases: tuple[KnownRelease, ...]


def compare_releases(report: VerifyReport, on_record: ReleasesOnRecord) -> None:
    """``report``'s file against the releases on record: the release it is (said), or the
    one whose content it holds in other bytes (a finding), or none (said)."""
    from archiver_app.export.verify_report import Difference

    same = [k for k in on_record.releases if k.sha256 == report.sha256]
    if same:
        report.release_lines += [f"this is the file of {k.describe()}" for k in same]
        return
    copies = [k for k in on_record.releases
              if k.package_hash is not None and k.package_hash == report.package_hash]  # fmt: skip
    if not copies:
        report.release_lines.append(
            f"no release on record in library {on_record.library} has this SHA-256 or this content"
        )
        return
    k = next((k for k in copies if k.cited), copies[0])
    which = "the release cited" if k.cited else f"a release of edition {k.edition}"
    if report.as_signed and report.files_checked == report.files_listed and not report.damaged:
        text = f"its contents are intact but the file is not byte-identical to {which}"
    else:
        text = f"it holds the datapackage.json of {which}, but is not byte-identical to it"
    report.add(Difference.NOT_RELEASE, "", f"{text} (SHA-256 {k.sha256}): {k.describe()}")


__all__ = [
    "KnownRelease",
    "ReleasesOnRecord",
    "compare_digest",
    "compare_releases",
    "file_sha256",
    "package_hash_of",
    "parse_sha256",
]
