"""Captures that are files, not pages, in ``archiver serve``: a PDF to read, anything else
to download.

Every archived page is shown in an ``<iframe sandbox>`` and carries a ``sandbox`` CSP
(:mod:`archiver_app.replay.server`). Chromium runs no PDF viewer in a sandboxed document
(it shows its sad-page icon) and a sandbox without ``allow-downloads`` drops downloads
without a word, so a PDF, an office file, an archive or a file of unknown type showed
nothing. What ``serve`` does instead, by the type of the capture the shell page resolves:

- **A PDF** (``application/pdf``): the shell frames it in an iframe *without* the
  ``sandbox`` attribute, and a PDF response from a content host carries the content policy
  *without* its ``sandbox`` directive (and ``X-Content-Type-Options: nosniff``). Why this
  runs no archived script anywhere that matters:

  * what Chromium makes of a PDF response is a plugin document: an ``<embed>`` of the
    built-in viewer, an extension page (``chrome-extension://mhjfbmd…``) in a process and
    origin of its own. The document's own origin (the archived site's content host, never
    the shell's ``127.0.0.1`` origin) gets no script from the response; script inside a PDF
    is run by PDFium, inside the viewer, with an API of its own and no DOM of any web page;
  * ``nosniff`` and the type itself keep the body from being read as HTML;
  * only a response whose type is PDF loses the ``sandbox`` directive: any other answer
    given to that frame (a redirect's target, a refresh, a link followed) is an archived
    page like any other and is sandboxed by its own policy, frame attribute or not;
  * the rest of the content policy stays (``connect-src``, ``form-action``, ``frame-src``
    on content hosts), and the shell's ``frame-src`` still refuses any navigation of the
    frame that leaves the archive, so a link in the PDF to a live address leads nowhere;
  * the frame is cross-origin to the shell and the shell runs no script, so nothing in it
    reads the token (an HttpOnly cookie of the shell's origin, never in a URL).

- **Any other file** (a type Chromium would download rather than show, as
  :func:`archiver_app.capture.browser.shown_in_tab` lists: office files, archives,
  ``application/octet-stream``, CSV...): the shell page itself says "This capture is a
  file", like the app's replay tab, with a *Download* button. It leads to
  ``/download/<timestamp>/<url>`` on the shell, which answers with the archived bytes as
  ``Content-Disposition: attachment`` under the archived file name: a download is never
  rendered, so it runs nothing in the shell's origin. The archived pages' sandbox keeps
  refusing downloads: a hostile page can still not drop a file into Downloads. So a file
  a frame *inside* an archived page is sent to (a link to a .zip followed) shows the same
  page, sandboxed, naming the file's own address in the shell instead of a button.

HTML, SVG, scripts, images, media, JSON and text stay in the sandboxed frame as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape
from urllib.parse import quote, unquote, urlsplit

from archiver_app.capture.browser import shown_in_tab
from archiver_app.replay.errors import ReplayError
from archiver_app.replay.notice import INFO, message_page
from archiver_app.replay.replayer import Replayer
from archiver_app.replay.response import ReplayResponse
from archiver_app.replay.rewrite import URL_SAFE
from archiver_app.replay.timetravel import Answer, plain_answer
from archiver_app.units import human_bytes

__all__ = [
    "DOWNLOAD",
    "PDF_TYPES",
    "attachment",
    "download",
    "file_answer",
    "in_frame_page",
    "is_file",
    "is_pdf",
    "own_file",
]

PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
DOWNLOAD = "/download/"
_FILENAME = re.compile(r"""filename\*?\s*=\s*(?:UTF-8''|utf-8'')?"?([^";]+)"?""", re.IGNORECASE)
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\"]+')


def _mime(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_pdf(content_type: str | None) -> bool:
    """Whether ``content_type`` is a PDF's."""
    return _mime(content_type) in PDF_TYPES


def is_file(content_type: str | None) -> bool:
    """Whether a capture of ``content_type`` is a file to download: neither a PDF nor a
    type Chromium shows itself (HTML, SVG, scripts, images, media, text...)."""
    mime = _mime(content_type)
    return bool(mime) and mime not in PDF_TYPES and not shown_in_tab(mime)


def filename_of(url: str, headers: Sequence[tuple[str, str]]) -> str:
    """The archived file's name: its ``Content-Disposition`` one, else the URL's last path
    segment, else ``download``; never a path."""
    for name, value in headers:
        if name.lower() == "content-disposition":
            found = _FILENAME.findall(value)
            if found:
                return _clean(unquote(found[-1]))
    return _clean(unquote(urlsplit(url).path.rsplit("/", 1)[-1]))


def _clean(name: str) -> str:
    name = _UNSAFE.sub("_", name).strip(". ")
    return name or "download"


def attachment(url: str, headers: Sequence[tuple[str, str]]) -> str:
    """A ``Content-Disposition`` saving the response under its archived name (RFC 6266:
    an ASCII ``filename`` and the exact one as ``filename*``)."""
    name = filename_of(url, headers)
    ascii_name = name.encode("ascii", "replace").decode().replace("?", "_")
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"


def download_path(ts: str, url: str) -> str:
    """The shell's address that downloads the capture of ``url`` made at ``ts``."""
    return f"{DOWNLOAD}{ts}/{quote(url, safe=URL_SAFE)}"


def file_page(
    url: str, content_type: str, headers: Sequence[tuple[str, str]], size: int, href: str
) -> bytes:
    """The shell's page for a capture that is a file: what it is and a button that
    downloads it from ``href``."""
    return _file_notice(
        url,
        content_type,
        size,
        f'<a class="button" id="download" href="{escape(href, quote=True)}">'
        f"Download {escape(filename_of(url, headers))}</a>",
    )


def in_frame_page(response: ReplayResponse, own_address: str) -> bytes:
    """What a frame inside an archived page shows for a file (a link to a .zip followed):
    the page's sandbox refuses downloads, so it names the address (``own_address``, the
    file's capture in the shell) that offers the file."""
    return _file_notice(
        response.url,
        response.content_type,
        len(response.body),
        f'<p id="own-address">Open <code>{escape(own_address)}</code> in a tab of its '
        "own to download it.</p>",
    )


def _file_notice(url: str, content_type: str, size: int, action_html: str) -> bytes:
    return message_page(
        "file",
        "This capture is a file",
        f"<p><code>{escape(url)}</code> was archived as a file of type "
        f"{escape(_mime(content_type) or 'unknown')} ({escape(human_bytes(size))}), which a "
        "browser does not show.</p>"
        '<p class="detail">Nothing was fetched from the live web.</p>' + action_html,
        accent=INFO,
        head_title=f"Archiver: {url}",
    )


def file_response(replayer: Replayer, ts: str, url: str) -> ReplayResponse | None:
    """The archived file of ``url`` at ``ts`` (a capture's own time) as the frame would
    get it; None when it is not a file (or not there): only files are ever downloaded."""
    try:
        capture = replayer.page_capture(url, ts)
        response = replayer.serve(url, None if ts == "latest" else ts, capture=capture)
    except (ReplayError, ValueError):
        return None
    return response if own_file(response) and is_file(response.content_type) else None


def served_type(replayer: Replayer, ts: str, url: str) -> str | None:
    """The content type ``url`` at ``ts`` is served with (a revisit's is its original's:
    the record itself says ``warc/revisit``); None for no 200-like answer."""
    try:
        capture = replayer.page_capture(url, ts)
        response = replayer.serve(url, None if ts == "latest" else ts, capture=capture)
    except (ReplayError, ValueError):
        return None
    return response.content_type if own_file(response) else None


def own_file(response: ReplayResponse) -> bool:
    """Whether ``response`` is the file itself (a 200-like answer), not an error page."""
    return 200 <= response.status < 300 and response.status != 206 and not response.location


def file_answer(replayer: Replayer, ts: str, url: str, headers: list[tuple[str, str]]) -> Answer:
    """The shell's "This capture is a file" page (``headers``: the shell page's, with its
    type), with a Download button."""
    response = file_response(replayer, ts, url)
    if response is None:
        return plain_answer(404, f"not archived as a file: {url}\n")
    body = file_page(
        url, response.content_type, response.headers, len(response.body), download_path(ts, url)
    )
    return Answer(200, headers, body)


def download(replayer: Replayer, ts: str, url: str) -> Answer:
    """``/download/<ts>/<url>``: the archived file as an attachment under its archived
    name; never rendered, so nothing it holds runs in the shell's origin."""
    response = file_response(replayer, ts, url) if url else None
    if response is None:
        return plain_answer(404, f"not an archived file: {url}\n")
    headers = [
        ("Content-Type", response.content_type),
        ("Content-Disposition", attachment(response.url, response.headers)),
    ]
    return Answer(200, headers, response.body)
