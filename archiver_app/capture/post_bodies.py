"""Request bodies DevTools leaves out of ``Network.requestWillBeSent``.

A body the browser holds as a Blob or a file, or a large one, comes with ``hasPostData``
but without ``postData`` or the bytes of its ``postDataEntries``. :class:`PostBodies` asks
``Network.getRequestPostData`` for it as soon as the request is reported, while the request
is alive (a tab closed before the answer came takes DevTools' copy with it), and the
recorder puts the answer in the request record when it writes it. A file a page reads from
disk is never in DevTools' copy: see :mod:`archiver_app.capture.browse.uploads`.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from typing import Any

from archiver_app.capture.exchange import Event, Exchange, latin
from archiver_app.capture.extract import first_line


def sent_body(request: Event) -> tuple[bytes, bool]:
    """The body a ``requestWillBeSent``'s ``request`` carries, and whether DevTools left
    (some of) it out."""
    post = request.get("postData") or ""
    entries = request.get("postDataEntries") or []
    if not post and entries:
        post = "".join(base64.b64decode(e.get("bytes", "")).decode("latin-1") for e in entries)
    left_out = (
        bool(request.get("hasPostData"))
        and not request.get("postData")
        and (not entries or any("bytes" not in e for e in entries))
    )
    return latin(post), left_out


class PostBodies:
    """The bodies asked for, per request. Used from the recorder's loop only."""

    def __init__(self, sessions: dict[str, Any], notes: list[str]) -> None:
        self._sessions, self._notes = sessions, notes  # the recorder's own
        self._asked: set[asyncio.Future[dict[str, Any]]] = set()

    def ask(self, request_id: str) -> asyncio.Future[dict[str, Any]]:
        """Ask for the body of ``request_id`` (``prefix|id`` for a worker's) now."""
        session_key, _, rid = request_id.rpartition("|")
        asked: asyncio.Future[dict[str, Any]] = asyncio.ensure_future(
            self._sessions[session_key].send("Network.getRequestPostData", {"requestId": rid})
        )
        self._asked.add(asked)
        return asked

    async def fill(self, ex: Exchange, keep: Callable[[dict[str, str], bytes], bytes]) -> None:
        """Put each body asked for into its hop (``keep``: what of it is kept); a body that
        could not be had stays as it was, with a note."""
        for hop in ex.hops:
            asked = hop.post_data_asked
            if asked is None:
                continue
            try:  # shielded: a write cancelled at finish() leaves the answer to the next
                got = await asyncio.shield(asked)
            except Exception as exc:  # the request is gone from DevTools' memory
                self._notes.append(
                    f"{hop.url}: its request body could not be read ({first_line(exc)})"
                )
                got = None
            hop.post_data_asked = None
            self._asked.discard(asked)
            if got is not None:
                text = str(got.get("postData") or "")
                data = base64.b64decode(text) if got.get("base64Encoded") else latin(text)
                hop.post_data = keep(hop.headers, data)

    async def close(self) -> None:
        """Drop the answers no record was written for."""
        for asked in self._asked:
            asked.cancel()
        await asyncio.gather(*self._asked, return_exceptions=True)
        self._asked.clear()
