"""The captures table (``lib.table``) reads a library on PostgreSQL as it reads one on
SQLite: the same ids in the same order for searches, filters and sorts, and the same
snippets."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app.api.table import Filters, SnapshotQuery, SortKey, TableReader
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.tasks import CancelToken
from tests.helpers.warcs import Resp, html_page, write_warc

PAGES = [
    ("https://a.example/1", "River report", "the river flooded the museum"),
    ("https://a.example/2", "Notes", "a note about the river delta and climate"),
    ("https://b.example/3", "Climate", "climate policy, 100% renewable"),
    ("https://b.example/4", "Other", "nothing to see"),
    ("https://news.b.example/5", "Bulletin", "river news in brief"),
]


@pytest.fixture
def both(tmp_path: Path, postgres_url: str) -> Iterator[tuple[Library, Library]]:
    libs = []
    for name, url in (("s", None), ("p", postgres_url)):
        (tmp_path / name).mkdir()
        lib = Library.open(tmp_path / name / "lib", database_url=url)
        resps = [
            Resp(u, html_page(t, b), date=f"2024-02-0{i + 1}T00:00:00Z")
            for i, (u, t, b) in enumerate(PAGES)
        ]
        import_warc_file(lib, write_warc(tmp_path / name / "a.warc.gz", resps), tags=("t",))
        libs.append(lib)
    try:
        yield libs[0], libs[1]
    finally:
        for lib in libs:
            lib.close()


def _read(lib: Library, query: SnapshotQuery) -> tuple[object, ...]:
    reader = TableReader(lib)
    raw = reader.connect()
    try:
        chunks = [list(ids) for ids, _ in reader.id_chunks(raw.cursor(), query, 2, 2)]
        window, complete = [], True
        if query.search:  # the table asks for a window only while searching
            window, complete = reader.search_window(raw.cursor(), query, 10)
        every = list(reader.all_ids(raw.cursor(), query, CancelToken()))
    finally:
        raw.close()
    urls = {i: r.url for i, r in reader.rows(every).items()}
    snippets = reader.snippets(every, query.search) if query.search else {}
    return (
        [[urls.get(i) for i in c] for c in chunks],
        [urls.get(i) for i in window],
        complete,
        [urls[i] for i in every],
        sorted((urls[i], s) for i, s in snippets.items()),
    )


@pytest.mark.parametrize(
    "query",
    [
        SnapshotQuery(),
        SnapshotQuery(search="river"),
        SnapshotQuery(search="riv"),
        SnapshotQuery(search="climate -policy"),
        SnapshotQuery(search="100%"),
        SnapshotQuery(search="river", filters=Filters(domain="a.example", tag="t")),
        SnapshotQuery(filters=Filters(domain="b.example")),  # with its subdomain
        SnapshotQuery(search="riv", filters=Filters(domain="www.news.b.example")),
        SnapshotQuery(sort=SortKey.TITLE, descending=False, filters=Filters(mime="text/")),
    ],
)
def test_the_table_reads_alike(both: tuple[Library, Library], query: SnapshotQuery) -> None:
    lite, pg = both
    expected = _read(lite, query)
    assert _read(pg, query) == expected
    if query == SnapshotQuery(search="river"):
        assert len(expected[3]) == 3 and expected[4]  # found, with snippets
