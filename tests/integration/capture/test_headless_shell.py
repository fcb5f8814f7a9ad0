"""Chromium's headless shell, when the user chooses it (``ARCHIVER_BROWSER``), captures pages
and PDFs as full Chromium does; the capture says which browser made it, and the pages saw a
browser without Chrome's own parts (the differences ``capture.browser`` documents)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import select

from archiver_app.capture.browser import BROWSER_ENV, find_browser, find_headless_shell
from archiver_app.cli import main
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.corpus import PDF_TITLE, PDF_WORD, Corpus
from tests.helpers.warcs import read_warc

pytestmark = pytest.mark.slow

#: What the page can see of the browser, written into its text.
PROBE = """<!doctype html><html><head><title>Probe</title></head><body><p id="out">...</p>
<script>document.getElementById('out').textContent = 'chrome:' + typeof window.chrome +
  ' plugins:' + navigator.plugins.length + ' pdfviewer:' + navigator.pdfViewerEnabled;</script>
</body></html>"""


def _capture(lib_path: Path, urls: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--library", str(lib_path), "capture", "--timeout", "40", *urls]) == 0
    capsys.readouterr()


def _views(lib_path: Path) -> dict[str, tuple[Snapshot, dict[str, object], Path]]:
    """Each capture by URL: its row, its provenance and its folder."""
    with Library.open(lib_path) as lib, lib.session() as s:
        rows = list(s.scalars(select(Snapshot)))
        s.expunge_all()
    found = {}
    for snap in rows:
        folder = lib_path / snap.folder
        index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
        found[snap.url] = (snap, index["provenance"], folder)
    return found


def _warcinfo_browser(folder: Path) -> str:
    [info] = [r for r in read_warc(folder / "capture.warc.gz") if r.type == "warcinfo"]
    fields = dict(
        line.split(": ", 1) for line in info.payload.decode().splitlines() if ": " in line
    )
    return fields["browser"]


def test_the_headless_shell_captures_pages_and_pdfs_and_says_so(
    corpus: Corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    shell = find_headless_shell()
    full = find_browser()
    if shell is None or full is None:
        pytest.skip("Chromium's headless shell is not installed (chromium-headless-shell)")
    corpus.main.add_static("/probe/", PROBE)
    probe, pdf = corpus.url("/probe/"), corpus.url("/files/report.pdf")

    _capture(tmp_path / "full", [probe], capsys)
    [(snap, provenance, folder)] = _views(tmp_path / "full").values()
    assert "chrome:object" in (folder / "text.txt").read_text()
    assert "headless_shell" not in provenance
    assert _warcinfo_browser(folder).startswith("Chromium 1")

    monkeypatch.setenv(BROWSER_ENV, str(shell))
    _capture(tmp_path / "shell", [probe, pdf], capsys)
    views = _views(tmp_path / "shell")
    snap, provenance, folder = views[probe]
    assert snap.state == "complete" and snap.title == "Probe"
    # what pages can tell: no Chrome object, no PDF viewer (so no plugins)
    assert "chrome:undefined plugins:0 pdfviewer:false" in (folder / "text.txt").read_text()
    assert provenance["headless_shell"] is True
    assert _warcinfo_browser(folder).startswith("Chromium headless shell 1")

    # a PDF is a download to the shell, not a page: it is captured all the same
    snap, provenance, folder = views[pdf]
    assert snap.state == "complete" and snap.mime == "application/pdf"
    assert snap.title == PDF_TITLE and provenance["headless_shell"] is True
    assert PDF_WORD in (folder / "text.txt").read_text()
    with Image.open(folder / "screenshot.png") as shot:  # its first page, rendered
        assert shot.convert("L").getextrema()[0] < 64
