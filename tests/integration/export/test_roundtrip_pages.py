"""An export imported into another library gives the same pages: each page's address as it
was captured (a hash route's ``#fragment`` included), the title the library showed (the
rendered page's, which a script may have set) and its text.

Real Chromium captures four pages of the local corpus: a static documentation page; a
single-page app whose script renders a list and sets its title; and two routes of a
hash-routed app, ``/hash/#/guide`` and ``/hash/#/``, whose script fetches the route's
content and sets ``document.title`` (the served ``<title>`` is the app's, "Hash docs").
The WARC records of both routes have the document's address, without the fragment (a
request never carries one); the pages list and the recorded views name the routes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from archiver_app.capture.engine import PageRules, capture_urls
from archiver_app.cli import main
from archiver_app.library import Library
from tests.helpers.corpus import Corpus

pytestmark = pytest.mark.slow

NAMES = ("docs", "spa", "hash")
#: The hash app's other route: the same document, another page.
HOME_ROUTE = "/hash/#/"
#: (address, title, text) of every page of a library.
Page = tuple[str, str | None, str]


def _pages(root: Path) -> list[Page]:
    with Library.open(root) as lib, lib.engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT s.url, s.title, f.body FROM snapshots s "
                "LEFT JOIN snapshot_fts f ON f.rowid = s.id ORDER BY s.url"
            )
        ).all()
    return [(str(u), title, " ".join(str(body or "").split())) for u, title, body in rows]


@pytest.fixture(scope="module")
def captured(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("roundtrip-pages") / "library"
    urls = [corpus.url(Corpus.PAGES[name]) for name in NAMES] + [corpus.url(HOME_ROUTE)]
    with Library.open(root, create=True) as lib:
        results = capture_urls(lib, urls, rules=PageRules(page_timeout=40, settle_seconds=0.5))
        assert all(r.ok for r in results), [(r.url, r.error) for r in results]
    return root


@pytest.mark.parametrize("fmt", ["wacz", "folder"])
def test_export_then_import_gives_the_same_pages(
    captured: Path, corpus: Corpus, fmt: str, tmp_path: Path
) -> None:
    before = _pages(captured)
    hash_page = next(p for p in before if p[0] == corpus.url(Corpus.PAGES["hash"]))
    assert hash_page[1] == "Guide - Hash docs"  # the title the script set, not the served one
    assert "Only the guide route shows this." in hash_page[2]
    home = next(p for p in before if p[0] == corpus.url(HOME_ROUTE))
    assert home[1] == "Home - Hash docs"
    assert "The hash home route." in home[2]
    spa = next(p for p in before if p[0] == corpus.url(Corpus.PAGES["spa"]))
    assert spa[1] == "SPA items"  # served as "SPA loading"
    out = tmp_path / ("all.wacz" if fmt == "wacz" else "all")
    assert main(["--library", str(captured), "export", "-o", str(out), "--format", fmt]) == 0
    source = out if fmt == "wacz" else out / "archive" / "data.warc.gz"
    lib2 = tmp_path / "lib2"
    assert main(["--library", str(lib2), "init"]) == 0
    assert main(["--library", str(lib2), "import", str(source)]) == 0
    assert _pages(lib2) == before
