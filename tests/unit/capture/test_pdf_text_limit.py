"""A PDF whose text is over the limit keeps its first pages' text, and says so."""

from __future__ import annotations

from archiver_app.capture.pdf import MAX_TEXT_CHARS, PdfFacts, pdf_page_facts, read_pdf
from tests.helpers.testsite import pdf_of_objects


def pages_pdf(texts: list[str]) -> bytes:
    """A PDF of one page per entry of ``texts``, each showing its text in Helvetica."""
    n = len(texts)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
    font = 3 + 2 * n
    for i, text in enumerate(texts):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return pdf_of_objects(objects)


PAGES = [f"page {i:03d} words" for i in range(1, 201)] + ["lastpageword"]


def test_text_past_the_limit_is_cut_with_a_note() -> None:
    notes: list[str] = []
    reasons: list[str] = []
    url = "http://example.test/big.pdf"
    facts, _ = pdf_page_facts(
        pages_pdf(PAGES), url, url, render=False, reasons=reasons, notes=notes, max_text=1000
    )
    assert len(facts.text) == 1000 and "page 001 words" in facts.text
    assert "lastpageword" not in facts.text
    whole = facts.text.count("words")  # each page's text is 14 characters, then a blank line
    assert notes == [
        f"{url}: text of the first {whole} of 201 pages kept: the PDF's text is over 1,000 "
        "characters (search does not find words past it)"
    ]
    assert reasons == []  # the capture itself is whole: its fidelity stays high


def test_text_under_the_limit_is_whole_and_has_no_note() -> None:
    notes: list[str] = []
    data = pages_pdf(PAGES)
    facts, _ = pdf_page_facts(data, "u", "u", render=False, reasons=[], notes=notes)
    assert facts.text.rstrip().endswith("lastpageword") and notes == []
    pdf = read_pdf(data, render=False)
    assert pdf.text_cut_at is None and pdf.text_pages == 201


def test_the_note_names_the_default_limit_in_millions() -> None:
    pdf = PdfFacts(pages=1900, text_pages=1899, text_cut_at=MAX_TEXT_CHARS)
    assert pdf.cut_note() == (
        "text of the first 1899 of 1900 pages kept: the PDF's text is over 5 million "
        "characters (search does not find words past it)"
    )


def test_a_pdf_without_a_title_is_named_after_its_attachment_name() -> None:
    """A PDF sent as an attachment with no title of its own is named as the server named
    the file, not after the last part of its address."""
    facts, _ = pdf_page_facts(
        pages_pdf(["one page"]),
        "https://a.example/dl?id=7",
        "https://a.example/dl?id=7",
        render=False,
        reasons=[],
        notes=[],
        disposition='attachment; filename="Annual Report 2025.pdf"',
    )
    assert facts.title == "Annual Report 2025.pdf"
