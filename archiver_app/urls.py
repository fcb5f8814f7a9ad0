"""The one form of a web address the library keeps: what a browser sends.

A capture, a crawl's queue and a watch store an address as :func:`normalize_url` gives it
(an IDNA host, other characters as UTF-8 escapes, the form WARC records carry), and the
search filters on addresses (:func:`prefix_forms`, :func:`domain_forms`) compare what is
typed in that form and as typed, so an address typed either way finds its captures (and
the captures stored as typed before addresses were normalised). Wherever an address is
shown to a person it is in its readable form (:func:`display_url`).
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
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


#: Escaped UTF-8 of one character outside ASCII (a lead byte and its continuation bytes).
_ESCAPED_CHAR = re.compile(
    r"%(?:[cC][2-9a-fA-F]|[dD][0-9a-fA-F])%[89abAB][0-9a-fA-F]"
    r"|%[eE][0-9a-fA-F](?:%[89abAB][0-9a-fA-F]){2}"
    r"|%[fF][0-4](?:%[89abAB][0-9a-fA-F]){3}"
)

#: Character categories kept escaped when shown: controls, format characters (the marks
#: that turn text right to left), spaces and separators, private, unassigned, surrogates.
_UNSHOWN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zs", "Zl", "Zp"})
#: Characters that look like a ``/``, ``?`` or ``#``: shown, they would change what the
#: address seems to say.
_LOOKALIKES = frozenset("\u2044\u2215\u29f8\u2afb\u3033\uff0f\uff1f\uff03\ufffd")


def _shown_char(m: re.Match[str]) -> str:
    try:
        char = bytes.fromhex(m[0].replace("%", "")).decode("utf-8")
    except UnicodeDecodeError:  # an overlong or out-of-range sequence: not a character
        return m[0]
    if unicodedata.category(char) in _UNSHOWN_CATEGORIES or char in _LOOKALIKES:
        return m[0]
    return char


#: The scripts a label may mix and still be shown in Unicode, as browsers allow them
#: (Chromium's IDN display policy): Japanese, Chinese with Bopomofo, Korean, each with Latin.
_ALLOWED_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
#: The first words of character names that do not name their script as it is called.
_SCRIPT_OF_NAME = {"CJK": "HAN", "IDEOGRAPHIC": "HAN", "KATAKANA-HIRAGANA": "KATAKANA"}


def _script(char: str) -> str:
    """The script of the letter ``char``: the first word of its Unicode name (``LATIN``,
    ``CYRILLIC``, ``GREEK``, ``HIRAGANA``; ``HAN`` for CJK ideographs)."""
    word = unicodedata.name(char, "UNKNOWN").split(" ", 1)[0]
    return _SCRIPT_OF_NAME.get(word, word)


def label_scripts(label: str) -> frozenset[str]:
    """The scripts of the letters of ``label`` (digits, hyphens and marks have none)."""
    return frozenset(_script(c) for c in label if unicodedata.category(c).startswith("L"))


def safe_to_show(label: str) -> bool:
    """Whether the Unicode ``label`` may be shown as it is (the IDN spoofing policy): its
    letters are of one script, or of one of the mixes a language writes with
    (:data:`_ALLOWED_MIXES`). A label mixing others, as Latin with Cyrillic (``аpple``, its
    first letter Cyrillic), could pass for another name and is shown in IDNA
    (``xn--pple-43d``), as browsers show it. Labels whose every letter is of one script that
    looks like another (an all-Cyrillic ``аре``) are not caught: that needs Unicode's
    confusables table."""
    scripts = label_scripts(label)
    return len(scripts) <= 1 or any(scripts <= mix for mix in _ALLOWED_MIXES)


def display_host(host: str) -> str:
    """``host`` as people read it: its IDNA labels in Unicode (``xn--bcher-kva.example``
    is ``bücher.example``), unless a label mixes scripts in a way that could pass for
    another name (:func:`safe_to_show`): then the whole host is shown in IDNA, as browsers
    do. As it is when its labels cannot be decoded."""
    if host.isascii() and "xn--" not in host.lower():
        return host
    shown = _unicode_host(host)
    if all(safe_to_show(label) for label in shown.split(".")):
        return shown
    return _idna(shown)


def display_url(url: str) -> str:
    """``url`` as a person reads it (its IRI form, RFC 3987 section 3.2): an IDNA host in
    Unicode, escaped UTF-8 characters outside ASCII in its path, query and fragment shown
    as those characters (``/%D0%BC%D0%B8%D1%80`` is ``/мир``). Escaped ASCII (``%2F``,
    ``%20``, ``%3F``, ``%23``, ``%25``), bytes that are not UTF-8, and characters that
    could mislead (spaces, controls, right-to-left marks, lookalikes of ``/``) stay
    escaped, so the address shown, typed or pasted again, is the same address:
    :func:`normalize_url` gives back the stored form. A host whose labels mix scripts that
    could pass for another name stays in IDNA (:func:`display_host`). For showing only:
    what is stored, sent and written to WARC records stays as it is."""
    if "%" not in url and "xn--" not in url.lower() and url.isascii():
        return url  # nearly every address: nothing to show otherwise
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    cut = next((i for i, c in enumerate(rest) if c in "/?#"), len(rest))
    netloc, tail = rest[:cut], rest[cut:]
    userinfo, at, hostport = netloc.rpartition("@")
    host, colon, port = hostport.rpartition(":") if "]" not in hostport else (hostport, "", "")
    if not colon or not port.isdigit():
        host, colon, port = hostport, "", ""
    host = display_host(host)
    shown_tail = _ESCAPED_CHAR.sub(_shown_char, tail)
    return f"{scheme}://{userinfo}{at}{host}{colon}{port}{shown_tail}"


#: An address within text (a job's name, a log line): up to a space or a quote.
_URL_IN_TEXT = re.compile(r"\bhttps?://[^\s<>\"'`]+", re.IGNORECASE)
#: Punctuation that ends a sentence rather than the address before it.
_TRAILING = ".,;:!?)]}"


def _shown_in_text(m: re.Match[str]) -> str:
    url = m[0]
    core = url.rstrip(_TRAILING)
    return display_url(core) + url[len(core) :]


def display_text(text: str) -> str:
    """``text`` (a job's name, a log line, a message) with each address in it as
    :func:`display_url` shows it; punctuation after an address stays out of it."""
    if "://" not in text:
        return text
    return _URL_IN_TEXT.sub(_shown_in_text, text)
