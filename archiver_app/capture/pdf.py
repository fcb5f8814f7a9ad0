"""A PDF captured as the page: its text, its title and a picture of its first page.

Chromium shows a top-level PDF in its built-in viewer, which has no DOM text to extract
and screenshots as an empty frame. The document's own bytes (the main response record)
are read with PDFium (through ``pypdfium2``: the engine Chromium itself uses, maintained
with it, wheels on every platform): the text layer of every page goes to ``text.txt`` and
the full-text index, the ``Title`` of the document's metadata becomes the snapshot title,
and the first page rendered at the capture viewport's width becomes ``screenshot.png``.
The document's links (link annotations with a URI action, as a reader clicks them) are the
page's outlinks, so a crawl follows them like the links of an HTML page.

PDFium is not thread-safe: every call holds one process-wide lock.
"""

from __future__ import annotations

import ctypes
import io
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from archiver_app.capture.extract import PageFacts, clean_links, file_facts

#: Content types read as PDF documents.
PDF_MIMES = frozenset({"application/pdf", "application/x-pdf"})
#: Text beyond this many characters is not kept (a 10,000-page scan's OCR layer); a note
#: says how many pages' text was kept.
MAX_TEXT_CHARS = 5_000_000
#: The first page is rendered this many pixels wide (the capture viewport's width)...
RENDER_WIDTH = 1280
#: ...and never taller than this.
MAX_RENDER_HEIGHT = 8000
#: At most this many links are read from one document (a generated index can hold more).
MAX_LINKS = 10_000
#: A link's URI is at most this long (longer ones are not followed).
MAX_URI_BYTES = 8192

_PDFIUM = threading.Lock()


@dataclass(frozen=True)
class PdfFacts:
    """What a PDF says about itself; ``error`` is set (and the rest empty) when it could not
    be read."""

    title: str = ""
    text: str = ""
    pages: int = 0
    first_page_png: bytes | None = None
    error: str | None = None
    links: tuple[str, ...] = ()  # URI actions of its link annotations, in page order
    text_cut_at: int | None = None  # text past this many characters was not kept
    text_pages: int = 0  # pages whose text was kept whole

    def cut_note(self) -> str | None:
        """What a reader of the text should know when it was cut (None: it is all there)."""
        if self.text_cut_at is None:
            return None
        limit = self.text_cut_at
        said = f"{limit // 1_000_000} million" if limit % 1_000_000 == 0 else f"{limit:,}"
        return (
            f"text of the first {self.text_pages} of {self.pages} pages kept: the PDF's text "
            f"is over {said} characters (search does not find words past it)"
        )


def read_pdf(
    data: bytes, *, render: bool = True, links: bool = True, max_text: int = MAX_TEXT_CHARS
) -> PdfFacts:
    """Text (at most ``max_text`` characters), title, (when ``render``) a PNG of the first
    page and (when ``links``) the links of the PDF ``data``."""
    import pypdfium2 as pdfium  # type: ignore[import-untyped]  # no py.typed marker

    with _PDFIUM:
        try:
            doc = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            return PdfFacts(error=f"the PDF could not be read ({exc})")
        try:
            title = str(doc.get_metadata_dict().get("Title") or "").strip()
            text, whole, cut = _text(doc, max_text)
            image = _first_page_png(doc) if render and len(doc) else None
            found = _links(doc) if links else ()
            return PdfFacts(
                title=title,
                text=text,
                pages=len(doc),
                first_page_png=image,
                links=found,
                text_cut_at=max_text if cut else None,
                text_pages=whole,
            )
        except pdfium.PdfiumError as exc:
            return PdfFacts(error=f"the PDF could not be read ({exc})")
        finally:
            doc.close()


def _text(doc: Any, limit: int) -> tuple[str, int, bool]:
    """The text of ``doc``'s pages, at most ``limit`` characters; how many pages' text is
    whole in it; whether text was left out."""
    parts: list[str] = []
    size = 0
    for index in range(len(doc)):
        page = doc[index]
        textpage = page.get_textpage()
        try:
            chunk = textpage.get_text_bounded().replace("\r\n", "\n")
        finally:
            textpage.close()
            page.close()
        parts.append(chunk)
        size += len(chunk) + 2 * (index > 0)
        if size >= limit:
            break
    joined = "\n\n".join(parts)
    if len(joined) <= limit and len(parts) == len(doc):
        return joined, len(parts), False
    whole = len(parts) if len(joined) <= limit else len(parts) - 1
    return joined[:limit], whole, True


def pdf_info(data: bytes) -> dict[str, str]:
    """The document information dictionary of the PDF ``data`` (``Title``, ``Author``,
    ``CreationDate``...); empty when it cannot be read."""
    import pypdfium2 as pdfium

    with _PDFIUM:
        try:
            doc = pdfium.PdfDocument(data)
        except pdfium.PdfiumError:
            return {}
        try:
            return {str(k): str(v) for k, v in doc.get_metadata_dict().items() if v}
        except pdfium.PdfiumError:
            return {}
        finally:
            doc.close()


def _links(doc: Any) -> tuple[str, ...]:
    """Every link annotation's URI action (``/A << /S /URI /URI (...) >>``), page by page;
    links inside the document (GoTo) and launch actions are not web links."""
    from pypdfium2 import raw

    out: list[str] = []
    for index in range(len(doc)):
        page = doc[index]
        try:
            position = ctypes.c_int(0)
            link = raw.FPDF_LINK()
            while len(out) < MAX_LINKS and raw.FPDFLink_Enumerate(
                page.raw, ctypes.byref(position), ctypes.byref(link)
            ):
                uri = _uri_of(doc, raw, link)
                if uri:
                    out.append(uri)
        finally:
            page.close()
        if len(out) >= MAX_LINKS:
            break
    return tuple(out)


def _uri_of(doc: Any, raw: Any, link: Any) -> str | None:
    action = raw.FPDFLink_GetAction(link)
    if not action or raw.FPDFAction_GetType(action) != raw.PDFACTION_URI:
        return None
    size = raw.FPDFAction_GetURIPath(doc.raw, action, None, 0)  # bytes, with the NUL
    if size <= 1 or size > MAX_URI_BYTES:
        return None
    buffer = ctypes.create_string_buffer(size)
    raw.FPDFAction_GetURIPath(doc.raw, action, buffer, size)
    # PDF 32000 §12.6.4.7: the URI is 7-bit ASCII; anything else is read leniently.
    return buffer.value.decode("latin-1").strip() or None


def _first_page_png(doc: Any) -> bytes:
    page = doc[0]
    try:
        width, height = page.get_size()
        scale = RENDER_WIDTH / width if width > 0 else 1.0
        if height * scale > MAX_RENDER_HEIGHT:
            scale = MAX_RENDER_HEIGHT / height
        bitmap = page.render(scale=scale)
        image = bitmap.to_pil()
        out = io.BytesIO()
        image.save(out, format="PNG")
        return out.getvalue()
    finally:
        page.close()


def pdf_page_facts(
    document: bytes | None,
    url: str,
    base: str,
    *,
    render: bool,
    reasons: list[str],
    notes: list[str],
    max_text: int = MAX_TEXT_CHARS,
    disposition: str | None = None,
) -> tuple[PageFacts, bytes | None]:
    """Title, text, links (made absolute against ``base``, its address) and first-page
    image of the PDF ``document`` shown as the page ``url``; what fell short goes to
    ``reasons`` (why the capture's fidelity is not high), text left out to ``notes``. A
    PDF without a title of its own is named after its file (its ``Content-Disposition``
    name, else its address's)."""
    fallback = file_facts(url, disposition)
    if document is None:
        reasons.append("the PDF's bytes were not recorded: no text or page image")
        return fallback, None
    pdf = read_pdf(document, render=render, max_text=max_text)
    if pdf.error is not None:
        reasons.append(pdf.error)
        return fallback, None
    if (cut := pdf.cut_note()) is not None:
        notes.append(f"{url}: {cut}")
    links = clean_links([urljoin(base, link) for link in pdf.links])
    facts = PageFacts(title=pdf.title or fallback.title, outlinks=links, text=pdf.text)
    return facts, pdf.first_page_png
