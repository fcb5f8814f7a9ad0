"""Checks on untrusted input shared by every layer: slugs, relative paths, URLs."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from archiver_app.errors import InputError

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,99}$")
CAPTURABLE_SCHEMES = frozenset({"http", "https"})


def validate_slug(slug: str) -> str:
    """A collection slug: lower-case letters, digits, ``.``, ``_``, ``-``; at most 100."""
    if not _SLUG.match(slug) or slug in {".", ".."}:
        raise InputError(
            f"invalid collection name {slug!r}: use lower-case letters, digits, '-', '_' or '.'"
        )
    return slug


def slug_of(name: str) -> str:
    """The slug (folder name) made from a collection's name: its letters and digits
    lower-cased and without accents, ``-`` between words (``Café Notes`` is
    ``cafe-notes``); ``collection`` when nothing of it is left."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", plain).strip("-")[:90] or "collection"


def safe_relative(path: str) -> PurePosixPath:
    """A relative, '/' separated path with no ``..``, no root and no drive letter.

    Raises:
        InputError: the path would escape the folder it is relative to.
    """
    if "\x00" in path:
        raise InputError(f"path contains a NUL byte: {path!r}")
    normalised = path.replace("\\", "/")
    pure = PurePosixPath(normalised)
    if (
        pure.is_absolute()
        or re.match(r"^[A-Za-z]:", normalised)
        or any(part == ".." for part in pure.parts)
        or not pure.parts
    ):
        raise InputError(f"unsafe path {path!r}: it leaves the folder it belongs to")
    return pure


def safe_join(root: Path, relative: str) -> Path:
    """``root / relative`` after :func:`safe_relative`, also refusing symlink escapes."""
    candidate = root.joinpath(*safe_relative(relative).parts)
    resolved_root = root.resolve()
    resolved = candidate.resolve()
    if resolved != resolved_root and resolved_root not in resolved.parents:
        raise InputError(f"unsafe path {relative!r}: it resolves outside {root}")
    return candidate


def validate_capture_url(url: str, *, to_be: str = "captured") -> str:
    """A URL the browser may capture (or open, or replay): http(s), with a host. Returns
    it stripped. ``to_be`` says what the caller does with such a page, for the message
    about another scheme ("only http and https pages can be <to_be>").

    Raises:
        InputError: with a message naming what is wrong.
    """
    text = url.strip()
    if not text:
        raise InputError("empty URL")
    if any(ch.isspace() for ch in text):
        raise InputError(f"malformed URL {text!r}: it contains white space")
    try:
        parts = urlsplit(text)
        _ = parts.port  # raises ValueError for a bad port
    except ValueError as exc:
        raise InputError(f"malformed URL {text!r}: {exc}") from exc
    if not parts.scheme:
        raise InputError(f"malformed URL {text!r}: no scheme (did you mean https://{text}?)")
    if parts.scheme.lower() not in CAPTURABLE_SCHEMES:
        raise InputError(
            f"unsupported URL scheme {parts.scheme!r} in {text!r}: only http and https "
            f"pages can be {to_be}"
        )
    if not parts.hostname:
        raise InputError(f"malformed URL {text!r}: no host name")
    return text
