"""What checking a WACZ found (:func:`archiver_app.export.signing.verify_wacz`): each
difference as a :class:`Finding` with a :class:`Difference` code, and the report's lines as
``archiver verify-export``, the app's verify dialog and ``import`` say them.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from archiver_app.errors import InputError
from archiver_app.export.timestamps import (
    DIGEST_NAME,
    TimestampCheck,
    TimestampState,
    check_timestamp,
)
from archiver_app.units import counted


def fingerprint(public_key: str) -> str:
    """A short, comparable form of a public key: sha256 of its SPKI bytes, grouped."""
    digest = hashlib.sha256(base64.b64decode(public_key)).hexdigest()[:32]
    return ":".join(digest[i : i + 4] for i in range(0, 32, 4))


def parse_fingerprint(text: str) -> str:
    """The fingerprint ``text`` gives, as :func:`fingerprint` prints it: colons, spaces and
    case do not matter, but all 32 hexadecimal digits must be there.

    Raises:
        InputError: ``text`` is not a whole fingerprint (a word, a shortened one).
    """
    bare = "".join(text.split()).replace(":", "").lower()
    if not re.fullmatch(r"[0-9a-f]{32}", bare):
        raise InputError(
            f"{text!r} is not a key fingerprint: a fingerprint is 32 hexadecimal digits, "
            "in eight groups of four joined by colons, as printed after a signed export "
            "(9dba:1b7b:760b:d275:fe33:716c:7fe5:55de); colons and case do not matter"
        )
    return ":".join(bare[i : i + 4] for i in range(0, 32, 4))


class Difference(StrEnum):
    """What :func:`verify_wacz` found different from what the export says it holds."""

    DAMAGED = "damaged"  # cut short, or not a zip at all: nothing in it can be checked
    # The zip's own directory is damaged: its entries were read from their own headers
    # (what they hold is checked as usual).
    ZIP_DAMAGED = "zip damaged"
    # An entry's own (local) header and the central directory disagree (its version needed,
    # flags, time...): one of them is damaged; what the entry holds is checked as usual.
    ZIP_HEADERS = "zip headers"
    DUPLICATE = "duplicate"  # a name twice in the zip: readers may take either entry
    PACKAGE_MISSING = "package missing"  # datapackage.json or its digest is not there
    PACKAGE_UNREADABLE = "package unreadable"
    PACKAGE_CHANGED = "package changed"  # datapackage.json differs from its digest
    CHANGED = "changed"  # a listed file's hash differs
    SIZE = "size"  # a listed file's size differs
    MISSING = "missing"  # listed, not in the zip
    ADDED = "added"  # in the zip, not listed
    UNREADABLE = "unreadable"  # listed and there, but its bytes cannot be read
    SIGNATURE_MISMATCH = "signature mismatch"  # signed another datapackage.json
    SIGNATURE_INVALID = "signature invalid"
    # the signing time beside the signature is not the package's (which the hash covers)
    SIGNED_TIME = "signed time"
    KEY = "key"  # not signed by the key the reader asked for (verify-export --key)
    TIMESTAMP_INVALID = "timestamp invalid"
    TIMESTAMP_MISSING = "timestamp missing"  # a trust root was given, there is no timestamp
    DIGEST = "digest"  # the file's SHA-256 is not the one the reader gave (--sha256)
    # the file holds a recorded release's content (its datapackage.json) in other bytes
    NOT_RELEASE = "not the release"


@dataclass(frozen=True)
class Finding:
    kind: Difference
    name: str  # the member it is about ("" for the signature)
    message: str


@dataclass(frozen=True)
class Cut:
    """Where a WACZ cut short ends: inside entry ``inside`` (None: between entries, or in
    an entry's header), after ``whole`` entries that are there whole."""

    inside: str | None
    whole: int


@dataclass
class VerifyReport:
    path: Path
    findings: list[Finding] = field(default_factory=list)
    files_checked: int = 0  # read whole and hashed
    files_listed: int = 0  # in datapackage.json (a missing or unreadable one is a finding)
    files_missing: int = 0  # listed, not in the zip
    files_unreadable: int = 0  # listed and there, but could not be read whole
    signed: bool = False
    signature_valid: bool = False
    public_key: str | None = None
    signed_at: str | None = None
    software: str | None = None
    timestamp: TimestampCheck = field(default_factory=lambda: check_timestamp({}))
    required_key: str | None = None  # the fingerprint the reader asked for (``--key``)
    cut: Cut | None = None  # the file is cut short: what is left of it was checked
    sha256: str | None = None  # the whole file's, as ``archiver cite`` quotes a release's
    package_hash: str | None = None  # "sha256:…" of its datapackage.json, when it reads
    asked_sha256: str | None = None  # the digest the reader gave (``--sha256``)
    #: which release on record this file is, or that none is (``verify-export`` run with a
    #: library: :func:`~archiver_app.export.identity.compare_releases`)
    release_lines: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return [f.message for f in self.findings]

    @property
    def ok(self) -> bool:
        return not self.findings and (not self.signed or self.signature_valid)

    def add(self, kind: Difference, name: str, message: str) -> None:
        self.findings.append(Finding(kind, name, message))

    @property
    def as_signed(self) -> bool:
        """Whether the package holds what was signed: no file changed, added or missing
        (a timestamp that fails, or another key than the one asked for, changes no file)."""
        return all(f.kind in _NOT_CHANGES for f in self.findings)

    @property
    def only_zip_damaged(self) -> bool:
        """Only the zip's bookkeeping is damaged (its directory, a checksum, a header):
        every file it lists was read whole and is as listed, and as signed when it is
        signed."""
        return (
            bool(self.findings)
            and all(f.kind in ZIP_BOOKKEEPING for f in self.findings)
            and self.files_checked == self.files_listed
            and (not self.signed or self.signature_valid)
        )

    @property
    def zip_parts(self) -> tuple[str, ...]:
        """What of the zip's bookkeeping is damaged: ``"directory"`` (its central
        directory, or a checksum in it), ``"headers"`` (an entry's own header disagrees
        with the directory), both or neither."""
        kinds = {f.kind for f in self.findings}
        return tuple(part for part, kind in (("directory", Difference.ZIP_DAMAGED),
                                             ("headers", Difference.ZIP_HEADERS))
                     if kind in kinds)  # fmt: skip

    @property
    def only_as_a_file(self) -> bool:
        """Every listed file is as listed (as signed, when signed), but the file is not the
        one exported or asked for: its zip's bookkeeping is damaged, or its SHA-256 is
        not the digest asked for."""
        return (
            bool(self.findings)
            and all(f.kind in _FILE_ONLY for f in self.findings)
            and self.files_checked == self.files_listed
            and (not self.signed or self.signature_valid)
        )

    def file_damage(self) -> str:
        """Why the file is not the one exported or asked for, in the verdict's words."""
        said = [self.zip_damage()] if self.zip_parts else []
        if any(f.kind is Difference.DIGEST for f in self.findings):
            said.append("its SHA-256 is not the digest asked for")
        if any(f.kind is Difference.NOT_RELEASE for f in self.findings):
            said.append("it is not byte-identical to the release on record")
        return " and ".join(said)

    def zip_damage(self) -> str:
        """:attr:`zip_parts` in the verdict's words."""
        said = {"directory": "the zip's central directory is damaged",
                "headers": "the zip's headers of an entry disagree"}  # fmt: skip
        return " and ".join(said[part] for part in self.zip_parts)

    @property
    def damaged(self) -> bool:
        """Cut short or not a zip: its files could not be checked at all."""
        return any(f.kind is Difference.DAMAGED for f in self.findings)

    def lines(self) -> list[str]:
        """The report as ``archiver verify-export`` prints it and the app shows it: what
        changed, the signature, the timestamp, then the verdict."""
        # a timestamp that fails or is missing is said on its own line, below: no file of it
        # changed (an unsigned export has no such line: its finding is shown)
        hidden = {Difference.TIMESTAMP_INVALID, Difference.DIGEST, Difference.NOT_RELEASE}
        hidden |= {_MISSING} if self.signed else set()
        shown = [f for f in self.findings if f.kind not in hidden]
        out = [f"{_LABELS.get(f.kind, 'changed')}: {f.message}" for f in shown]
        if self.damaged:
            verdict = f"{self.path}: NOT intact (damaged: cut short or not a zip)"
            return [*out, *self._sha256_lines(), verdict]
        if self.signed:
            who = fingerprint(self.public_key) if self.public_key else "no key"
            out.append(
                signature_line(
                    who,
                    self.signature_valid,
                    self.as_signed,
                    when=self.signed_at or "?",
                    software=self.software or "?",
                )
            )
            out += self._key_matched()
            stamp = self.timestamp
            if stamp.state is not TimestampState.NONE:
                when = stamp.time.strftime("%Y-%m-%dT%H:%M:%SZ") if stamp.time else "?"
                out.append(f"timestamp: {stamp.state}; {when} by {stamp.authority or '?'}: "
                           f"{stamp.message}")  # fmt: skip
            elif any(f.kind is _MISSING for f in self.findings):
                out.append("timestamp: none, but one was asked for (a trust root was given)")
            else:
                out.append("timestamp: none")
        else:
            out.append(unsigned_line(self.findings) or "not signed")
        out += self._sha256_lines()
        verdict = "intact" if self.ok else "NOT intact"
        if self.only_as_a_file:  # not "altered": every byte that counts is as it was
            verdict = (
                f"NOT intact as a file: {self.file_damage()} (said above); the content is "
                f"{'as signed' if self.signed else 'as its datapackage.json lists'}"
            )
        if not self.ok and all(f.kind in _REQUIRED for f in self.findings):
            # nothing in it differs: only what the reader asked for is not there
            kinds = {f.kind for f in self.findings}
            lacks = [f"not signed by key {self.required_key}"] if Difference.KEY in kinds else []
            lacks += ["not timestamped"] if _MISSING in kinds else []
            verdict = f"intact, but {' and '.join(lacks)}"
        if (cut := self.cut_text()) is not None:  # said first, and again in the verdict
            out.append(f"{self.path}: NOT intact: {cut}")
            return out
        out.append(f"{self.path}: {verdict} ({self.count_text()})")
        return out

    def _sha256_lines(self) -> list[str]:
        """The file's SHA-256, and whether it is the digest asked for."""
        if self.sha256 is None:
            return []
        line = f"sha256 {self.sha256}"
        if self.asked_sha256 is not None:
            differs = [f.message for f in self.findings if f.kind is Difference.DIGEST]
            line += f": {differs[0]}" if differs else " (the digest asked for)"
        not_release = [f.message for f in self.findings if f.kind is Difference.NOT_RELEASE]
        return [line, *(f"release: {text}" for text in [*self.release_lines, *not_release])]

    def cut_text(self) -> str | None:
        """The verdict's words on a file cut short (where, what is whole, the count), the
        same in ``verify-export`` and the app; None when it is not cut short."""
        cut = self.cut
        if cut is None or self.ok:
            return None
        where = f" inside {cut.inside!r}" if cut.inside is not None else ""
        whole = "no whole entry"
        if cut.whole:
            whole = counted(cut.whole, "whole entry", "whole entries")
        return f"the file is cut short{where} ({whole} before the cut; {self.count_text()})"

    def _key_matched(self) -> list[str]:
        """The ``key:`` line of a signature by the key ``--key`` asked for (another key,
        or none, is a finding, said with the others)."""
        if self.required_key is None or any(f.kind is Difference.KEY for f in self.findings):
            return []
        if not self.signature_valid:
            return [f"key: the signature names {self.required_key}, the key asked for, "
                    "but is NOT valid"]  # fmt: skip
        return [f"key: signed by {self.required_key}, the key asked for"]

    def count_text(self) -> str:
        """The files checked of those the package lists, and why the others were not
        (each is named by a finding above)."""
        if self.files_listed <= self.files_checked:
            return f"{counted(self.files_checked, 'file')} checked"
        unhashed = self.files_listed - self.files_checked - self.files_missing
        unhashed -= self.files_unreadable
        why = [
            f"{n:,} {said}"
            for n, said in (
                (self.files_unreadable, "cannot be read"),
                (self.files_missing, "missing"),
                (unhashed, "without a usable hash"),
            )
            if n > 0
        ]
        listed = counted(self.files_listed, "file")
        return f"{self.files_checked:,} of {listed} checked; {', '.join(why)}"


#: Findings of what the reader asked for (``--key``, ``--tsa-cert``) and the package lacks.
_REQUIRED = frozenset({Difference.KEY, Difference.TIMESTAMP_MISSING})
_MISSING = Difference.TIMESTAMP_MISSING
#: Findings that change nothing in the package.
_NOT_CHANGES = _REQUIRED | {Difference.TIMESTAMP_INVALID, Difference.ZIP_DAMAGED,
                            Difference.ZIP_HEADERS, Difference.DIGEST,
                            Difference.NOT_RELEASE}  # fmt: skip
#: Findings of the zip's bookkeeping, not of what it holds.
ZIP_BOOKKEEPING = frozenset({Difference.ZIP_DAMAGED, Difference.ZIP_HEADERS})
#: Findings of the file, not of its content: the zip's bookkeeping, its SHA-256.
_FILE_ONLY = ZIP_BOOKKEEPING | {Difference.DIGEST, Difference.NOT_RELEASE}


def signature_line(
    key: str, valid: bool, as_signed: bool, *, when: str | None = None, software: str | None = None
) -> str:
    """The signature's state in words, the same in ``verify-export``, the app's verify
    dialog and ``import``: a valid signature vouches for the package as it was signed, so
    a package altered since is never left at "valid". ``key``: the key's fingerprint;
    ``when`` and ``software``: when and by what it was signed, where known."""
    signed = f"signed with key {key}"
    if when is not None:
        signed += f" on {when} by {software or '?'}"
    if not valid:
        return f"{signed}: the signature is NOT valid"
    if not as_signed:  # it vouches for what was signed, not for these bytes
        return (
            f"{signed}: the signature is valid, but the package is NOT as signed:"
            " it was altered after signing"
        )
    return f"{signed}: the signature is valid"


#: How :meth:`VerifyReport.lines` labels a finding ("changed" for the others).
_LABELS = {
    Difference.DAMAGED: "damaged",
    Difference.ZIP_DAMAGED: "damaged",
    Difference.ZIP_HEADERS: "damaged",
    Difference.KEY: "key",
    Difference.TIMESTAMP_MISSING: "timestamp",
}


def unsigned_line(findings: list[Finding] | tuple[Finding, ...]) -> str | None:
    """The signature's state of a package whose signature file is gone (deleted, or its
    name damaged) or damaged, the same in ``verify-export`` and ``import``; None when it
    is there (a package that is not signed then says so plainly)."""
    kinds = {f.kind for f in findings if f.name == DIGEST_NAME}
    if Difference.PACKAGE_UNREADABLE in kinds:
        return f"not signed as it is: its signature file {DIGEST_NAME} cannot be read"
    if Difference.PACKAGE_MISSING in kinds:
        return f"not signed as it is: its signature file {DIGEST_NAME} is missing"
    return None


__all__ = [
    "ZIP_BOOKKEEPING",
    "Cut",
    "Difference",
    "Finding",
    "VerifyReport",
    "fingerprint",
    "signature_line",
    "unsigned_line",
]
