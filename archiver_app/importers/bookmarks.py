"""Netscape bookmark files (the HTML that Chrome, Firefox, Edge and Safari export).

Folders (``<H3>`` headings) become tags: a bookmark inside ``Research > Climate`` gets the
tags ``Research`` and ``Climate``. The encoding is the file's byte order mark, else its
``<meta charset>``, else UTF-8; anything else is refused with a clear reason rather than
guessed (a wrong guess would silently corrupt folder names).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from archiver_app.warc.htmltext import text_codec

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.I)
MARKER = b"NETSCAPE-Bookmark-file"


class BookmarksError(ValueError):
    """The bookmarks file cannot be read; the message says why."""


@dataclass
class Bookmark:
    url: str
    title: str
    tags: list[str] = field(default_factory=list)


def looks_like_bookmarks(head: bytes) -> bool:
    lowered = head[:2048].lower()
    return MARKER.lower() in lowered or (b"<dl" in lowered and b"<dt" in lowered)


def decode_bookmarks(data: bytes) -> str:
    for bom, name in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(name)
    declared = _META_CHARSET.search(data[:4096])
    if declared:
        name = declared.group(1).decode("ascii", "replace")
        codec = text_codec(name)
        if codec is None:  # unknown, or no text encoding (hex, base64, zlib...)
            raise BookmarksError(f"unknown encoding {name!r} declared in the file")
        try:
            return data.decode(codec)
        except UnicodeError as exc:
            raise BookmarksError(f"the file is not valid {name} as it declares: {exc}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BookmarksError(
            "unknown encoding: the file is not UTF-8 and declares no charset "
            f"(first bad byte at offset {exc.start}); re-export it as UTF-8"
        ) from exc


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.folders: list[str] = []
        self.pending_folder: str | None = None
        self.in_h3 = False
        self.in_a = False
        self.text: list[str] = []
        self.href: str | None = None
        self.out: list[Bookmark] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h3":
            self.in_h3, self.text = True, []
        elif tag == "a":
            self.in_a, self.text = True, []
            self.href = dict(attrs).get("href")
        elif tag == "dl":
            self.folders.append(self.pending_folder or "")
            self.pending_folder = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "h3" and self.in_h3:
            self.in_h3 = False
            self.pending_folder = "".join(self.text).strip()
        elif tag == "a" and self.in_a:
            self.in_a = False
            if self.href:
                tags = [f for f in self.folders if f]
                self.out.append(Bookmark(self.href.strip(), "".join(self.text).strip(), tags))
        elif tag == "dl" and self.folders:
            self.folders.pop()

    def handle_data(self, data: str) -> None:
        if self.in_h3 or self.in_a:
            self.text.append(data)


def parse_bookmarks(data: bytes) -> list[Bookmark]:
    """Every ``<A HREF>`` of the file with its folder path as tags.

    Raises:
        BookmarksError: unknown or wrong encoding, or no bookmarks at all.
    """
    if not data:
        raise BookmarksError("the file is empty (0 bytes)")
    doc = decode_bookmarks(data)
    parser = _Parser()
    parser.feed(doc)
    parser.close()
    if not parser.out:
        raise BookmarksError("no bookmarks (<A HREF=...>) found in the file")
    return parser.out
