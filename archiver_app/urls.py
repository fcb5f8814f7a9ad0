"""The one form of a web address the library keeps: what a browser sends.

A capture, a crawl's queue and a watch store an address as :func:`normalize_url` gives it
(an IDNA host, other characters as UTF-8 escapes, the form WARC records carry), and the
search filters on addresses (:func:`prefix_forms`, :func:`domain_forms`) compare what is
typed in that form and as typed, so an address typed either way finds its captures (and
the captures stored as typed before addresses were normalised).
"""

from __future__ import annotations

import contextlib
import re
from urllib.parse import quote, unquote, urlsplit, urlunsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_url(url: str) -> str | None:
    """The stored form of ``url`` (a capture's, a queue's, a watch's): http(s) only,
    lower-case scheme and host, no default port, ``/`` for an empty path, no dot segments
    (``/a/../b`` is ``/b``, as a browser asks for it), no fragment unless it is a route of
    a hash-routed app (``#/guide`` shows another page; ``#section`` does not), in ASCII as
    the browser sends it (an IDNA host, other characters as UTF-8 escapes:
    ``bücher.example/café`` is ``xn--bcher-kva.example/caf%C3%A9``, the address its WARC
    records carry). None for anything that is not a web page URL."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    if parts.username or parts.password:
        userinfo = parts.username or ""
        if parts.password:
            userinfo += f":{parts.password}"
        netloc = f"{userinfo}@{netloc}"
    fragment = route_fragment(parts.fragment)
    path = remove_dot_segments(parts.path) if "." in parts.path else parts.path
    path, query, fragment = (_escaped(p) for p in (path, parts.query, fragment))
    return urlunsplit((scheme, netloc, path or "/", query, fragment))


#: ASCII a browser leaves as typed in a path or query (escapes included): only other
#: characters, spaces and control characters are escaped.
_KEPT = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"<>`')


_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")


def _escaped(part: str) -> str:
    """``part`` with characters outside printable ASCII (and ``"<>` ``) as UTF-8 escapes."""
    return quote(part, safe=_KEPT)


def _idna(host: str) -> str:
    """``host`` (lower case) with its labels in IDNA (``bücher.example`` is
    ``xn--bcher-kva.example``); as it is when it cannot be."""
    host = host.lower()
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def _unicode_host(host: str) -> str:
    """``host`` (lower case) with its IDNA labels decoded; as it is when they cannot be."""
    host = host.lower()
    try:
        return host.encode("ascii").decode("idna") if "xn--" in host else host
    except UnicodeError:
        return host


def domain_forms(typed: str) -> list[str]:
    """The forms a domain typed in a search filter is stored in: its IDNA form (how
    addresses are stored), then, when different, as typed in Unicode (a capture stored
    before addresses were normalised). An address or ``host:port`` typed gives its host."""
    domain = typed.strip().lower()
    if "/" in domain or ":" in domain:  # an address or host:port typed: its host
        with contextlib.suppress(ValueError):
            domain = urlsplit(domain if "://" in domain else "//" + domain).hostname or domain
    domain = domain.removeprefix("www.")
    return list(dict.fromkeys((_idna(domain), _unicode_host(domain))))


def prefix_forms(typed: str) -> list[str]:
    """The forms an address prefix typed in a search filter may be stored in: as
    :func:`normalize_url` stores addresses (an IDNA host, once the host is typed whole;
    other characters as UTF-8 escapes), as typed, and with its escapes decoded (a capture
    stored as typed before addresses were normalised)."""
    forms = [typed]
    scheme, sep, rest = typed.partition("://")
    host, cut, tail = next(
        ((rest[:i], c, rest[i + 1 :]) for i, c in enumerate(rest) if c in "/?#"), (rest, "", "")
    )
    if sep and cut:  # the host is whole: a part of a label has no IDNA form of its own
        escaped = _ESCAPE.sub(lambda m: m[0].upper(), _escaped(tail))  # as quote() writes
        forms.append(f"{scheme}://{_idna(host)}{cut}{escaped}")
        forms.append(f"{scheme}://{_unicode_host(host)}{cut}{unquote(tail)}")
    forms.append(unquote(typed))
    return list(dict.fromkeys(forms))


def remove_dot_segments(path: str) -> str:
    """``path`` without ``.`` and ``..`` segments (RFC 3986, section 5.2.4): what a browser
    requests for ``/watch/../watch/page.html`` is ``/watch/page.html``."""
    out: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "..":
            if len(out) > 1:
                out.pop()
            if last:
                out.append("")
        elif segment == ".":
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/".join(out)


def route_fragment(fragment: str) -> str:
    """``fragment`` when it names a route of a hash-routed app (``#/guide``, ``#!/post/1``),
    which shows another page; '' for an anchor within the page (``#section``), which does not.
    """
    return fragment if fragment.startswith(("/", "!")) else ""
