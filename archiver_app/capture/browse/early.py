"""What a tab fetched before its recorder listened: a popup's first document, mostly.

A tab the page opens (``target=_blank``, ``window.open``) reaches the session once the
browser has already sent its first requests, so the tab's DevTools recorder never sees
them. Playwright's own session did: the session keeps the Playwright requests of a tab
until its recorder listens (:attr:`.tab.TabRecorder.early`), and :func:`write_early`
writes each one the recorder did not see from what the browser received, headers and
body, without fetching anything again (the server answered once; the WARC has it once).
Such a record carries the headers as Playwright reports them, not the header text as
received; the page's notes say which.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from archiver_app.capture.extract import first_line
from archiver_app.warc.form_secrets import blank_request_body
from archiver_app.warc.httpmsg import HttpRequest, HttpResponse
from archiver_app.warc.surt import strip_fragment
from archiver_app.warc.writer import CaptureWarcWriter


def _target(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


async def write_early(
    requests: Iterable[Any],
    seen: set[str],
    writer_for: Callable[[str], CaptureWarcWriter],
    notes: list[str],
    max_body: int,
) -> int:
    """Write each Playwright request in ``requests`` whose URL is not in ``seen`` (URLs the
    recorder saw); ``writer_for(url)`` picks the WARC. Returns how many were written."""
    written = 0
    for request in requests:
        url = strip_fragment(str(request.url))
        if url in seen or not url.startswith(("http://", "https://")):
            continue
        seen.add(url)
        try:
            response = await request.response()
            if response is None:
                continue
            body = bytes(await response.body()) if response.status not in range(300, 400) else b""
            if len(body) > max_body:
                notes.append(f"{url}: over the {max_body} byte limit, not kept")
                continue
            headers = [(h["name"], h["value"]) for h in await response.headers_array()]
            sent = [(h["name"], h["value"]) for h in await request.headers_array()]
        except Exception as exc:
            notes.append(f"{url}: fetched before the tab was recorded, lost ({first_line(exc)})")
            continue
        if not any(name.lower() == "host" for name, _ in sent):
            sent.insert(0, ("Host", urlsplit(url).netloc))
        post = b""
        with contextlib.suppress(Exception):
            post = request.post_data_buffer or b""
        post = blank_request_body(sent, post)  # a password's value is not kept
        writer_for(url).write_exchange(
            url,
            HttpRequest(str(request.method), _target(url), sent, post),
            HttpResponse(int(response.status), str(response.status_text), headers),
            body,
        )
        notes.append(f"{url}: fetched before the tab was recorded; headers as Playwright saw them")
        written += 1
    return written
