"""RFC 3161 trusted timestamps on signed WACZ exports.

What is stamped: the signature. The WACZ signing spec (wacz-auth 0.1.0) defines
``signedData.timeSignature`` (an RFC 3161 timestamp of the signature) and
``timestampCert`` (the authority's certificates, PEM) for its domain-name form; an anonymous
signature gets the same two fields here. The message imprint is SHA-256 over the raw
signature bytes (``signature`` base64-decoded, P-384 ``r||s``); since the signature covers
the datapackage's hash, which covers every file's hash, the stamp proves the whole export
existed, signed, no later than the authority's time. ``timeSignature`` holds the whole
DER ``TimeStampResp``, base64. Readers that do not know the fields ignore them
(ReplayWeb.page still checks the signature).

:func:`request_timestamp` asks an authority over HTTP (``application/timestamp-query``)
and checks the answer: status granted, the imprint and nonce of our request. The outcome
is a value: stamped, unreachable (no network, refused, timed out, a 5xx: worth retrying)
or a bad answer (garbage, a rejection, another imprint: not retried). :func:`add_timestamp`
puts a token into a finished WACZ in place, durably (a rewritten copy replaces it through
:func:`archiver_app.durable.atomic_write`). :func:`check_timestamp` verifies one against
the trust roots the reader gives. Exports waiting for a stamp are in :mod:`.pending`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from archiver_app.durable import atomic_write
from archiver_app.errors import InputError
from archiver_app.export.der_order import in_der_order

DIGEST_NAME = "datapackage-digest.json"
TIMEOUT = 20.0  # seconds: an authority answers in well under a second when it is there
_MAX_ANSWER = 1 << 20  # a timestamp answer is a few kilobytes
_ZIP64_LIMIT = (1 << 31) - 1


class StampCode(StrEnum):
    STAMPED = "stamped"
    UNREACHABLE = "unreachable"  # no answer: the request waits and is retried later
    BAD_ANSWER = "bad answer"  # the authority answered something that is no valid stamp


@dataclass(frozen=True)
class StampOutcome:
    code: StampCode
    message: str
    token: bytes | None = None  # the DER TimeStampResp when stamped
    time: datetime | None = None


def stamped_message(signed: dict[str, Any]) -> bytes:
    """The bytes a timestamp covers: the raw signature of ``signedData``."""
    try:
        raw = base64.b64decode(str(signed.get("signature") or ""), validate=True)
    except ValueError as exc:
        raise InputError("the export's signature is not base64") from exc
    if not raw:
        raise InputError("the export is not signed, so there is nothing to timestamp")
    return raw


def request_timestamp(message: bytes, url: str, *, timeout: float = TIMEOUT) -> StampOutcome:
    """Ask the authority at ``url`` to stamp SHA-256(``message``); the answer checked."""
    from rfc3161_client import HashAlgorithm, TimestampRequestBuilder

    if urllib.parse.urlsplit(url).scheme not in {"http", "https"}:
        return StampOutcome(StampCode.BAD_ANSWER, f"{url!r} is not an http(s) address")
    request = TimestampRequestBuilder().data(message).hash_algorithm(HashAlgorithm.SHA256).build()
    http = urllib.request.Request(  # noqa: S310 - http(s) only, checked above
        url,
        data=request.as_bytes(),
        headers={"Content-Type": "application/timestamp-query"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(http, timeout=timeout) as answer:  # noqa: S310
            body = answer.read(_MAX_ANSWER + 1)
    except urllib.error.HTTPError as exc:
        code = StampCode.UNREACHABLE if exc.code >= 500 else StampCode.BAD_ANSWER
        return StampOutcome(code, f"the authority at {url} answered HTTP {exc.code}")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(exc, ValueError):  # not a URL urllib can open: no retry mends that
            return StampOutcome(StampCode.BAD_ANSWER, f"cannot ask {url!r}: {exc}")
        return StampOutcome(StampCode.UNREACHABLE, f"cannot reach {url}: {reason}")
    return _check_answer(body, request.nonce, hashlib.sha256(message).digest(), url)


def decode_response(body: bytes) -> Any:
    """The ``TimeStampResponse`` in ``body``, its unsigned sets (the authority's
    certificates in the order of its chain, as OpenSSL sends them) first put in DER order.

    Raises:
        ValueError: ``body`` is no timestamp answer.
    """
    from rfc3161_client import decode_timestamp_response

    return decode_timestamp_response(in_der_order(body))


def _check_answer(body: bytes, nonce: int | None, imprint: bytes, url: str) -> StampOutcome:
    from rfc3161_client import PKIStatus

    if len(body) > _MAX_ANSWER:
        return StampOutcome(StampCode.BAD_ANSWER, f"{url} answered more than a timestamp")
    body = in_der_order(body)  # the token kept is strict DER: any reader decodes it
    try:
        response = decode_response(body)
        status = PKIStatus(response.status)
        if status not in (PKIStatus.GRANTED, PKIStatus.GRANTED_WITH_MODS):
            return StampOutcome(
                StampCode.BAD_ANSWER, f"the authority at {url} refused: {status.name.lower()}"
            )
        info = response.tst_info
        if info.message_imprint.message != imprint:
            return StampOutcome(StampCode.BAD_ANSWER, f"{url} stamped something else")
        if nonce is not None and info.nonce != nonce:
            return StampOutcome(StampCode.BAD_ANSWER, f"{url} answered another request")
        when = info.gen_time
    except ValueError as exc:
        return StampOutcome(StampCode.BAD_ANSWER, f"{url} answered no timestamp ({exc})")
    return StampOutcome(StampCode.STAMPED, f"timestamped by {url}", body, when)


def _certificates_pem(token: bytes) -> str:
    certs = decode_response(token).signed_data.certificates
    pems = (
        x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM).decode()
        for der in sorted(certs)
    )
    return "".join(pems)


# ---------------------------------------------------------------------- the WACZ


def read_digest(path: Path) -> dict[str, Any]:
    try:
        with zipfile.ZipFile(path) as zf:
            digest = json.loads(zf.read(DIGEST_NAME))
    except (OSError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise InputError(f"{path} is not a readable WACZ: {exc}") from exc
    if not isinstance(digest, dict):
        raise InputError(f"{path}: {DIGEST_NAME} is not an object")
    return digest


def with_token(digest: dict[str, Any], token: bytes) -> dict[str, Any]:
    """``digest`` with the token in its ``signedData`` (``timeSignature``, ``timestampCert``)."""
    signed = dict(digest["signedData"])
    signed["timeSignature"] = base64.b64encode(token).decode("ascii")
    signed["timestampCert"] = _certificates_pem(token)
    return {**digest, "signedData": signed}


def add_timestamp(path: Path, token: bytes, *, signature: str | None = None) -> None:
    """Put ``token`` into the WACZ at ``path``, in place and durably.

    Every member is copied as it is (stored WARCs byte for byte) into a temporary file
    beside it with the new ``datapackage-digest.json``; the rename replaces the export only
    once that copy is complete and synced, so a crash leaves the old export whole.
    ``signature``: refuse if the export's signature is no longer that one (the file at
    ``path`` was replaced since the request was made)."""
    digest = read_digest(path)
    signed = digest.get("signedData")
    if not isinstance(signed, dict):
        raise InputError(f"{path} is not signed")
    if signature is not None and signed.get("signature") != signature:
        raise InputError(f"{path} was replaced by another export since it was signed")
    body = json.dumps(with_token(digest, token), indent=2).encode("utf-8")

    def rewrite(out: IO[bytes]) -> None:
        with zipfile.ZipFile(path) as zin, zipfile.ZipFile(out, "w", allowZip64=True) as zout:
            for info in zin.infolist():
                if info.filename == DIGEST_NAME:
                    continue
                copy = zipfile.ZipInfo(info.filename, info.date_time)
                copy.compress_type = info.compress_type
                copy.external_attr = info.external_attr
                copy.file_size = info.file_size
                big = info.file_size > _ZIP64_LIMIT
                with zin.open(info) as src, zout.open(copy, "w", force_zip64=big) as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            old = zin.getinfo(DIGEST_NAME)
            new = zipfile.ZipInfo(DIGEST_NAME, old.date_time)
            new.compress_type = old.compress_type
            zout.writestr(new, body)

    atomic_write(path, rewrite)


# ---------------------------------------------------------------------- verification


class TimestampState(StrEnum):
    NONE = "none"  # no timestamp
    VALID = "valid"  # imprint and the authority's chain up to a given root
    UNCHECKED = "unchecked"  # imprint matches; no trust root given to check the chain
    INVALID = "invalid"


@dataclass(frozen=True)
class TimestampCheck:
    state: TimestampState
    message: str
    time: datetime | None = None
    authority: str | None = None  # the signing certificate's subject


def load_roots(path: Path) -> list[x509.Certificate]:
    """Every certificate in a PEM file (a trust root, or a bundle of them)."""
    try:
        roots = x509.load_pem_x509_certificates(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the trust root {path}: {exc}") from exc
    return roots


def check_timestamp(
    signed: dict[str, Any], roots: list[x509.Certificate] | None = None
) -> TimestampCheck:
    """Verify ``signedData.timeSignature``: it covers this signature and, with ``roots``,
    it was signed by an authority whose certificate chains up to one of them."""
    from rfc3161_client import VerificationError, VerifierBuilder

    encoded = signed.get("timeSignature")
    if not encoded:
        return TimestampCheck(TimestampState.NONE, "not timestamped")
    try:
        response = decode_response(base64.b64decode(str(encoded), validate=True))
        info = response.tst_info
        when, imprint = info.gen_time, info.message_imprint.message
        authority = _authority(response)
    except ValueError as exc:
        return TimestampCheck(TimestampState.INVALID, f"the timestamp is unreadable ({exc})")
    try:
        message = stamped_message(signed)
    except InputError as exc:
        return TimestampCheck(TimestampState.INVALID, str(exc), when, authority)
    if imprint != hashlib.sha256(message).digest():
        text = "the timestamp is for another signature"
        return TimestampCheck(TimestampState.INVALID, text, when, authority)
    if not roots:
        text = "the timestamp covers the signature; its authority was not checked (no root)"
        return TimestampCheck(TimestampState.UNCHECKED, text, when, authority)
    builder = VerifierBuilder()
    for root in roots:
        builder = builder.add_root_certificate(root)
    try:
        builder.build().verify_message(response, message)
    except (VerificationError, ValueError):  # OpenSSL's error stack: nothing for a reader
        text = "the timestamp does not chain to the given root certificate"
        return TimestampCheck(TimestampState.INVALID, text, when, authority)
    return TimestampCheck(TimestampState.VALID, "the timestamp is valid", when, authority)


def _authority(response: Any) -> str | None:
    signer = next(iter(response.signed_data.signer_infos), None)
    for der in response.signed_data.certificates:
        cert = x509.load_der_x509_certificate(der)
        if signer is not None and cert.serial_number == signer.serial_number:
            return str(cert.subject.rfc4514_string())
    return None
