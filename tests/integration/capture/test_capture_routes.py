"""``archiver capture`` keeps a route fragment: a hash-routed page is captured as itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.cli import main
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.corpus import Corpus
from tests.helpers.warcs import read_warc

pytestmark = pytest.mark.slow


def test_the_cli_captures_a_hash_route_as_its_own_page(
    corpus: Corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib_path = tmp_path / "lib"
    guide, home = corpus.url("/hash/#/guide"), corpus.url("/hash/#/")
    assert main(["--library", str(lib_path), "capture", "--timeout", "40", guide, home]) == 0
    assert "captured 2 of 2" in capsys.readouterr().out
    lib = Library.open(lib_path)
    try:
        with lib.session() as s:
            snaps = {x.url: x for x in s.scalars(select(Snapshot))}
            s.expunge_all()
    finally:
        lib.close()
    assert set(snaps) == {guide, home}
    assert snaps[guide].title == "Guide - Hash docs" and snaps[home].title == "Home - Hash docs"
    text = (lib_path / snaps[guide].folder / "text.txt").read_text()
    assert "Only the guide route shows this." in text
    # the request had no fragment: the document's record is the same URL for both routes
    records = read_warc(lib_path / snaps[guide].folder / "capture.warc.gz")
    documents = [r.uri for r in records if r.type in ("response", "revisit") and "/hash/" in r.uri]
    assert corpus.url("/hash/") in documents and not [u for u in documents if "#" in u]
