"""Title, language and readable text of an HTML document, fast enough for bulk indexing.

Regular expressions rather than a full parser: indexing reads tens of thousands of pages and
only needs words for search and a title for the table, not a DOM. Scripts, styles,
templates, the head and comments are dropped; entities are unescaped. White space in the
body is left as it is (collapsing it costs more than everything else here and the full-text
index ignores it); titles and snippets are collapsed to single spaces.
"""

from __future__ import annotations

import codecs
import html
import re
from dataclasses import dataclass

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.I)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
_HTML_LANG = re.compile(
    r"""<html\b[^>]*?\blang\s*=\s*["']?([A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)""", re.I
)
_DROP = re.compile(
    r"<(?:!--.*?-->|(script|style|noscript|template|svg|head)\b[^>]*>.*?</\1\s*>)", re.I | re.S
)
_TAG = re.compile(r"<[^>]*>")

#: Text kept per page (search sees the first ~1 MB, as store.fulltext does).
MAX_TEXT = 1_000_000
TEXT_MIMES = frozenset({"text/plain", "text/markdown", "text/csv"})


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


def extract_html(data: bytes, charset: str | None = None) -> PageText:
    doc = decode_html(data, charset)
    title_match = _TITLE.search(doc, 0, 65536)
    title = _clean(html.unescape(_TAG.sub("", title_match.group(1)))) if title_match else None
    lang_match = _HTML_LANG.search(doc, 0, 8192)
    body = _TAG.sub(" ", _DROP.sub(" ", doc))
    if "&" in body:
        body = html.unescape(body)
    return PageText(
        title=title[:1000] if title else None,
        language=lang_match.group(1).lower() if lang_match else None,
        text=body.strip()[:MAX_TEXT],
    )


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
