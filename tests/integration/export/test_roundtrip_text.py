"""An export imported into another library keeps every page's text: the words of a PDF and
the words a script loaded into a page are found by search there as in the library that
captured them (the HTML alone says neither).

Real Chromium captures two pages of the local corpus: a PDF, and a single-page app that
renders a list it fetches (its HTML holds an empty list).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.cli import main
from archiver_app.library import Library
from tests.helpers.corpus import PDF_TITLE, PDF_WORD, Corpus

pytestmark = pytest.mark.slow

#: A word each page shows only once its PDF is read or its script has run.
WORDS = {"pdf": PDF_WORD, "spa": "gamma"}


@pytest.fixture(scope="module")
def captured(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("roundtrip-text") / "library"
    urls = [corpus.url(Corpus.PAGES[name]) for name in WORDS]
    with Library.open(root, create=True) as lib:
        results = capture_urls(lib, urls, rules=PageRules(page_timeout=40, settle_seconds=0.5))
        assert all(r.ok for r in results), [(r.url, r.error) for r in results]
    return root


def _search(library: Path, word: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, str]]:
    capsys.readouterr()
    code = main(["--library", str(library), "search", word, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("fmt", ["wacz", "folder"])
def test_the_words_of_a_pdf_and_of_a_script_are_found_after_export_and_import(
    captured: Path,
    corpus: Corpus,
    fmt: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, word in WORDS.items():  # the library that captured them finds them
        [hit] = _search(captured, word, capsys)
        assert hit["url"] == corpus.url(Corpus.PAGES[name]), name
    out = tmp_path / ("all.wacz" if fmt == "wacz" else "all")
    assert main(["--library", str(captured), "export", "-o", str(out), "--format", fmt]) == 0
    source = out if fmt == "wacz" else out / "archive" / "data.warc.gz"  # as a plain WARC
    lib2 = tmp_path / "lib2"
    assert main(["--library", str(lib2), "init"]) == 0
    assert main(["--library", str(lib2), "import", str(source)]) == 0
    for name, word in WORDS.items():
        hits = _search(lib2, word, capsys)
        assert [h["url"] for h in hits] == [corpus.url(Corpus.PAGES[name])], (name, hits)
    [pdf] = _search(lib2, PDF_WORD, capsys)
    assert pdf["title"] == PDF_TITLE
    [spa] = _search(lib2, "gamma", capsys)
    assert "alpha" in spa["snippet"], spa  # the rendered list, not the HTML's empty one
