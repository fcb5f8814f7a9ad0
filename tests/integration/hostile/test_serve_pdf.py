"""An archived PDF is framed without the sandbox in ``archiver serve`` (Chromium runs no
PDF viewer in one: ``replay/files.py``); a hostile PDF's own script still reaches nothing.

The PDF's open action runs script in Chromium's viewer (PDFium): it shows an alert (so the
test knows the script ran) and tries ``submitForm``, ``app.launchURL`` and ``getURL`` to
the live twin. Chromium refuses ``submitForm`` without a user gesture, and the frame keeps
the content policy's ``connect-src``, ``form-action`` and the shell's ``frame-src``.
"""

from __future__ import annotations

from playwright.sync_api import Browser, Dialog

from archiver_app.library import Library
from archiver_app.replay.server import ReplayServer
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.testsite import pdf_of_objects
from tests.integration.hostile.twin import Twin

URL = "https://docs.example/hostile.pdf"


def _escaped(text: str) -> bytes:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode()


def hostile_pdf(live: str) -> bytes:
    """A one-page PDF whose open action runs ``script`` aimed at ``live``."""
    script = (
        'app.alert("pdf script ran");'
        f'try {{ this.submitForm({{cURL: "{live}/submit", cSubmitAs: "HTML"}}); }} catch (e) {{}}'
        f'try {{ app.launchURL("{live}/launch", true); }} catch (e) {{}}'
        f'try {{ this.getURL("{live}/get"); }} catch (e) {{}}'
    )
    stream = b"BT /F1 24 Tf 72 720 Td (Hostile) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R /OpenAction 6 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /S /JavaScript /JS (" + _escaped(script) + b") >>",
    ]
    return pdf_of_objects(objects)


def test_a_hostile_pdfs_script_reaches_nothing(
    library: Library, browser: Browser, twin: Twin
) -> None:
    w = ArchiveWriter(library)
    pdf = hostile_pdf(f"http://127.0.0.1:{twin.port}")
    w.response(URL, pdf, at=at(2025), mime="application/pdf", page=True)
    w.commit()
    alerts: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        alerts.append(dialog.message)
        dialog.dismiss()

    server = ReplayServer(library, memento=True).start()
    try:
        context = browser.new_context()
        page = context.new_page()
        page.on("dialog", dismiss)
        page.goto(server.url_for(URL), wait_until="load")
        for _ in range(50):
            if alerts:
                break
            page.wait_for_timeout(100)
        page.wait_for_timeout(1500)
        context.close()
    finally:
        server.close()
    assert alerts and alerts[0] == "pdf script ran", alerts  # the viewer ran its script
    assert twin.accepted() == 0, twin.contacts()
