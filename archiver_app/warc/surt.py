"""URL keys in SURT form, exactly as pywb and cdxj-indexer write them.

The key is what the replay index sorts and looks up by, and what ends up in exported
CDXJ files, so it must match the reference implementation byte for byte: we use the
Internet Archive's ``surt`` package rather than our own.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit


@cache
def _surt() -> Callable[..., Any]:
    """The ``surt`` function, loaded at the first key: its package loads ``tldextract``
    and ``requests`` (a fifth of the window's launch), which nothing needs before then."""
    from surt import surt

    return surt  # type: ignore[no-any-return]  # surt has no type hints


def url_key(url: str) -> str:
    """The SURT key of ``url`` (``com,example)/path?query``), fragment dropped.

    Non-HTTP URLs (``urn:``, ``data:``, ``about:``) are returned unchanged.
    """
    if not url.lower().startswith(("http://", "https://")):
        return url
    try:
        return str(_surt()(url))
    except (ValueError, UnicodeError):
        return url


def url_group(url: str) -> str:
    """The timeline group of ``url``: its SURT key without the fragment.

    Every capture of the same page (any scheme, with or without ``www.``) shares a group.
    """
    return url_key(strip_fragment(url))


def strip_fragment(url: str) -> str:
    """``url`` without its ``#fragment``; a URL that does not parse (``http://[::1/x``) is
    cut at its first ``#``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("#", 1)[0]
    return urlunsplit(parts._replace(fragment="")) if parts.fragment else url


def domain_of(url: str) -> str:
    """The host of ``url`` without ``www.``, lower-case; '' when there is none or the URL
    does not parse."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""
    return host[4:] if host.startswith("www.") else host
