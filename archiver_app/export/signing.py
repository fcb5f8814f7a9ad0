"""Signed WACZ exports and their verification (the WACZ Signing and Verification spec).

Signing is the spec's *anonymous* form, as ArchiveWeb.page writes it and ReplayWeb.page
checks it: ``datapackage-digest.json`` carries ``signedData`` with the datapackage's hash,
an ECDSA P-384 signature (SHA-256, raw ``r||s``, base64) over that hash string, the public
key (SPKI, base64), the time and the software. The key pair is made on first use and kept
in the user's configuration folder (``signing-key.pem``, readable by the user only); the
public key is what a reader compares with the one the researcher published.

:func:`verify_wacz` checks everything a reader can: the datapackage's hash, each listed
file's size and hash, files present but not listed, and the signature. Each difference is
a :class:`Finding` with a :class:`Difference` code (:mod:`.verify_report`, which also says
the report in words), so a tampered export says what was changed (the importer reports the
same findings). A timestamp (:mod:`.timestamps`) is
checked when the signature is valid.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from archiver_app import __version__
from archiver_app.durable import atomic_write
from archiver_app.errors import ArchiverError, InputError
from archiver_app.export.identity import (
    ReleasesOnRecord,
    compare_digest,
    compare_releases,
    file_sha256,
    parse_sha256,
)
from archiver_app.export.timestamps import (
    DIGEST_NAME,
    StampOutcome,
    TimestampState,
    check_timestamp,
    request_timestamp,
    stamped_message,
    with_token,
)
from archiver_app.export.verify_report import (
    Cut,
    Difference,
    Finding,
    VerifyReport,
    fingerprint,
    parse_fingerprint,
    signature_line,
)
from archiver_app.paths import config_dir
from archiver_app.tasks import CancelToken, Progress, ProgressUpdate, null_progress
from archiver_app.warc.wacz import UncheckedEntry, WaczError, damage_lines, open_zip
from archiver_app.warc.zipheaders import header_mismatches

KEY_NAME = "signing-key.pem"
CURVE = ec.SECP384R1()
_HALF = 48  # bytes of r (and of s) on P-384
_HASHES = {"sha256", "sha1", "md5"}  # what a datapackage may list (as warc.wacz reads)
_UNREADABLE = (OSError, EOFError, RuntimeError, NotImplementedError, zipfile.BadZipFile, zlib.error)


class SigningKeyError(ArchiverError):
    """The signing key is missing or unreadable."""


def key_path(folder: Path | None = None) -> Path:
    return (folder or config_dir()) / KEY_NAME


def load_or_create_key(folder: Path | None = None) -> ec.EllipticCurvePrivateKey:
    """The user's signing key, made (readable by the user only) when there is none."""
    path = key_path(folder)
    if path.exists():
        try:
            key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        except (OSError, ValueError, TypeError) as exc:
            raise SigningKeyError(
                f"cannot read the signing key {path}: {exc}",
                details="Move it away to make a new key (exports signed with the old key "
                "then show a different public key).",
            ) from exc
        if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != CURVE.name:
            raise SigningKeyError(f"{path} is not an ECDSA P-384 key")
        return key
    key = ec.generate_private_key(CURVE)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )

    def write(fh: Any) -> None:
        os.fchmod(fh.fileno(), 0o600)  # before a byte of the key is written
        fh.write(pem)

    atomic_write(path, write, make_parent=True)
    return key


def public_key_b64(key: ec.EllipticCurvePrivateKey) -> str:
    spki = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(spki).decode("ascii")


@dataclass
class Signing:
    """How to sign an export: with the user's key (from ``key_folder``, default the
    configuration folder) and, with ``timestamp`` (an authority's URL), a trusted timestamp
    of the signature. ``stamp`` is the timestamp request's outcome once the export is signed.
    """

    timestamp: str | None = None
    key_folder: Path | None = None
    stamp: StampOutcome | None = None


def package_digest(package_bytes: bytes, *, sign: bool | Signing = False) -> dict[str, Any]:
    """The ``datapackage-digest.json`` object of an export; signed with the user's key
    (:func:`load_or_create_key`) when ``sign``, and timestamped when ``sign`` names an
    authority (the outcome, stamped or not, is left in ``sign.stamp``)."""
    if not sign:
        return {"path": "datapackage.json", "hash": _package_hash(package_bytes)}
    how = sign if isinstance(sign, Signing) else Signing()
    digest = signed_digest(package_bytes, load_or_create_key(how.key_folder))
    if how.timestamp:
        how.stamp = request_timestamp(stamped_message(digest["signedData"]), how.timestamp)
        if how.stamp.token is not None:
            digest = with_token(digest, how.stamp.token)
    return digest


def _package_hash(package_bytes: bytes) -> str:
    return "sha256:" + hashlib.sha256(package_bytes).hexdigest()


def signed_digest(package_bytes: bytes, key: ec.EllipticCurvePrivateKey) -> dict[str, Any]:
    """The ``datapackage-digest.json`` object of a signed export. Its ``created`` is the
    package's own (validators require the two to be equal; a clock read here could fall
    in the next second)."""
    package_hash = _package_hash(package_bytes)
    try:
        created = json.loads(package_bytes).get("created")
    except (ValueError, AttributeError):
        created = None
    if not isinstance(created, str):
        created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    der = key.sign(package_hash.encode("utf-8"), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    raw = r.to_bytes(_HALF, "big") + s.to_bytes(_HALF, "big")
    return {
        "path": "datapackage.json",
        "hash": package_hash,
        "signedData": {
            "hash": package_hash,
            "signature": base64.b64encode(raw).decode("ascii"),
            "publicKey": public_key_b64(key),
            "created": created,
            "software": f"Archiver {__version__}",
        },
    }


# ---------------------------------------------------------------------- verification
# (what it finds, and the lines it is said in: verify_report.py)


def verify_wacz(
    path: Path,
    *,
    tsa_roots: list[x509.Certificate] | None = None,
    key: str | None = None,
    sha256: str | None = None,
    releases: ReleasesOnRecord | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> VerifyReport:
    """Check a WACZ's hashes, signature and timestamp; every difference is a finding (a
    file cut short or that is not a zip: :attr:`Difference.DAMAGED`). ``progress``: bytes
    hashed of the listed files' bytes and of the file; ``cancel``: raises ``Cancelled``
    between chunks. The file's own SHA-256 is :attr:`VerifyReport.sha256`.

    ``tsa_roots``: the certificates a timestamp's authority must chain up to; without them a
    timestamp is checked against the signature only (``TimestampState.UNCHECKED``). With
    them an export that has no timestamp is not intact (:attr:`Difference.TIMESTAMP_MISSING`).
    ``key``: a key's :func:`fingerprint`; an export not signed by it is not intact.
    ``sha256``: the digest of the file meant (a citation's): a file of another SHA-256 is
    not intact as a file (:attr:`Difference.DIGEST`). ``releases``: a library's releases on
    record: the one this file is is named; one whose content it holds in other bytes is a
    finding (:attr:`Difference.NOT_RELEASE`).

    Raises:
        InputError: ``path`` is not there, cannot be read, or is a folder; ``key`` is not
            a whole fingerprint, ``sha256`` not a whole SHA-256.
    """
    key = parse_fingerprint(key) if key is not None else None  # before any file is read
    asked = parse_sha256(sha256) if sha256 is not None else None
    report = VerifyReport(path)
    if path.is_dir():
        raise InputError(
            f"{path} is a folder, not a WACZ: a folder export (--format folder) holds no "
            "hashes or signature to check. Give a .wacz file, or export again as one others "
            "can verify: archiver export --sign -o NAME.wacz"
        )
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    hashing = _Hashing(progress, cancel, size)
    _check_wacz(path, report, hashing, tsa_roots, key)
    report.sha256 = file_sha256(path, hashing.chunk)
    if asked is not None:
        compare_digest(report, asked)
    if releases is not None:
        compare_releases(report, releases)
    return report


def _check_wacz(
    path: Path,
    report: VerifyReport,
    hashing: _Hashing,
    tsa_roots: list[x509.Certificate] | None,
    key: str | None,
) -> None:
    """What :func:`verify_wacz` checks inside the zip, into ``report``."""
    try:
        zf, rebuilt, damage = open_zip(path)  # a damaged directory: entries from their headers
        if rebuilt is not None and damage is not None:
            for line in damage_lines(path, damage, rebuilt):
                report.add(Difference.ZIP_DAMAGED, "", line)
            if (cut := rebuilt.truncation) is not None:
                report.cut = Cut(cut.name, rebuilt.whole_entries)
    except (WaczError, zipfile.BadZipFile) as exc:
        report.add(Difference.DAMAGED, "", f"{path.name}: {exc}")
        return
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    with zf:
        entries = Counter(zf.namelist())
        names = set(entries)
        for name in sorted(n for n, times in entries.items() if times > 1):
            text = f"{name} is in the zip {entries[name]} times (readers may take either)"
            report.add(Difference.DUPLICATE, name, text)
        for needed in ("datapackage.json", DIGEST_NAME):
            if needed not in names:
                report.add(Difference.PACKAGE_MISSING, needed, f"{needed} is missing")
        read = _read_package(zf, names, report)
        if read is None:
            return
        package_bytes, package, digest = read
        actual = report.package_hash = _package_hash(package_bytes)
        if digest and digest.get("hash") != actual:
            text = "datapackage.json was changed (its hash differs)"
            report.add(Difference.PACKAGE_CHANGED, "datapackage.json", text)
        hashing.listed(zf, package)
        _check_resources(zf, names, package, report, hashing)
        if rebuilt is None:  # a directory rebuilt from the local headers agrees with them
            _check_headers(path, zf, report)
        _check_signature(digest.get("signedData"), actual, package, report)
        if key is not None:
            report.required_key = key
            _check_key(key, report)
        if report.signature_valid:
            report.timestamp = check_timestamp(digest["signedData"], tsa_roots)
            if report.timestamp.state is TimestampState.INVALID:
                report.add(Difference.TIMESTAMP_INVALID, "", report.timestamp.message)
        if tsa_roots and report.timestamp.state is TimestampState.NONE:
            if not report.signed:
                text = "the export is not signed, so it has no timestamp to check"
                report.add(Difference.TIMESTAMP_MISSING, "", text)
            elif report.signature_valid:  # an invalid signature's stamp is not looked at
                report.add(Difference.TIMESTAMP_MISSING, "", "the export is not timestamped")


def _read_package(
    zf: zipfile.ZipFile, names: set[str], report: VerifyReport
) -> tuple[bytes, dict[str, Any], dict[str, Any]] | None:
    """``datapackage.json`` (its bytes and its object) and the digest's object (``{}``
    without one: the files are still checked against the package); None, with the
    findings, when the package cannot be read."""
    if "datapackage.json" not in names:
        return None
    digest_file = _PackageFile(zf, DIGEST_NAME) if DIGEST_NAME in names else None
    digest_bytes = digest_file.read(report) if digest_file is not None else None
    package_bytes = _PackageFile(zf, "datapackage.json").read(report, vouched=digest_bytes)
    if package_bytes is None:
        return None
    try:
        digest = json.loads(digest_bytes) if digest_bytes is not None else {}
        package = json.loads(package_bytes)
        if not isinstance(digest, dict) or not isinstance(package, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        text = f"the package files are not valid JSON: {exc}"
        report.add(Difference.PACKAGE_UNREADABLE, "datapackage.json", text)
        return None
    return package_bytes, package, digest


class _PackageFile:
    """``datapackage.json`` or its digest, read whole (they are small) without the zip's
    CRC-32 check (:class:`~archiver_app.warc.wacz.UncheckedEntry`)."""

    def __init__(self, zf: zipfile.ZipFile, name: str) -> None:
        self.name, self.entry = name, UncheckedEntry(zf, name)

    def read(self, report: VerifyReport, *, vouched: bytes | None = None) -> bytes | None:
        """Its bytes, or None with the finding that they cannot be read (damaged on disk:
        a bad CRC, deflated data that does not inflate). Bytes that fail their CRC-32 are
        still taken where ``vouched`` (the digest's bytes) holds their hash: then the zip's
        record of them is damaged, not they."""
        try:
            data = b"".join(self.entry.chunks())
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as e:
            self._unreadable(report, str(e))
            return None
        if self.entry.crc_matches:
            return data
        if vouched is not None and _hash_in(vouched) == _package_hash(data):
            report.add(
                Difference.ZIP_DAMAGED, self.name, _crc_damage(report, self.name, DIGEST_NAME)
            )
            return data
        self._unreadable(report, self.entry.crc_error)
        return None

    def _unreadable(self, report: VerifyReport, why: str) -> None:
        text = f"{self.name} cannot be read ({why})" + (
            ": its signature cannot be checked"
            if self.name == DIGEST_NAME
            else ": nothing in the export can be checked against it"
        )
        report.add(Difference.PACKAGE_UNREADABLE, self.name, text)


def _hash_in(digest_bytes: bytes) -> object:
    """The package hash a digest file's bytes give (None: they give none)."""
    try:
        digest = json.loads(digest_bytes)
    except ValueError:
        return None
    return digest.get("hash") if isinstance(digest, dict) else None


def _crc_damage(report: VerifyReport, name: str, lister: str) -> str:
    """A CRC-32 in the zip that is not that of ``name``'s bytes, which are as ``lister``
    gives their hash: the zip's bookkeeping is damaged, not the content."""
    rebuilt = any(f.kind is Difference.ZIP_DAMAGED and not f.name for f in report.findings)
    where = (
        f"the local header of {name} is damaged: the checksum (CRC-32) it gives"
        if rebuilt  # the directory was rebuilt from the entries' own headers
        else "the zip's central directory is damaged: the checksum (CRC-32) it gives for " + name
    )
    return (
        f"{report.path.name}: {where} is not that of the entry's bytes, which are as "
        f"{lister} lists them (their hash matches)"
    )


class _Hashing:
    """Progress over the bytes hashed: the listed files' (once the package lists them),
    then the whole file's (``size``); one update a chunk."""

    def __init__(self, progress: Progress, cancel: CancelToken | None, size: int) -> None:
        self.total, self.done, self.progress, self.cancel = size, 0, progress, cancel

    def listed(self, zf: zipfile.ZipFile, package: dict[str, Any]) -> None:
        resources = package.get("resources")
        listed = {
            str(r.get("path", "")) for r in (resources if isinstance(resources, list) else [])
            if isinstance(r, dict)
        }  # fmt: skip
        self.total += sum(i.file_size for i in zf.infolist() if i.filename in listed)

    def chunk(self, name: str, size: int) -> None:
        if self.cancel is not None:
            self.cancel.raise_if_cancelled()
        self.done += size
        self.progress(
            ProgressUpdate(self.done, self.total, f"checking {name}", bytes_done=self.done)
        )


#: Said of a listed file whose bytes match neither their hash nor the zip's CRC-32 of them.
_CRC_FAILS_TOO = (
    ", and the checksum (CRC-32) the zip stored for it no longer matches its bytes either"
)


def _check_resources(
    zf: zipfile.ZipFile,
    names: set[str],
    package: dict[str, Any],
    report: VerifyReport,
    hashing: _Hashing,
) -> None:
    listed = set()
    resources = package.get("resources")
    for resource in resources if isinstance(resources, list) else []:
        if not isinstance(resource, dict):
            continue
        name = str(resource.get("path", ""))
        listed.add(name)
        report.files_listed += 1
        if name not in names:
            report.add(Difference.MISSING, name, f"{name} is listed but missing")
            report.files_missing += 1
            continue
        algo, _, want = str(resource.get("hash", "")).partition(":")
        if algo not in _HASHES or not want:  # other tools' packages may list sha1 or md5
            report.add(Difference.CHANGED, name, f"{name} has no usable hash in datapackage.json")
            continue
        digest, size, entry = hashlib.new(algo), 0, UncheckedEntry(zf, name)
        try:
            for chunk in entry.chunks():
                digest.update(chunk)
                size += len(chunk)
                hashing.chunk(name, len(chunk))
        except _UNREADABLE as exc:  # encrypted, an unknown compression, a damaged member
            report.add(Difference.UNREADABLE, name, f"{name} cannot be read ({exc})")
            report.files_unreadable += 1
            continue
        as_listed = digest.hexdigest() == want.lower()
        report.files_checked += 1  # read whole and hashed
        if not as_listed:  # a CRC-32 that fails too says the same: its bytes were altered
            why = "its hash differs" + ("" if entry.crc_matches else _CRC_FAILS_TOO)
            report.add(Difference.CHANGED, name, f"{name} was changed ({why})")
        elif not entry.crc_matches:  # the bytes are as listed: the zip's record of them is not
            report.add(Difference.ZIP_DAMAGED, name, _crc_damage(report, name, "datapackage.json"))
        if as_listed and resource.get("bytes") not in (None, size):
            text = f"{name} has {size} bytes, not {resource.get('bytes')}"
            report.add(Difference.SIZE, name, text)
    extra = sorted(names - listed - {"datapackage.json", DIGEST_NAME})
    for name in (n for n in extra if not n.endswith("/")):
        report.add(Difference.ADDED, name, f"{name} was added (not in datapackage.json)")


def _check_headers(path: Path, zf: zipfile.ZipFile, report: VerifyReport) -> None:
    """Each entry's own (local) header against the central directory: a damaged byte in
    either that zipfile reads past is a finding too. A CRC-32 the directory gives that is
    not that of the bytes was said already (:func:`_crc_damage`)."""
    said = {f.name for f in report.findings if f.kind is Difference.ZIP_DAMAGED}
    with path.open("rb") as fh:
        found = [m for m in header_mismatches(fh, zf.infolist())
                 if not (m.what == "CRC-32" and m.name in said)]  # fmt: skip
    for name in dict.fromkeys(m.name for m in found):
        fields = "; ".join(
            f"its {m.what} is {m.local} in its own header, {m.central} in the central directory"
            for m in found
            if m.name == name
        )
        text = f"{path.name}: the zip's two headers of {name} disagree (one is damaged): {fields}"
        report.add(Difference.ZIP_HEADERS, name, text)


def _check_signature(
    signed: Any, package_hash: str, package: dict[str, Any], report: VerifyReport
) -> None:
    """The signature's state. When and by what it was signed are told as the package says
    (its hash is what is signed): the copies beside the signature are covered by nothing,
    and one that differs was changed."""
    if not signed:
        return
    report.signed = True
    report.public_key = signed.get("publicKey")
    created, software = package.get("created"), package.get("software")
    report.signed_at = created if isinstance(created, str) else None
    report.software = software if isinstance(software, str) else None
    claimed = signed.get("created")
    if claimed is not None and report.signed_at is not None and claimed != report.signed_at:
        text = (
            f"the signing time beside the signature ({claimed}) is not the package's "
            f"({report.signed_at}): it was changed after signing"
        )
        report.add(Difference.SIGNED_TIME, DIGEST_NAME, text)
    if signed.get("hash") != package_hash:
        text = "the signature is for another datapackage.json"
        report.add(Difference.SIGNATURE_MISMATCH, "", text)
        return
    try:
        public = serialization.load_der_public_key(base64.b64decode(report.public_key or ""))
        raw = base64.b64decode(signed.get("signature") or "")
        if not isinstance(public, ec.EllipticCurvePublicKey) or len(raw) != 2 * _HALF:
            raise ValueError("not an ECDSA P-384 signature")
        der = encode_dss_signature(
            int.from_bytes(raw[:_HALF], "big"), int.from_bytes(raw[_HALF:], "big")
        )
        public.verify(der, package_hash.encode("utf-8"), ec.ECDSA(hashes.SHA256()))
        report.signature_valid = True
    except (InvalidSignature, ValueError, TypeError):
        text = "the signature does not match the signed data or key"
        report.add(Difference.SIGNATURE_INVALID, "", text)


def _same_key(a: str, b: str) -> bool:
    """Two fingerprints the same, however grouped or cased."""

    def bare(fp: str) -> str:
        return "".join(fp.split()).replace(":", "").lower()

    return bare(a) == bare(b)


def _check_key(key: str, report: VerifyReport) -> None:
    if not report.signed:
        text = f"the export is not signed (signed by key {key} was asked for)"
        report.add(Difference.KEY, "", text)
    elif not report.public_key or not _same_key(fingerprint(report.public_key), key):
        who = fingerprint(report.public_key) if report.public_key else "no key"
        report.add(Difference.KEY, "", f"signed by key {who}, not by {key}")


__all__ = [
    "Difference",
    "Finding",
    "Signing",
    "SigningKeyError",
    "VerifyReport",
    "fingerprint",
    "key_path",
    "load_or_create_key",
    "package_digest",
    "public_key_b64",
    "signature_line",
    "signed_digest",
    "verify_wacz",
]
