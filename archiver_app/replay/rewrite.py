"""Point the URLs in archived HTML and CSS at ``archiver serve``, and defuse browser hints.

This is the second line of defence: the Content-Security-Policy and the sandboxed frame
built by :mod:`archiver_app.replay.server` are what confine a page. Rewriting keeps the
page working (links, images and refreshes lead into the archive) and stops navigations to
a live URL before they start, since Chromium opens a connection to a navigation's host as
soon as the navigation begins, before any policy refuses it.

URLs are recognised in the spellings a browser reads as absolute: ``http://``,
``//host``, upper case, HTML entities for ``:`` and ``/`` (``http&#58;//``), backslashes
(``http:\\\\``), JSON-escaped slashes (``http:\\/\\/``) and ASCII tabs and newlines inside
the scheme (which URL parsers delete). ``<meta http-equiv=refresh content="1;http://...">``
is covered by the same rule. Root-relative URLs in URL attributes and CSS ``url()`` are
pointed at the page's own origin (no ``Referer`` is ever sent to map them later).
Speculation rules, ``rel=preconnect|dns-prefetch|prefetch|prerender`` hints,
``<meta name=referrer>`` and ``referrerpolicy=`` are renamed so the browser ignores them.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urljoin, urlsplit

from archiver_app.replay.dynamic_import import hook_dynamic_imports
from archiver_app.replay.guard import NAVIGATION_GUARD

URL_SAFE = ":/?&=%#+@,;~"
_WS = rb"[\t\n\r]*"  # deleted by URL parsers anywhere in a URL
_COLON = rb"(?::|&#0*58;?|&#x0*3a;?|&colon;)"
_SLASH = rb"(?:/|\\/|\\\\|\\|&#0*47;?|&#x0*2f;?|&sol;|&#0*92;?|&#x0*5c;?|&bsol;)"
_SCHEME = _WS.join([b"h", b"t", b"t", b"p", b"(s?)"])
# The lookahead first: most positions fail on one character class (about a third faster
# than entering the optional scheme at each byte).
_ABSOLUTE = re.compile(
    rb"(?=[hH\t\n\r/\\&])(?<![\w.+\-/\\&#:])(?:(" + _SCHEME + rb")" + _WS + _COLON + rb")?" + _WS
    + _SLASH + _WS + _SLASH + rb"(?=" + _WS + rb"[A-Za-z0-9\[%&])",
    re.IGNORECASE,
)  # fmt: skip
# A root-relative URL in a URL attribute or CSS url(): "/style.css", not "//host". Matched
# case-sensitively in the lower-cased page (same offsets): nearly twice as fast as
# re.IGNORECASE, which keeps the regex engine from skipping ahead.
_ROOT_RELATIVE = re.compile(
    rb"""((?:\b(?:src|href|action|formaction|poster|data|background|cite|longdesc)\s*=\s*"""
    rb"""["']?)|(?:url\(\s*["']?))/(?![/\\])"""
)
_SPECULATION = re.compile(rb"""(\btype\s*=\s*["']?)(speculationrules)""", re.IGNORECASE)
_REL = re.compile(rb"""(\brel\s*=\s*)("[^"]*"|'[^']*'|[^\s>]+)""", re.IGNORECASE)
# <meta name=referrer> and referrerpolicy= would loosen the forced no-referrer policy.
_REFERRER = re.compile(
    rb"""(\bname\s*=\s*["']?)(referrer\b)|(\s)(referrerpolicy\s*=)""", re.IGNORECASE
)
# integrity= on a script or style sheet: replay points the addresses in what it serves at
# the archive, and the browser would then refuse the changed file as tampered with. Both
# are matched in the lower-cased page; an attribute counts when a <script or <link start
# tag before it is not closed by a ">" (see defuse_integrity).
_INTEGRITY_ATTRIBUTE = re.compile(rb"""[\s"'/](integrity\s*=)""")
_SCRIPT_OR_LINK = re.compile(rb"<(?:script|link)\b")
_TAG_REACH = 4096  # how far into a start tag its integrity= is looked for
_HINTS = re.compile(rb"\b(preconnect|dns-prefetch|prefetch|prerender)\b", re.IGNORECASE)
_HINT_WORDS = (b"preconnect", b"prefetch", b"prerender")  # dns-prefetch holds prefetch
_DOCTYPE = re.compile(rb"^(\s*(?:<!--.*?-->\s*)*<!doctype[^>]*>)?", re.IGNORECASE | re.DOTALL)
# "Refresh: 5; url=next.html" (also "5, URL='next.html'" and a bare "5"), as browsers read it.
_REFRESH = re.compile(
    r"""^\s*(?P<delay>[\d.]*)\s*(?:[;,]\s*(?:url\s*=\s*)?(?P<url>.*?))?\s*$""",
    re.IGNORECASE | re.DOTALL,
)


# An absolute http(s) URL where markup or CSS names a resource: a URL attribute's value, a
# CSS url() or @import string. Each "http" of the lower-cased page is found at C speed, and
# what precedes it matched backwards: the bytes before it, reversed, start with this (a
# regex trying each byte of the page for an attribute was about five times slower).
_HTTP = re.compile(rb"https?(?=:)")
_MARKUP_BEFORE_REVERSED = re.compile(
    rb"""\s*(?:["']?\s*=\s*(?:crs|ferh|noitca|noitcamrof|retsop|atad|dnuorgkcab)(?![\w-])"""
    rb"""|["']?\s*\(lru|["']\s+tropmi@)"""
)
_MARKUP_REACH = 256  # how far before an address its attribute or url( is looked for


def prefix_schemes(body: bytes, prefix: bytes) -> bytes:
    """``body`` (HTML or CSS) with ``prefix`` before the scheme of each absolute http(s) URL
    of a resource (``src="https://..."``, ``url(http://...)``): ``archive-https://...``
    for the replay view, whose requests written so never need its http(s) redirect.
    Text, scripts' strings and protocol-relative (``//host``) URLs are left as they are."""
    low = body.lower()
    if b"http" not in low:
        return body
    out, last = [], 0
    for m in _HTTP.finditer(low):
        at = m.start()
        if _MARKUP_BEFORE_REVERSED.match(low[max(0, at - _MARKUP_REACH) : at][::-1]):
            out += [body[last:at], prefix, m.group()]
            last = m.end()
    return b"".join(out) + body[last:] if out else body


# An absolute http(s) module specifier: import("…"), import … from "…", import "…",
# export … from "…". Group 1 is what precedes the scheme (group 2). Each look behind
# follows its word, so the search skips from word to word (three times faster on a bundle).
MODULE_IMPORT = re.compile(
    rb"""((?:import(?<![\w$.]import)\s*\(\s*|import(?<![\w$.]import)\s*"""
    rb"""|from(?<![\w$.]from)\s*)["'`])(https?)(?=:)"""
)
_SCRIPT_ELEMENT = re.compile(
    rb"(<script\b[^>]{0,4096}>)(.*?)(?=</script)", re.IGNORECASE | re.DOTALL
)
_IMPORT_MAP = re.compile(rb"""\btype\s*=\s*["']?\s*importmap\b""", re.IGNORECASE)
# A JSON string of an import map that is a full http(s) address: a key, a scope, a target.
_MAP_ADDRESS = re.compile(rb'("\s*)(https?)(?=:)', re.IGNORECASE)


def prefix_module_imports(body: bytes, prefix: bytes, *, html: bool = False) -> bytes:
    """``body`` (JavaScript; with ``html``, the scripts of an HTML page) with ``prefix``
    before the scheme of each module it imports by an absolute http(s) address: an import
    is a CORS request, which the replay view's redirect to its own scheme would lose, and
    syntax, which no page script can wrap (a specifier the script computes is given to
    the page script's function first: :mod:`archiver_app.replay.dynamic_import`). In a
    page, each full address of an import map (``<script type=importmap>``) gets it too.
    Other strings are left as they are."""
    if b"import" not in body and b"from" not in body:
        return body

    def imports(text: bytes) -> bytes:
        text = MODULE_IMPORT.sub(lambda m: m.group(1) + prefix + m.group(2).lower(), text)
        return hook_dynamic_imports(text)

    def script(m: re.Match[bytes]) -> bytes:
        if not _IMPORT_MAP.search(m.group(1)):
            return m.group(1) + imports(m.group(2))
        # Its targets are fetched as modules, its keys and scopes are compared with the
        # addresses of modules: all of them, written as the archive addresses they are.
        return m.group(1) + _MAP_ADDRESS.sub(
            lambda a: a.group(1) + prefix + a.group(2).lower(), m.group(2)
        )

    if not html:
        return imports(body)
    # Only up to the last end tag: a script element never closed after it would make each
    # later start tag scan to the end of the page (quadratic in a hostile one).
    end = body.lower().rfind(b"</script") + len(b"</script")
    if end < len(b"</script"):
        return body
    head = _SCRIPT_ELEMENT.sub(script, body[:end])
    return head + body[end:]


def guard_navigation(body: bytes) -> bytes:
    """``body`` (HTML) with the script of :mod:`archiver_app.replay.guard` first, after
    any doctype (a script before it would switch the page to quirks mode)."""
    return _DOCTYPE.sub(lambda m: (m.group(1) or b"") + NAVIGATION_GUARD, body, count=1)


def rewrite_links(body: bytes, prefix: str, page_url: str | None = None) -> bytes:
    """Point absolute and (with ``page_url``) root-relative links at ``prefix``; defuse
    speculation rules and connection hints."""

    def absolute(match: re.Match[bytes]) -> bytes:
        plain = match.group(1) is not None and not match.group(2)
        scheme = b"http:" if plain else b"https:"
        return prefix.encode() + scheme + b"//"

    if page_url:  # first: the absolute URLs rewritten next start with "/" too
        parts = urlsplit(page_url)
        origin = f"{prefix}{parts.scheme}://{parts.netloc}/".encode()
        out, last = [], 0
        for m in _ROOT_RELATIVE.finditer(body.lower()):
            out += [body[last : m.end(1)], origin]
            last = m.end()
        body = b"".join(out) + body[last:] if out else body
    body = _ABSOLUTE.sub(absolute, body)
    # The rest only rename words a page rarely holds: each pass is skipped when its word is
    # not in the page at all (a pass over a large page costs milliseconds, the test µs).
    low = body.lower()
    if b"speculationrules" in low:
        body = _SPECULATION.sub(rb"\1x-archive-\2", body)
    if b"referrer" in low:
        body = _REFERRER.sub(
            lambda m: (m.group(1) or m.group(3)) + b"x-archive-" + (m.group(2) or m.group(4)),
            body,
        )
    if any(word in low for word in _HINT_WORDS):
        body = _REL.sub(lambda m: m.group(1) + _HINTS.sub(rb"x-archive-\1", m.group(2)), body)
    return defuse_integrity(body, low)


def defuse_integrity(body: bytes, low: bytes | None = None) -> bytes:
    """``body`` (HTML) with the ``integrity`` of its scripts and style sheets renamed so
    the browser ignores it: what replay serves is the archived file with its addresses
    pointed at the archive, which the hash no longer matches (``low``: ``body.lower()``)."""
    low = body.lower() if low is None else low
    if b"integrity" not in low:
        return body
    # One pass over the attributes, the tags' starts and the ">"s, each looked at once (a
    # regex from each tag's start scanned up to 4096 bytes for it: seconds for a page of
    # unclosed <link tags).
    tags = _SCRIPT_OR_LINK.finditer(low)
    tag = next(tags, None)
    open_tag, closed, seen = -1, -1, 0  # last <script/<link ended before here, last ">"
    out, last = [], 0
    for m in _INTEGRITY_ATTRIBUTE.finditer(low):
        while tag is not None and tag.end() <= m.start():
            open_tag, tag = tag.end(), next(tags, None)
        closed = max(closed, low.rfind(b">", seen, m.start()))
        seen = m.start()
        if closed < open_tag and m.start() - open_tag <= _TAG_REACH:
            out += [body[last : m.start(1)], b"x-archive-"]
            last = m.start(1)
    return b"".join(out) + body[last:] if out else body


def rewrite_refresh(value: str, page_url: str, prefix: str) -> str | None:
    """A ``Refresh`` header whose target is this server, or None to drop it.

    The target is resolved against ``page_url``; one that is not http(s) (``javascript:``,
    unparsable...) is dropped, since the browser would otherwise follow it as stored.
    """
    match = _REFRESH.match(value)
    if match is None:
        return None
    delay = match.group("delay") or "0"
    target = (match.group("url") or "").strip().strip("'\"")
    if not target:
        return delay  # reload the same (archived) page
    try:
        absolute = urljoin(page_url, re.sub(r"[\t\n\r]", "", target).replace("\\", "/"))
    except ValueError:
        return None
    if urlsplit(absolute).scheme.lower() not in ("http", "https"):
        return None
    return f"{delay}; url={prefix}{quote(absolute, safe=URL_SAFE)}"
