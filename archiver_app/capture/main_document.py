"""Which response is the page: the main frame's document the browser finally showed.

A page can load another document into its tab while it loads: a consent wall or a
"checking your browser" page sets a cookie and calls ``location.reload()``, a script sends
the visitor on to another address. Each document is a request of its own; the page's main
record is the response of the last one the main frame showed (``Page.frameNavigated``),
with its body. Until a document is shown, the first one the page asked for stands in (a
file the browser downloads is never shown).

A response whose body did not come whole never replaces one that did: a page still loading
itself again when the capture ends keeps the last complete document as its record.

A document shown that never answered (the page went on to an address that did not answer,
and the tab shows the browser's error page) never becomes the record; then the tab no
longer :attr:`shows_record` (:mod:`.departed` reads the page from its record instead).

Threading contract: used from its recorder's loop only.
"""

from __future__ import annotations

from dataclasses import dataclass

from archiver_app.warc.httpmsg import HttpResponse
from archiver_app.warc.writer import WrittenRecord


@dataclass(frozen=True)
class DocumentRecord:
    """The record written for a main-frame document's final answer."""

    record: WrittenRecord
    response: HttpResponse
    truncated: str | None  # its WARC-Truncated reason, None when the body is whole
    document: bytes | None  # the body, when the browser showed it in a viewer (a PDF)
    body: bytes = b""  # the body as recorded (an HTML page's text is read from it if need be)


class MainDocument:
    """The page's main request and record; see the module docstring."""

    def __init__(self) -> None:
        self.request_id: str | None = None  # the document shown (else the first asked for)
        self.record: WrittenRecord | None = None
        self.response: HttpResponse | None = None
        self.truncated: str | None = None  # WARC-Truncated of the main record, if any
        self.document: bytes | None = None  # the main body, when it is a PDF
        self.body = b""  # the main record's body, as recorded
        self._shown: str | None = None
        self._written: dict[str, DocumentRecord] = {}
        self._lost: dict[str, str] = {}  # request -> why its body is not in its record
        self._record_of: str | None = None  # the request whose record is the page's

    def requested(self, request_id: str) -> None:
        """The main frame asked for a document (the first one stands in until one shows)."""
        if self.request_id is None:
            self.request_id = request_id

    def shown(self, request_id: str) -> str | None:
        """The main frame shows the document of ``request_id``; returns the request of the
        document it showed before (None: none, or the same)."""
        before, self._shown = self._shown, request_id
        self.request_id = request_id
        self._take(request_id)
        return before if before not in (None, request_id) else None

    def written(self, request_id: str, written: DocumentRecord) -> None:
        """A main-frame document's final answer was written."""
        self._written[request_id] = written
        self._take(request_id)

    def body_lost(self, request_id: str, why: str) -> None:
        """A main-frame document's record was written without its body, for ``why``."""
        self._lost[request_id] = why

    @property
    def shows_record(self) -> bool:
        """Whether the document the tab shows is the one whose answer is the record."""
        return self.record is not None and self._record_of == self.request_id

    @property
    def lost(self) -> str | None:
        """Why the page's record has no body (its own answer was not kept), if so."""
        return self._lost.get(self._record_of or "") if self.record is not None else None

    def _take(self, request_id: str) -> None:
        found = self._written.get(request_id)
        if found is None or request_id != self.request_id:
            return
        if self.record is not None and self.truncated is None and found.truncated is not None:
            return  # a whole document stays the page's record
        self.record, self.response, self._record_of = found.record, found.response, request_id
        self.truncated, self.document = found.truncated, found.document
        self.body = found.body
