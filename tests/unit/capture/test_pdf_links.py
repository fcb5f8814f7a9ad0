"""Links inside PDFs: the URI actions of link annotations, read with PDFium, page by page;
links within the document and unreadable input give nothing."""

from __future__ import annotations

from archiver_app.capture.pdf import read_pdf
from tests.helpers.pdf_links import pdf_with_links


def test_uri_links_are_read_from_every_page_in_order() -> None:
    data = pdf_with_links(
        [
            ["http://example.org/a", "https://example.org/b?q=1"],
            ["next.html", "http://example.org/(paren)"],
        ],
        goto_link=True,
    )
    assert read_pdf(data, render=False).links == (
        "http://example.org/a",
        "https://example.org/b?q=1",
        "next.html",
        "http://example.org/(paren)",
    )  # the GoTo link to page 2 is not a web link


def test_read_pdf_reports_the_links_with_the_text() -> None:
    facts = read_pdf(pdf_with_links([["http://example.org/only"]]), render=False)
    assert facts.error is None and facts.pages == 1
    assert facts.links == ("http://example.org/only",)
    assert "Page 1" in facts.text


def test_a_pdf_without_links_or_not_a_pdf_gives_none() -> None:
    assert read_pdf(pdf_with_links([[]]), render=False).links == ()
    assert read_pdf(b"<html>not a pdf</html>", render=False).links == ()
