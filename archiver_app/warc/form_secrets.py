"""Secret values out of a request body: what a login form or a login script sent.

A login typed into a page is a POST whose body holds the password in clear:
``user=ann&password=hunter2`` (an HTML form), a ``multipart/form-data`` part named
``password``, or ``{"password": "hunter2"}`` (a script). :func:`blank_secrets` returns the
body with the values of the fields whose names say they are secrets (:func:`is_secret_name`:
``password``, ``passwd``, ``pwd``, ``pin``, ``otp``, ``token``... as a word of the name, so
``user[password]`` and ``newPassword2`` are, ``shipping`` and ``spinner`` are not) left
empty, and every other byte as it was; or None when there is nothing to blank (another
content type, no such field, a body that cannot be parsed). Names listed in ``also`` (the
fields a page shows as ``<input type=password>``) are blanked whatever they are called.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from typing import Any
from urllib.parse import unquote_plus

SECRET_WORDS = frozenset(
    {"pass", "passwd", "password", "passwort", "passphrase", "passcode", "pwd", "pw",
     "secret", "otp", "totp", "pin", "token"}
)  # fmt: skip
FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_DISPOSITION_NAME = re.compile(rb'\bname="([^"]*)"', re.IGNORECASE)
#: A quick look before parsing: could ``body`` name a secret field at all?
HINT = re.compile(rb"(?i)pass|pwd|pw|secret|otp|pin|token")


def is_secret_name(name: str) -> bool:
    """Whether a field name says its value is a secret (one of :data:`SECRET_WORDS` as a
    word of it: split at punctuation, digits and lower-to-upper case changes)."""
    return any(w.lower() in SECRET_WORDS for w in _WORD.findall(name))


def _secret(name: str, also: Collection[str]) -> bool:
    return name in also or is_secret_name(name)


def blank_secrets(content_type: str, body: bytes, also: Collection[str] = ()) -> bytes | None:
    """``body`` with the values of its secret fields empty, or None when none is there."""
    if not body or not (also or HINT.search(body)):
        return None
    kind, _, params = content_type.partition(";")
    kind = kind.strip().lower()
    if kind == FORM:
        return _blank_urlencoded(body, also)
    if kind == MULTIPART:
        boundary = _param(params, "boundary")
        return _blank_multipart(body, boundary.encode("latin-1"), also) if boundary else None
    if kind == "application/json" or kind.endswith("+json"):
        return _blank_json(body, also)
    return None


def blank_request_body(
    headers: Iterable[tuple[str, str]], body: bytes, also: Collection[str] = ()
) -> bytes:
    """A request's ``body``, with its secret fields blanked by the type its ``headers``
    say it has (the body as it is when there are none)."""
    kind = next((str(v) for k, v in headers if k.lower() == "content-type"), "")
    return blank_secrets(kind, body, also) or body


def _param(params: str, name: str) -> str:
    for part in params.split(";"):
        key, _, value = part.partition("=")
        if key.strip().lower() == name:
            return value.strip().strip('"')
    return ""


def _blank_urlencoded(body: bytes, also: Collection[str]) -> bytes | None:
    changed = False
    pairs = body.split(b"&")
    for i, pair in enumerate(pairs):
        key, sep, value = pair.partition(b"=")
        name = unquote_plus(key.decode("latin-1"))
        if sep and value and _secret(name, also):
            pairs[i] = key + b"="
            changed = True
    return b"&".join(pairs) if changed else None


def _blank_multipart(body: bytes, boundary: bytes, also: Collection[str]) -> bytes | None:
    delimiter = b"--" + boundary
    parts = body.split(delimiter)
    changed = False
    for i, part in enumerate(parts[1:], start=1):
        head_end = part.find(b"\r\n\r\n")
        if head_end < 0:
            continue
        head = part[:head_end]
        match = _DISPOSITION_NAME.search(head)
        if match is None or b"filename=" in head.lower():
            continue
        value = part[head_end + 4 :]
        if value.rstrip(b"\r\n") and _secret(match.group(1).decode("utf-8", "replace"), also):
            parts[i] = head + b"\r\n\r\n" + (b"\r\n" if value.endswith(b"\r\n") else b"")
            changed = True
    return delimiter.join(parts) if changed else None


def _blank_json(body: bytes, also: Collection[str]) -> bytes | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    blanked, changed = _blank_value(data, also)
    if not changed:
        return None
    return json.dumps(blanked, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _blank_value(data: Any, also: Collection[str]) -> tuple[Any, bool]:
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        changed = False
        for key, value in data.items():
            if _secret(str(key), also) and isinstance(value, str | int | float) and value != "":
                out[key], changed = "", True
            else:
                out[key], inner = _blank_value(value, also)
                changed = changed or inner
        return out, changed
    if isinstance(data, list):
        items = [_blank_value(v, also) for v in data]
        return [v for v, _ in items], any(c for _, c in items)
    return data, False
