"""Text bodies back to the bytes that were served: charset labels read as browsers read them.

DevTools returns text bodies decoded; :class:`FrameCharsets` (for
:mod:`archiver_app.capture.recorder`) encodes them again with the codec a browser would
have decoded them with. This module knows the WHATWG
label table, the charset a body declares itself, and how to say in ``Content-Type`` that a
body was stored in another charset.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import re
from dataclasses import dataclass, replace
from typing import Any

from archiver_app.capture.exchange import Exchange, Hop
from archiver_app.warc.httpmsg import ORIG_PREFIX, HttpResponse


def served_charset(response: dict[str, Any] | None) -> str | None:
    if not response:
        return None
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    ctype = headers.get("content-type") or response.get("mimeType") or ""
    for part in str(ctype).split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            return value.strip().strip("'\"")
    return None


#: WHATWG Encoding Standard labels whose browser decoder is not Python's codec of the same
#: name (``iso-8859-1`` and ``us-ascii`` are windows-1252 in every browser, ``gb2312`` is
#: GB18030...), so bodies encode back to the bytes that were served.
_WHATWG_CODECS = {
    **dict.fromkeys(
        (
            "ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819",
            "iso-8859-1", "iso-ir-100", "iso8859-1", "iso88591", "iso_8859-1",
            "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252", "x-cp1252",
        ),
        "cp1252",
    ),
    **dict.fromkeys(
        (
            "cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599",
            "iso_8859-9", "iso_8859-9:1989", "l5", "latin5", "windows-1254", "x-cp1254",
        ),
        "cp1254",
    ),
    **dict.fromkeys(
        ("dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620", "windows-874"),
        "cp874",
    ),
    **dict.fromkeys(
        (
            "chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80",
            "gbk", "iso-ir-58", "x-gbk", "gb18030",
        ),
        "gb18030",
    ),
    **dict.fromkeys(
        (
            "csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis",
            "windows-31j", "x-sjis",
        ),
        "cp932",
    ),
    **dict.fromkeys(
        (
            "cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987",
            "ks_c_5601-1989", "ksc5601", "ksc_5601", "windows-949",
        ),
        "cp949",
    ),
    **dict.fromkeys(("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"), "big5hkscs"),
    **dict.fromkeys(("x-mac-cyrillic", "x-mac-ukrainian"), "mac_cyrillic"),
    **dict.fromkeys(("x-mac-roman", "csmacintosh", "mac", "macintosh"), "mac_roman"),
    **dict.fromkeys(("iso-8859-8-i", "csiso88598i", "logical"), "iso8859_8"),
    **dict.fromkeys(("koi8-ru", "koi8-u"), "koi8_u"),
}  # fmt: skip
C1_ERRORS = "archiver-c1-bytes"


def _c1_bytes(exc: UnicodeError) -> tuple[bytes, int]:
    """Browsers decode the bytes windows-125x leaves undefined (0x81, 0x8D...) as the C1
    control of the same number; Python's codecs cannot encode those back: write the byte."""
    if isinstance(exc, UnicodeEncodeError):
        chunk = exc.object[exc.start : exc.end]
        if all(0x80 <= ord(c) <= 0x9F for c in chunk):
            return bytes(ord(c) for c in chunk), exc.end
    raise exc


codecs.register_error(C1_ERRORS, _c1_bytes)


def browser_codec(label: str) -> str | None:
    """The Python codec that encodes as a browser decodes charset ``label``; None if unknown."""
    key = label.strip().strip("'\"").lower()
    if key in _WHATWG_CODECS:
        return _WHATWG_CODECS[key]
    try:
        return codecs.lookup(key).name
    except LookupError:
        return None


_META_CHARSET = re.compile(
    r"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9_.:+-]+)""", re.IGNORECASE
)
_CSS_CHARSET = re.compile(r"""^\ufeff?@charset\s+"([A-Za-z0-9_.:+-]+)"\s*;""")


def declared_charset(text: str, mime: str) -> str | None:
    """The charset a body declares itself: ``<meta charset>`` or ``<meta http-equiv>`` near
    the start of HTML, ``@charset`` at the start of CSS."""
    if mime == "text/html":
        match = _META_CHARSET.search(text[:4096])
        return match.group(1) if match else None
    if mime == "text/css":
        match = _CSS_CHARSET.match(text)
        return match.group(1) if match else None
    return None


def with_charset(response: HttpResponse, charset: str) -> HttpResponse:
    """``response`` whose ``Content-Type`` names ``charset``; the served one is kept as
    ``X-Archive-Orig-Content-Type``."""
    served = response.header("content-type")
    mime = (served or "text/html").split(";", 1)[0].strip() or "text/html"
    headers = [(k, v) for k, v in response.headers if k.lower() != "content-type"]
    if served is not None:
        headers.append((ORIG_PREFIX + "Content-Type", served))
    headers.append(("Content-Type", f"{mime}; charset={charset}"))
    return replace(response, headers=headers)


class FrameCharsets:
    """The charset each frame's document was decoded in; text bodies encoded back.

    A script or style sheet with no charset of its own is in its document's, and its body
    can be read back before the document's own (the parser fetches it mid-stream).

    Threading contract: used from its recorder's loop only.
    """

    def __init__(self) -> None:
        self._known: dict[str, str] = {}  # frameId -> its document's charset
        self._decoded: dict[str, asyncio.Event] = {}  # set once that charset is known

    async def wait(self, frame: str, coming: bool, seconds: float = 3.0) -> None:
        """Wait (briefly) until the document of ``frame`` has been decoded, when one is
        ``coming`` and its charset is not known yet."""
        if frame in self._known or not coming:
            return
        event = self._decoded.setdefault(frame, asyncio.Event())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), seconds)

    def _frame_known(self, frame: str, charset: str) -> None:
        self._known[frame] = charset
        self._decoded.setdefault(frame, asyncio.Event()).set()

    def encode(self, text: str, hop: Hop, ex: Exchange, expected: int | None) -> Encoded:
        """Text bodies come back decoded; encode them back as the browser decoded them.

        The charset is the header's, else (HTML, CSS) the one the body declares, else (a
        script or style sheet) its document's; labels are read as browsers read them
        (``iso-8859-1`` is windows-1252). With none of those the browser guessed (a
        ``text/plain`` file is read as windows-1252, HTML may be sniffed as UTF-8): UTF-8
        and windows-1252 are tried. The bytes are :attr:`Encoded.exact` when they are as
        many as arrived (``expected``; with no count, when a charset was declared or the
        text is ASCII). Text no codec can encode is encoded as UTF-8.
        """
        mime = str((hop.response or {}).get("mimeType") or "").lower()
        declared = served_charset(hop.response) or declared_charset(text, mime)
        if declared is None and ex.resource_type in ("Script", "Stylesheet"):
            declared = self._known.get(ex.frame_id or "")
        labels = [declared] if declared else ["utf-8", "windows-1252"]
        first: Encoded | None = None
        for label in labels:
            codec = browser_codec(label)
            if codec is None:
                continue
            try:
                data = text.encode(codec, errors=C1_ERRORS)
            except UnicodeEncodeError:
                continue
            if expected is not None:
                exact = len(data) == expected
            else:
                exact = declared is not None or text.isascii()
            encoded = Encoded(data, label, exact, label == declared)
            if exact:
                return self._decoded_as(ex, encoded)
            first = first or encoded
        if first is None:
            first = Encoded(text.encode("utf-8", errors="replace"), "utf-8", False, False)
        return self._decoded_as(ex, first)

    def _decoded_as(self, ex: Exchange, encoded: Encoded) -> Encoded:
        if ex.resource_type == "Document" and ex.frame_id:
            self._frame_known(ex.frame_id, encoded.charset)
        return encoded


@dataclass(frozen=True)
class Encoded:
    """A text body encoded again: its bytes, in ``charset``; ``exact``: as many bytes as
    arrived; ``declared``: ``charset`` is the one the response or its document named."""

    data: bytes
    charset: str
    exact: bool
    declared: bool
