"""What the user asks to capture, parsed and checked before anything starts (no Qt).

The capture dialog, the toolbar field, drag and drop and paste all end here: text or a
bookmarks file becomes a :class:`CaptureRequest` of validated URLs, with every rejected
line reported (line number, text, why) so that nothing the user typed is silently lost.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from archiver_app.errors import InputError
from archiver_app.validation import validate_capture_url

SCOPES = {
    "page": "This page only",
    "prefix": "Same address prefix",
    "host": "Same host",
    "domain": "Same domain",
}

#: The most URLs one request may hold (a bookmarks file of a lifetime fits).
MAX_URLS = 100_000
MAX_BOOKMARKS_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Rejected:
    line: int
    text: str
    reason: str


@dataclass(frozen=True)
class CrawlOptions:
    scope: str = "page"
    depth: int = 1
    page_limit: int = 100
    ignore_patterns: tuple[str, ...] = ()
    concurrency: int = 2
    user_agent: str = ""


@dataclass(frozen=True)
class CaptureRequest:
    urls: tuple[str, ...]
    collection: str = "default"
    collection_name: str = ""  # a new collection's name as typed ("Harbour study")
    tags: tuple[str, ...] = ()
    crawl: CrawlOptions | None = None
    rejected: tuple[Rejected, ...] = field(default=())
    profile: str | None = None  # capture in this browser profile (logged in)
    schedule: str | None = None  # watch: capture again on this schedule, compare each time
    watch_ignore: tuple[str, ...] = ()  # text a watch's comparisons leave out (patterns)
    login_check: bool = True  # False: a page that looks like a login form is kept


#: The dialog's choices of when to capture again, (label, schedule); None: only now.
SCHEDULES = (
    ("Only now", None),
    ("Every hour, and compare", "hourly"),
    ("Every day, and compare", "daily"),
    ("Every week, and compare", "weekly"),
)


def parse_url_lines(text: str) -> tuple[list[str], list[Rejected]]:
    """Valid, de-duplicated URLs from text (one per line; blank lines and ``#`` comments
    skipped), and the lines that were refused with the reason."""
    urls: dict[str, None] = {}
    rejected: list[Rejected] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            urls.setdefault(validate_capture_url(line), None)
        except InputError as exc:
            rejected.append(Rejected(number, line, exc.message))
    return list(urls), rejected


def parse_ignore_patterns(text: str, what: str = "ignore pattern") -> tuple[str, ...]:
    """Regular expressions, one per line; a bad one raises :class:`InputError` naming it
    (``what`` it is, and its line)."""
    patterns = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            re.compile(line)
        except re.error as exc:
            raise InputError(f"{what} on line {number} is not valid: {line!r} ({exc})") from exc
        patterns.append(line)
    return tuple(patterns)


class _BookmarkLinks(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag.lower() == "a":
            for name, value in attrs:
                if name.lower() == "href" and value:
                    self.hrefs.append(value)


def _json_urls(node: Any, out: list[str]) -> None:
    if isinstance(node, dict):
        if node.get("type") == "url" and isinstance(node.get("url"), str):
            out.append(node["url"])
        if isinstance(node.get("uri"), str):  # Firefox JSON backups
            out.append(node["uri"])
        for value in node.values():
            if isinstance(value, dict | list):
                _json_urls(value, out)
    elif isinstance(node, list):
        for value in node:
            _json_urls(value, out)


def parse_bookmarks_file(path: Path) -> tuple[list[str], list[Rejected]]:
    """URLs from a browser bookmarks export (Netscape HTML, Chrome/Firefox JSON) or a
    plain list. Non-web links (``javascript:``, ``place:``, folders) are reported."""
    try:
        size = path.stat().st_size
        if size > MAX_BOOKMARKS_BYTES:
            raise InputError(f"{path.name} is too large for a bookmarks file ({size:,} bytes)")
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    text = raw.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    hrefs: list[str]
    if stripped.startswith(("{", "[")):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path.name} looks like JSON but cannot be read: {exc}") from exc
        hrefs = []
        _json_urls(doc, hrefs)
    elif "<a " in text.lower() or "<!doctype netscape" in text.lower():
        parser = _BookmarkLinks()
        parser.feed(text)
        hrefs = parser.hrefs
    else:
        return parse_url_lines(text)
    if not hrefs:
        raise InputError(f"{path.name} holds no bookmarks")
    return parse_url_lines("\n".join(h.replace("\n", " ") for h in hrefs))


def build_request(
    urls: list[str],
    *,
    collection: str,
    collection_name: str = "",
    tags_text: str = "",
    crawl: CrawlOptions | None = None,
    rejected: list[Rejected] | None = None,
    profile: str | None = None,
    schedule: str | None = None,
    watch_ignore: tuple[str, ...] = (),
    login_check: bool = True,
) -> CaptureRequest:
    """A checked request; raises :class:`InputError` when nothing can be captured."""
    from archiver_app.api.labels import parse_tags
    from archiver_app.validation import validate_slug
    from archiver_app.watch.schedule import parse_schedule

    if not urls:
        raise InputError("there is no valid web address to capture")
    if len(urls) > MAX_URLS:
        raise InputError(f"too many addresses at once ({len(urls):,}; at most {MAX_URLS:,})")
    if crawl is not None and crawl.scope not in SCOPES:
        raise InputError(f"unknown crawl scope {crawl.scope!r}")
    if schedule is not None:
        schedule = parse_schedule(schedule).text
    return CaptureRequest(
        urls=tuple(urls),
        collection=validate_slug(collection),
        collection_name=collection_name,
        tags=tuple(parse_tags(tags_text)),
        crawl=crawl,
        rejected=tuple(rejected or ()),
        profile=profile or None,
        schedule=schedule,
        watch_ignore=watch_ignore if schedule else (),
        login_check=login_check,
    )
