"""What a rendered page says about itself: title, language, text, links, snippet."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from archiver_app.urls import route_fragment
from archiver_app.warc.httpmsg import file_name

SNIPPET_CHARS = 300

EXTRACT_JS = """
() => {
  const doc = document;
  const html = doc.documentElement;
  const meta = doc.querySelector('meta[http-equiv="content-language" i]');
  const links = [];
  for (const a of doc.querySelectorAll('a[href], area[href]')) links.push(a.href);
  for (const f of doc.querySelectorAll('iframe[src], frame[src]')) links.push(f.src);
  const type = doc.contentType || '';
  const media = type.startsWith('audio/') || type.startsWith('video/');
  const player = media ? doc.querySelector('video, audio') : null;
  return {
    title: doc.title || '',
    lang: (html && html.getAttribute('lang')) || (meta && meta.getAttribute('content')) || '',
    text: doc.body ? doc.body.innerText : (html ? html.textContent : ''),
    links: links,
    charset: doc.characterSet || '',
    contentType: type,
    duration: player && isFinite(player.duration) ? player.duration : null,
  };
}
"""


@dataclass(frozen=True)
class PageFacts:
    title: str = ""
    language: str | None = None
    text: str = ""
    outlinks: list[str] = field(default_factory=list)
    content_type: str = ""
    # where the text of the page's frames starts in ``text`` (its length: the frames were
    # read and none had text); None: they were not read (a file, a PDF, a failed read)
    frames_at: int | None = None

    @property
    def snippet(self) -> str:
        return make_snippet(self.text)

    @property
    def frames_text(self) -> str:
        """The text of the page's frames, as read after its own ("" when none or unread)."""
        return "" if self.frames_at is None else self.text[self.frames_at :].strip()

    def with_frames(self, framed: str) -> PageFacts:
        """These facts with ``framed``, the text of the page's frames, after the page's
        own (marked as read, though ``framed`` be empty)."""
        if not framed:
            return replace(self, frames_at=len(self.text))
        own = self.text.rstrip()
        return replace(self, text=f"{own}\n\n{framed}", frames_at=len(own))

    def provenance(self) -> dict[str, int]:
        """What the capture's provenance keeps of its text: where its frames' text starts,
        so a comparison with a capture that holds no frames' text can leave it out."""
        return {} if self.frames_at is None else {FRAMES_AT: self.frames_at}


#: The provenance key of :attr:`PageFacts.frames_at` (read by ``compare.frames``).
FRAMES_AT = "text_frames_at"


def file_facts(url: str, disposition: str | None = None) -> PageFacts:
    """The facts of a page that is a file (a PDF, a download): named after the file
    (:func:`~archiver_app.warc.httpmsg.file_name`)."""
    return PageFacts(title=file_name(url, disposition), outlinks=[])


def is_media(mime: str) -> bool:
    """Whether ``mime`` is a sound's or a video's."""
    return mime.strip().lower().startswith(("audio/", "video/"))


def media_title(url: str, mime: str, duration: object = None) -> str:
    """The title of a sound or video opened by its own address, which the browser leaves
    untitled: ``song.mp3 (audio, 3:25)``, as it names an image ``photo.png (400×300)``;
    without the duration (seconds) when the player did not know it."""
    kind = "audio" if mime.strip().lower().startswith("audio/") else "video"
    seconds = int(duration + 0.5) if isinstance(duration, int | float) and duration > 0 else 0
    if seconds <= 0:
        return f"{file_name(url)} ({kind})"
    hours, rest = divmod(seconds, 3600)
    clock = f"{hours}:{rest // 60:02}:{rest % 60:02}" if hours else f"{rest // 60}:{rest % 60:02}"
    return f"{file_name(url)} ({kind}, {clock})"


def first_line(error: object, limit: int = 200) -> str:
    """The first line of an error message (Playwright appends call logs), never empty."""
    lines = str(error).strip().splitlines()
    text = lines[0].strip()[:limit] if lines else ""
    if text:
        return text
    return "unknown error" if isinstance(error, str) else type(error).__name__


def make_snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut + "…"


def clean_links(links: list[Any]) -> list[str]:
    """Absolute http(s) links, de-duplicated in page order; fragments dropped unless they are
    routes (:func:`route_fragment`)."""
    seen: dict[str, None] = {}
    for link in links:
        if not isinstance(link, str):
            continue
        try:
            parts = urlsplit(link.strip())
        except ValueError:
            continue
        if parts.scheme not in {"http", "https"} or not parts.netloc:
            continue
        seen.setdefault(urlunsplit(parts._replace(fragment=route_fragment(parts.fragment))), None)
    return list(seen)


def normalise_language(value: str) -> str | None:
    value = value.split(",", maxsplit=1)[0].strip()
    if not value or not re.fullmatch(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*", value):
        return None
    return value[:35]


def facts_from(raw: dict[str, Any]) -> PageFacts:
    return PageFacts(
        title=str(raw.get("title") or "").strip(),
        language=normalise_language(str(raw.get("lang") or "")),
        text=str(raw.get("text") or ""),
        outlinks=clean_links(list(raw.get("links") or [])),
        content_type=str(raw.get("contentType") or ""),
    )


#: A frame's visible text (same-origin or not: the browser reads each frame itself).
FRAME_TEXT_JS = "() => document.body ? document.body.innerText : ''"
#: Where Chromium shows a frame's or a tab's network error page ("… refused to connect").
ERROR_PAGE = "chrome-error:"
#: Frames read for their text, at most, and how long they may take together (read at
#: once): a page of many ad frames, or of frames that do not answer, costs the capture at
#: most this, and never its own text (which the page's extraction budget bounds too).
MAX_FRAMES = 20
FRAME_SECONDS = 2.0


async def extract(page: Any) -> PageFacts:
    """The page's facts; its text followed by the text of its frames, in the order the
    browser made them (text the page shows in an iframe is the page's text for search and
    comparisons, as a reader sees it)."""
    raw = await page.evaluate(EXTRACT_JS)
    facts = facts_from(raw)
    if not facts.title and is_media(facts.content_type):  # the browser names none
        title = media_title(page.url, facts.content_type, raw.get("duration"))
        facts = replace(facts, title=title)
    return facts.with_frames("\n\n".join(await frames_text(page)))


async def frames_text(page: Any) -> list[str]:
    """The visible text of each frame of ``page`` that has some, in the browser's order (at
    most :data:`MAX_FRAMES` frames, read at once within :data:`FRAME_SECONDS`; a frame that
    fails or has not answered by then is left out, and so is one whose load failed: its
    text is the browser's error page's, not the page's)."""
    frames = [f for f in page.frames if f is not page.main_frame and _read(f)]
    tasks = [asyncio.ensure_future(f.evaluate(FRAME_TEXT_JS)) for f in frames[:MAX_FRAMES]]
    if not tasks:
        return []
    try:
        await asyncio.wait(tasks, timeout=FRAME_SECONDS)
    finally:  # (cancelled too: no read outlives the page's extraction)
        for task in tasks:
            task.cancel()
    answers = [t.result() for t in tasks if not t.cancelled() and t.exception() is None]
    return [text.strip() for text in answers if isinstance(text, str) and text.strip()]


def _read(frame: Any) -> bool:
    """Whether a frame's text is read: it is attached and not at an error page."""
    return not frame.is_detached() and not str(frame.url).startswith(ERROR_PAGE)
