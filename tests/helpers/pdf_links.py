"""PDFs with link annotations, written by hand (PDF 32000 §12.5.6.5 link annotations with
§12.6.4.7 URI actions), for the tests of links followed out of PDFs."""

from __future__ import annotations


def _literal(text: str) -> bytes:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"(" + escaped.encode() + b")"


def _link(y: int, action: bytes) -> bytes:
    return b"<< /Type /Annot /Subtype /Link /Rect [72 %d 300 %d] /Border [0 0 0] /A %s >>" % (
        y,
        y + 14,
        action,
    )


def pdf_with_links(
    pages: list[list[str]], *, goto_link: bool = False, info: dict[str, str] | None = None
) -> bytes:
    """A PDF of ``len(pages)`` pages; page *i* has one link annotation with a URI action
    for each string of ``pages[i]``. ``goto_link`` adds, on the first page, a link to the
    last page (a GoTo action: inside the document, not a web link); ``info``, a document
    information dictionary (``Author``, ``CreationDate``...)."""
    # Object numbers: 1 catalog, 2 page tree, 3 font, then per page: page, contents, links.
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    page_ids: list[int] = []
    next_id = 4
    for number, uris in enumerate(pages):
        page_id, contents = next_id, next_id + 1
        page_ids.append(page_id)
        next_id += 2
        stream = f"BT /F1 14 Tf 72 720 Td (Page {number + 1}) Tj ET".encode()
        objects[contents] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
        annots: list[int] = []
        for i, uri in enumerate(uris):
            objects[next_id] = _link(680 - 20 * i, b"<< /S /URI /URI %s >>" % _literal(uri))
            annots.append(next_id)
            next_id += 1
        if goto_link and number == 0 and len(pages) > 1:
            last_page = next_id + 1 + 2 * (len(pages) - 2) + sum(len(p) for p in pages[1:-1])
            objects[next_id] = _link(100, b"<< /S /GoTo /D [%d 0 R /Fit] >>" % last_page)
            annots.append(next_id)
            next_id += 1
        refs = b" ".join(b"%d 0 R" % a for a in annots)
        objects[page_id] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> /Annots [%s] >>" % (contents, refs)
        )
    trailer_info = b""
    if info:
        entries = b" ".join(b"/%s %s" % (k.encode(), _literal(v)) for k, v in info.items())
        objects[next_id] = b"<< %s >>" % entries
        trailer_info = b" /Info %d 0 R" % next_id
        next_id += 1
    kids = b" ".join(b"%d 0 R" % p for p in page_ids)
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number in range(1, next_id):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % next_id
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        next_id,
        trailer_info,
        xref,
    )
    return bytes(out)
