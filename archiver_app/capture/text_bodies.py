"""A text body DevTools gave back decoded, back to the bytes that were served.

:class:`~archiver_app.capture.charsets.FrameCharsets` encodes the text again in the
charset the browser decoded it with. Whether that gave the bytes served is checked by
their count (``Network.dataReceived`` reports how many arrived, after any
``Content-Encoding``). A body that does not check (a charset the browser guessed or
sniffed, a byte-order mark, bytes the decoder replaced) is fetched again in the page's
name; if that fails, the text is kept in the charset it was encoded in, the stored
``Content-Type`` names it, a note says so, and the response counts against the page's
fidelity (:attr:`Exchange.altered`).

Threading contract: used from its recorder's loop only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from archiver_app.capture.charsets import FrameCharsets, served_charset
from archiver_app.capture.exchange import Exchange, Hop, content_length, request_headers

#: Fetches a body again when the browser no longer holds it: (url, request headers, the
#: status the browser saw, byte limit) -> the body, or why it cannot stand in for the body
#: the browser had (another status, too large, a network error).
Refetch = Callable[[str, dict[str, str], int, int], Awaitable[bytes | str]]


def arrived_length(ex: Exchange, hop: Hop) -> int | None:
    """How many bytes of body arrived, decoded from ``Content-Encoding`` (None: unknown)."""
    if ex.data_length > 0:
        return ex.data_length
    headers = {k.lower(): str(v) for k, v in ((hop.response or {}).get("headers") or {}).items()}
    if headers.get("content-encoding", "identity").strip().lower() in ("", "identity"):
        return content_length(hop.response or {})
    return None


class TextBodies:
    """Text bodies of one recorder back to bytes; see the module docstring."""

    def __init__(
        self, charsets: FrameCharsets, notes: list[str], refetch: Refetch | None, max_body: int
    ) -> None:
        self.charsets = charsets
        self.notes = notes
        self.refetch = refetch
        self.max_body = max_body

    async def to_bytes(
        self, text: str, ex: Exchange, hop: Hop, others: Iterable[Exchange]
    ) -> bytes:
        if not text and ex.declined:  # an error answer the browser did not read: nothing to
            return b""  # check; the caller fetches it again and says why
        if ex.resource_type in ("Script", "Stylesheet") and not served_charset(hop.response):
            coming = any(  # its document's charset: not known yet, coming
                d.resource_type == "Document" and d.frame_id == ex.frame_id
                for d in others
                if not d.failed
            )
            await self.charsets.wait(ex.frame_id or "", coming)
        expected = arrived_length(ex, hop)
        encoded = self.charsets.encode(text, hop, ex, expected)
        if encoded.exact:
            return encoded.data
        counted = f"the {expected} bytes that arrived" if expected is not None else "them"
        why = f"its text does not encode back to {counted} in {encoded.charset}"
        again = await self._fetch_again(ex, hop, expected)
        if isinstance(again, bytes):
            self.notes.append(f"{hop.url}: body refetched ({why})")
            return again
        if not encoded.declared:
            ex.stored_charset = encoded.charset
        ex.altered = f"not stored byte for byte: stored as {encoded.charset} text"
        self.notes.append(
            f"{hop.url}: body stored as {encoded.charset} text, not byte for byte as served "
            f"({why}; fetching it again: {again}); the stored Content-Type names {encoded.charset}"
        )
        return encoded.data

    async def _fetch_again(self, ex: Exchange, hop: Hop, expected: int | None) -> bytes | str:
        if self.refetch is None:
            return "not possible here"
        if hop.method != "GET":
            return f"a {hop.method} request is not sent twice"
        status = int((hop.response or {}).get("status") or 0)
        headers = request_headers(ex, len(ex.hops) - 1, hop)
        got = await self.refetch(hop.url, headers, status, self.max_body)
        if isinstance(got, bytes) and expected is not None and len(got) != expected:
            return f"{len(got)} bytes came, not {expected}"
        return got
