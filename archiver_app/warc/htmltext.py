"""Title, language and readable text of an HTML document, in time linear in its size.

The document is parsed by lexbor (through selectolax): a maintained HTML5 parser in C that
recovers from any input as a browser does and tokenises in one pass, so an unclosed comment,
``<script>`` or attribute costs no more than a closed one (the regular expressions used
before went quadratic on those). Scripts, styles, templates, SVG, the head and comments are
dropped; entities are decoded by the parser. Text nodes are joined with a space; titles and
snippets are collapsed to single spaces.

Tree construction itself is not linear on hostile nesting (lexbor walks its stack of open
elements for every tag, and reopens every unclosed formatting element at each new block,
as the HTML standard says), so :func:`_tame` first counts the tags in one linear pass.
Where they nest deeper than :data:`MAX_DEPTH` or leave more than :data:`MAX_FORMATTING`
formatting elements open, the document is rewritten before parsing: formatting tags
(``<b>``, ``<a>``, ``<font>``...) carry no text and are replaced by a space, and so is a
start tag that would nest too deeply (its text is kept). Each record's work is bounded
further by :data:`MAX_HTML` characters parsed and :data:`MAX_TEXT` kept.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.I)
_LANG = re.compile(r"[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*")
_TITLE_TAG = re.compile(r"<[^<>]*>")
_DROPPED = "script, style, noscript, template, svg, head"

#: Text kept per page (search sees the first ~1 MB, as store.fulltext does).
MAX_TEXT = 1_000_000
#: Characters of a document parsed (a page's payload is capped at 8 MB by the scanner).
MAX_HTML = 8_000_000
#: Deepest element nesting handed to the parser (Chromium's parser stops at 512).
MAX_DEPTH = 256
#: Most formatting elements (``<b>``, ``<font>``...) left open before they are all dropped.
MAX_FORMATTING = 32
TEXT_MIMES = frozenset({"text/plain", "text/markdown", "text/csv"})

# A start or end tag as the counting pass sees it: its name and, if the tag ends within a
# bounded stretch without another "<", its end ("/" before it: self-closing).
_TOKEN = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:_-]*)(?:[^<>]{0,2048}?(/?)>)?")


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


_FORMATTING = _names("a b big code em font i nobr s small strike strong tt u")  # HTML's list
# A formatting start or end tag (name complete), with its rest as _TOKEN reads it.
_FORMATTING_TAG = re.compile(
    rf"</?(?:{'|'.join(sorted(_FORMATTING))})(?![A-Za-z0-9:_-])(?:[^<>]{{0,2048}}?/?>)?",
    re.IGNORECASE,
)
_VOID = _names(
    "area base basefont bgsound br col embed frame hr image img input keygen link meta "
    "menuitem param source track wbr"
)
# An end tag does not close elements beyond these (scope boundaries).
_BARRIERS = _names("applet marquee math object svg table template")


@dataclass(frozen=True)
class PageText:
    title: str | None
    language: str | None
    text: str


#: Python text codecs that are no document charset (host names, or always failing).
_NOT_CHARSETS = frozenset({"idna", "punycode", "undefined"})


def text_codec(name: str | None) -> str | None:
    """The codec's canonical name if ``name`` is a text encoding a document can be in, else None.

    ``codecs.lookup`` also knows bytes-to-bytes codecs (``hex``, ``base64``, ``zlib``,
    ``rot13``...) that ``bytes.decode`` refuses with a LookupError; a page or file that
    names one as its charset is treated as naming none.
    """
    if not name:
        return None
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):  # ValueError: a name with a NUL in it
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_CHARSETS:
        return None
    return info.name


def decode_text(data: bytes, *charsets: str | None) -> str:
    """``data`` decoded with the first of ``charsets`` that is a text encoding and decodes
    (replacing bad bytes), else as UTF-8 replacing bad bytes. Never raises."""
    for name in charsets:
        codec = text_codec(name)
        if codec is None:
            continue
        try:
            return data.decode(codec, errors="replace")
        except (UnicodeError, LookupError):  # codecs that cannot replace (punycode...)
            continue
    return data.decode("utf-8", errors="replace")


def decode_html(data: bytes, charset: str | None) -> str:
    """Decode with the HTTP charset, else a ``<meta charset>``, else UTF-8 (replacing errors)."""
    candidates = [charset]
    if m := _META_CHARSET.search(data[:4096]):
        candidates.append(m.group(1).decode("ascii", "replace"))
    return decode_text(data, *candidates)


def parse_html(doc: str) -> LexborHTMLParser:
    """The tree of ``doc`` (its first :data:`MAX_HTML` characters), tamed first so that
    building it stays linear in its size (see the module docstring)."""
    return LexborHTMLParser(_tame(doc[:MAX_HTML]))


def extract_html(data: bytes, charset: str | None = None) -> PageText:
    """Title, ``<html lang>`` and text of an HTML document (see the module docstring)."""
    tree = parse_html(decode_html(data, charset))
    title_node = tree.css_first("title")
    # Tags written inside a title are text to the parser; they were never meant as words.
    title = _clean(_TITLE_TAG.sub("", title_node.text()[:4096])) if title_node else None
    root = tree.root
    lang = root.attributes.get("lang") if root is not None else None
    lang_match = _LANG.match(lang.strip()) if lang else None
    for node in tree.css(_DROPPED):
        node.decompose()
    body = root.text(separator=" ") if root is not None else ""
    return PageText(
        title=title[:1000] if title else None,
        language=lang_match.group(0).lower() if lang_match else None,
        text=body.strip()[:MAX_TEXT],
    )


def _tame(doc: str) -> str:
    """``doc`` with formatting tags, and start tags nested deeper than :data:`MAX_DEPTH`,
    replaced by a space; linear in its length (see the module docstring).

    The nesting is estimated from the tags alone, as a stack of open elements that grows
    with every start tag but void and self-closing ones, and shrinks when an end tag names
    an element on it (not past a scope boundary). Elements the parser closes implicitly
    (``<p>``, ``<li>``...) and tags inside comments, scripts and attribute values are
    counted too: the estimate may be deeper than the parser's stack, never shallower, and a
    tag replaced needlessly changes no word of the text. Formatting elements are counted
    apart, as the parser's list of them: one stays there (and is reopened at every block)
    until its own end tag. Most documents stay within both bounds and are left as they
    are; a document that does not loses all its formatting tags and its deepest tags.
    """
    if doc.count("<") <= MAX_DEPTH:  # too few tags to nest or reopen too deeply
        return doc
    stack: list[str] = []
    open_names: dict[str, int] = {}
    active: dict[str, int] = {}  # formatting elements not closed by their own end tag
    reopened = 0
    for closing, name, slash in _TOKEN.findall(doc.lower()):
        if name in _FORMATTING:
            if closing:
                if active.get(name):
                    active[name] -= 1
                    reopened -= 1
            else:
                active[name] = active.get(name, 0) + 1
                reopened += 1
                if reopened > MAX_FORMATTING:
                    break
        if closing:
            if open_names.get(name):
                _close(stack, open_names, name)
        elif slash or name in _VOID:
            continue
        elif len(stack) < MAX_DEPTH:
            stack.append(name)
            open_names[name] = open_names.get(name, 0) + 1
        else:
            break
    else:
        return doc  # the common case: nothing to rewrite
    return _flatten(_FORMATTING_TAG.sub(" ", doc))


def _flatten(doc: str) -> str:
    """``doc`` with start tags nested deeper than :data:`MAX_DEPTH` replaced by a space
    (the nesting estimated as :func:`_tame` says)."""
    out: list[str] = []
    stack: list[str] = []
    open_names: dict[str, int] = {}
    kept = 0
    for m in _TOKEN.finditer(doc):
        closing, name, slash = m.groups()
        name = name.lower()
        if closing:
            if open_names.get(name):
                _close(stack, open_names, name)
            continue
        if slash or name in _VOID:
            continue
        if len(stack) < MAX_DEPTH:
            stack.append(name)
            open_names[name] = open_names.get(name, 0) + 1
            continue
        out.append(doc[kept : m.start()])
        out.append(" ")
        kept = m.end()
    out.append(doc[kept:])
    return "".join(out)


def _close(stack: list[str], open_names: dict[str, int], name: str) -> None:
    """Pop ``stack`` down to the innermost ``name``, unless a scope boundary is above it."""
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] == name:
            for popped in stack[i:]:
                open_names[popped] -= 1
            del stack[i:]
            return
        if stack[i] in _BARRIERS:
            return


def extract_plain(data: bytes, charset: str | None = None) -> PageText:
    text = decode_text(data, charset)
    return PageText(title=None, language=None, text=text.strip()[:MAX_TEXT])


def _clean(text: str) -> str:
    """White space collapsed to single spaces (search and snippets need no layout)."""
    return " ".join(text.split())


def snippet_of(text: str, limit: int = 300) -> str:
    """The first ``limit`` characters of ``text`` on one line (the table's snippet column)."""
    flat = " ".join(text[: limit * 8].split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


__all__ = [
    "TEXT_MIMES",
    "PageText",
    "decode_html",
    "decode_text",
    "extract_html",
    "extract_plain",
    "snippet_of",
    "text_codec",
]
