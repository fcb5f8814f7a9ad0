"""A text body DevTools gave back decoded: back to the served bytes, or marked as altered."""

from __future__ import annotations

import asyncio

from archiver_app.capture.charsets import FrameCharsets
from archiver_app.capture.exchange import Exchange, Hop
from archiver_app.capture.text_bodies import TextBodies


def _exchange(served: bytes, ctype: str = "text/plain") -> tuple[Exchange, Hop]:
    hop = Hop("http://example.test/a.txt", "GET", {})
    hop.response = {"status": 200, "mimeType": "text/plain", "headers": {"Content-Type": ctype}}
    ex = Exchange("1", hops=[hop], resource_type="Document", frame_id="F", data_length=len(served))
    return ex, hop


def _stored(
    text: str, served: bytes, again: bytes | str, notes: list[str]
) -> tuple[bytes, Exchange]:
    ex, hop = _exchange(served)

    async def refetch(url: str, headers: dict[str, str], status: int, limit: int) -> bytes | str:
        return again

    bodies = TextBodies(FrameCharsets(), notes, refetch, 1 << 20)
    return asyncio.run(bodies.to_bytes(text, ex, hop, [ex])), ex


def test_text_the_browser_read_as_windows_1252_is_encoded_back_so() -> None:
    served = b"\x93q\x94 caf\xe9 \x81"  # no charset: the browser read it as windows-1252
    notes: list[str] = []
    data, ex = _stored("\u201cq\u201d caf\u00e9 \x81", served, "not asked", notes)
    assert data == served and notes == [] and ex.altered is None and ex.stored_charset is None


def test_text_that_cannot_be_made_exact_is_kept_with_a_note_and_marked_altered() -> None:
    served = b"caf\xe9"  # no charset; decoded by the browser as UTF-8 with a replacement
    notes: list[str] = []
    data, ex = _stored("caf\ufffd", served, "connection refused", notes)
    assert data == "caf\ufffd".encode()
    assert ex.altered == "not stored byte for byte: stored as utf-8 text"
    assert ex.stored_charset == "utf-8"  # the stored Content-Type names it
    assert len(notes) == 1 and "not byte for byte" in notes[0]
    assert "connection refused" in notes[0]


def test_a_refetch_of_another_length_does_not_stand_in() -> None:
    notes: list[str] = []
    data, ex = _stored("caf\ufffd", b"caf\xe9", b"cafe and more", notes)
    assert data == "caf\ufffd".encode() and ex.altered is not None
    assert "13 bytes came, not 4" in notes[0]


def test_a_refetch_of_the_same_length_is_kept() -> None:
    notes: list[str] = []
    data, ex = _stored("caf\ufffd", b"caf\xe9", b"caf\xe9", notes)
    assert data == b"caf\xe9" and ex.altered is None and ex.stored_charset is None
    assert notes and "body refetched" in notes[0]
