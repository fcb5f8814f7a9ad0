"""Is this WACZ the very file cited? Its SHA-256 against a digest the reader gives.

What an export holds is checked by its ``datapackage.json`` and signature
(:func:`~archiver_app.export.signing.verify_wacz`); a byte changed where neither looks (a
zip header, the directory's end record) leaves a copy whose content is as signed but
whose bytes are not those of the release ``archiver cite`` quotes by its SHA-256. So the
file's own SHA-256 is always taken (:func:`file_sha256`), and compared with the digest a
reader has from a citation (``verify-export --sha256``: :func:`compare_digest`).
"""

from __future__ import annotations

import hashlib
import re
import zipfile
import zlib
from collections.abc import Callable
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


__all__ = ["compare_digest", "file_sha256", "package_hash_of", "parse_sha256"]
