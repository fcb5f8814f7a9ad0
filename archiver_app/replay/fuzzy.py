"""Fuzzy URL matching, after pywb's fuzzy rules and wabac.js's ``fuzzymatcher``.

Pages ask for URLs that differ from the ones captured only in parameters that never
mattered: cache busters (``_=1700000000``, ``cb=...``), analytics tags (``utm_*``), and
JSONP callback names that jQuery makes up per load. Replay drops those parameters from
both sides before comparing. For subresources (scripts, styles, images, fonts, JSON) a
last resort takes the same path with the query most like the requested one.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Parameters dropped before comparing (lower-cased names).
IGNORED_PARAMS = frozenset(
    {
        "_",
        "cb",
        "_cb",
        "cachebust",
        "cachebuster",
        "cache_bust",
        "nocache",
        "rnd",
        "rand",
        "random",
        "timestamp",
        "ts",
        "_t",
        "_ts",
        "v_t",
        "fbclid",
        "gclid",
        "dclid",
        "msclkid",
        "mc_cid",
        "mc_eid",
    }
)
IGNORED_PREFIXES = ("utm_",)
JSONP_PARAMS = frozenset({"callback", "jsonp", "jsoncallback", "cb_name", "jsonpcallback"})

SUBRESOURCE_EXTENSIONS = frozenset(
    {
        "js",
        "mjs",
        "css",
        "json",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "webp",
        "avif",
        "svg",
        "ico",
        "bmp",
        "woff",
        "woff2",
        "ttf",
        "otf",
        "eot",
        "mp4",
        "webm",
        "mp3",
        "ogg",
        "m4a",
        "wav",
    }
)
SUBRESOURCE_MIME = re.compile(
    r"^(image/|font/|audio/|video/|text/css|(application|text)/(x-)?(java|ecma)script|"
    r"application/(json|javascript|font|x-font)|[a-z]+/[a-z.+-]*\+json)",
    re.IGNORECASE,
)
_JSONP_BODY = re.compile(rb"^\s*(/\*\*/\s*)?(?P<name>[\w$.\[\]]+)\s*\(")


def is_ignored_param(name: str) -> bool:
    lname = name.lower()
    return lname in IGNORED_PARAMS or lname in JSONP_PARAMS or lname.startswith(IGNORED_PREFIXES)


def params(url: str) -> list[tuple[str, str]]:
    return parse_qsl(urlsplit(url).query, keep_blank_values=True)


def fuzzy_form(url: str) -> str:
    """``url`` with ignored parameters removed and the rest sorted (its fuzzy identity)."""
    parts = urlsplit(url)
    kept = sorted((k, v) for k, v in params(url) if not is_ignored_param(k))
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, urlencode(kept), ""))


def is_subresource(url: str, mime: str | None = None) -> bool:
    """Whether ``url`` looks like a script, style, image, font, media or JSON resource."""
    if mime and SUBRESOURCE_MIME.match(mime):
        return True
    path = urlsplit(url).path
    ext = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    return ext in SUBRESOURCE_EXTENSIONS


def query_similarity(wanted: str, candidate: str) -> int:
    """How many ``name=value`` pairs (then names) two URLs share, ignoring noise params."""
    a = {(k, v) for k, v in params(wanted) if not is_ignored_param(k)}
    b = {(k, v) for k, v in params(candidate) if not is_ignored_param(k)}
    names = {k for k, _ in a} & {k for k, _ in b}
    return 2 * len(a & b) + len(names) - len(a ^ b)


def jsonp_callback(url: str) -> str | None:
    """The JSONP callback name a URL asks for, if any."""
    return next((v for k, v in params(url) if k.lower() in JSONP_PARAMS and v), None)


def rewrite_jsonp(body: bytes, wanted_callback: str) -> bytes:
    """Rename the callback a stored JSONP body calls to the one this page load asked for."""
    match = _JSONP_BODY.match(body)
    if not match or not re.fullmatch(r"[\w$.\[\]]+", wanted_callback):
        return body
    start, end = match.span("name")
    return body[:start] + wanted_callback.encode() + body[end:]
