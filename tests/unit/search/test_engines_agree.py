"""One library on SQLite and on PostgreSQL answers every kind of query the same way:
the same hits in the same order, with the same snippets and counts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.search import Query, count, matching_ids, search
from tests.helpers.postgres import PostgresServer, new_database
from tests.helpers.warcs import Resp, html_page, write_warc

PAGES = [
    ("https://a.example/flood", "River flood", "the river flooded the old museum basement"),
    ("https://a.example/notes", "Notes", "a short note about a river and the climate"),
    ("https://b.example/climate", "Climate climate", "climate policy and the river delta"),
    ("https://b.example/cafe", "Café Zürich", "un café près du fleuve, naïve résumé"),
    ("https://c.example/email", "E-mail guide", "how to write an e-mail about river-side homes"),
    ("https://c.example/long", "Long read", " ".join(["filler"] * 300) + " river at the end"),
    ("https://c.example/mixed", "Museum river", "museum museum river climate basement"),
    ("https://d.example/numbers", "Numbers 2024", "the year 2024 and 3xl sizes, version 1.5"),
    # Words as SQLite's tokenizer makes them: Greek and Cyrillic keep their accents, a
    # ligature and a fraction stay one character (Unicode's NFKD, folded on PostgreSQL
    # before, found these on one engine only)
    ("https://e.example/athens", "Αθήνα", "ο καιρός στην Αθήνα, йод и ёлка, ﬁnal ½ report"),
]

QUERIES = [
    "river",
    "climate",
    "museum basement",
    '"old museum"',
    '"museum old"',
    "river -climate",
    "flood OR climate",
    "cafe",
    "Zurich",
    "résumé",
    "e-mail",
    "riv",
    "river clim",
    "muse",
    "basem",
    "2024",
    "3xl",
    "filler end",
    "nothing here",
    "river OR",
    "-river",
    "-flood -climate",
    '-"old museum" -zurich',
    "Αθήνα",
    "αθηνα",
    "καιρος",
    "αθή",
    "иод",
    "ёлка",
    "final",
    "ﬁnal",
    "½",
]


def _fill(lib: Library, folder: Path) -> Library:
    resps = [
        Resp(url, html_page(title, body), date=f"2024-01-{i + 10:02d}T00:00:00Z")
        for i, (url, title, body) in enumerate(PAGES)
    ]
    import_warc_file(lib, write_warc(folder / "pages.warc.gz", resps), tags=("riverbank",))
    return lib


def _open_both(folder: Path, postgres_url: str) -> Iterator[tuple[Library, Library]]:
    (folder / "s").mkdir()
    (folder / "p").mkdir()
    lite = Library.open(folder / "s" / "lib", create=True)
    pg = Library.open(folder / "p" / "lib", create=True, database_url=postgres_url)
    try:
        yield _fill(lite, folder / "s"), _fill(pg, folder / "p")
    finally:
        lite.close()
        pg.close()


@pytest.fixture
def both(tmp_path: Path, postgres_url: str) -> Iterator[tuple[Library, Library]]:
    yield from _open_both(tmp_path, postgres_url)


@pytest.fixture(scope="module")
def both_read(
    tmp_path_factory: pytest.TempPathFactory,
    postgres_server: PostgresServer,
    postgres_template: str,
) -> Iterator[tuple[Library, Library]]:
    """:func:`both`, made once for the tests that only query it."""
    url = new_database(postgres_server, postgres_template)
    yield from _open_both(tmp_path_factory.mktemp("agree"), url)


def _answer(lib: Library, q: Query) -> tuple[object, ...]:
    hits = [(h.url, h.snippet_marked()) for h in search(lib, q)]
    return hits, count(lib, q), len(matching_ids(lib, q))


@pytest.mark.parametrize("typed", QUERIES)
def test_same_hits_order_and_snippets(both_read: tuple[Library, Library], typed: str) -> None:
    lite, pg = both_read
    for q in (Query(typed), Query(typed, prefix_last=False), Query(typed, tag="riverbank")):
        assert _answer(pg, q) == _answer(lite, q), q


@pytest.mark.parametrize("scan", [3, 3000])
def test_search_as_you_type_agrees_window_by_window(
    both_read: tuple[Library, Library], monkeypatch: pytest.MonkeyPatch, scan: int
) -> None:
    """PostgreSQL reads the newest candidates window by window of rowids: with windows of a
    few rowids (several per query) the hits are SQLite's, also when the scan stops at
    MAX_SCAN candidates and the full query answers instead."""
    from archiver_app.search import quick

    monkeypatch.setattr(quick, "PG_WINDOW", 2)
    monkeypatch.setattr(quick, "PG_WANTED", 1)
    monkeypatch.setattr(quick, "PG_BATCH", 2)
    monkeypatch.setattr(quick, "MAX_SCAN", scan)
    lite, pg = both_read
    for typed in ("riv", "river clim", "muse", "basem", "the r", "river c", "clim"):
        for q in (Query(typed), Query(typed, domain="c.example")):
            assert _answer(pg, q) == _answer(lite, q), q
    # Two matches kept: which two depends on reading the candidates newest first.
    monkeypatch.setattr(quick, "WINDOW", 2)
    for typed in ("riv", "the r", "clim"):
        newest = [(h.url, h.snippet_marked()) for h in search(lite, Query(typed), limit=2)]
        assert [(h.url, h.snippet_marked()) for h in search(pg, Query(typed), limit=2)] == newest


def test_a_domain_filter_takes_its_subdomains_and_new_domains_on_both(
    both: tuple[Library, Library], tmp_path: Path
) -> None:
    """PostgreSQL answers a domain filter from the list of the snapshots' domains it keeps
    (:func:`archiver_app.search.pg.domains_under`): a page of a subdomain saved after the
    list was read is found there as on SQLite."""
    lite, pg = both

    def ask() -> None:
        for q in [Query(t, domain=d) for t in ("riv", "") for d in DOMAINS]:
            assert _answer(pg, q) == _answer(lite, q), q
        for q in [Query("river", domain=d) for d in DOMAINS]:  # ranked: near-ties may swap
            assert {h.url for h in search(pg, q)} == {h.url for h in search(lite, q)}, q
            assert count(pg, q) == count(lite, q), q

    ask()
    late = [
        Resp(
            "https://news.c.example/late",
            html_page("Late", "river news"),
            date="2024-02-01T00:00:00Z",
        )
    ]
    for lib, sub in ((lite, "s"), (pg, "p")):
        import_warc_file(lib, write_warc(tmp_path / sub / "late.warc.gz", late))
    ask()
    under_c = {f"https://c.example/{p}" for p in ("email", "long", "mixed")}
    for d in ("c.example", "www.c.example"):
        assert {h.url for h in search(pg, Query("", domain=d))} == {
            *under_c,
            "https://news.c.example/late",
        }
    assert {h.url for h in search(pg, Query("", domain="news.c.example"))} == {
        "https://news.c.example/late"
    }


def test_a_domain_filter_over_too_many_domains_stays_a_pattern(
    both: tuple[Library, Library], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter over more domains than are named one by one (``com``, on a large library)
    is left as ``LIKE``, and finds the same pages."""
    from archiver_app.search import pg as pg_search
    from archiver_app.search.engine import domains_for

    lite, pg = both
    with pg.engine.connect() as conn:
        assert domains_for(conn, Query(domain="example")) is not None
        monkeypatch.setattr(pg_search, "DOMAINS_NAMED_MAX", 1)
        assert domains_for(conn, Query(domain="example")) is None
        assert domains_for(conn, Query(domain="a.example")) == ["a.example"]
    for q in [Query(t, domain="example") for t in ("riv", "")]:
        assert _answer(pg, q) == _answer(lite, q), q


DOMAINS = ("c.example", "www.c.example", "example", "news.c.example", "x.example", "e.example")


def test_ranking_agrees_beyond_the_first_hit(both_read: tuple[Library, Library]) -> None:
    lite, pg = both_read
    ranked = [h.url for h in search(lite, Query("river "))]
    assert len(ranked) >= 6
    assert [h.url for h in search(pg, Query("river "))] == ranked


def test_statistics_stand_in_for_counts_on_a_large_library(
    both: tuple[Library, Library], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past EXACT_BELOW rows the planner's statistics give the pages and the common words'
    frequencies; the ranking stays the same."""
    from sqlalchemy import text

    from archiver_app.search import pg as pg_search

    lite, pg = both
    with pg.engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE snapshot_fts"))
    monkeypatch.setattr(pg_search, "EXACT_BELOW", 0)
    pg_search._stats.clear()
    with pg.engine.connect() as conn:
        rows, counts = pg_search.frequencies(conn, ["'river'", "'museum'", "('old' <-> 'museum')"])
    assert rows == len(PAGES)
    assert counts == pytest.approx([6, 2, 1])  # a frequency times the rows
    [(_at, _rows, common, counted)] = pg_search._stats.values()
    # words from the statistics; the phrase was counted
    assert common["river"] == pytest.approx(6 / len(PAGES))
    assert counted == {"('old' <-> 'museum')": 1.0}  # and kept for the next keystroke
    assert [h.url for h in search(pg, Query("river "))] == [
        h.url for h in search(lite, Query("river "))
    ]


#: Pages that score the same for "river" on either engine (same words per field, the word
#: at the same place), saved in an order that is not their capture order; two share a time.
TIED = [
    ("https://t.example/a", "2024-03-03T00:00:00Z"),
    ("https://t.example/b", "2024-03-01T00:00:00Z"),
    ("https://t.example/c", "2024-03-02T00:00:00Z"),
    ("https://t.example/d", "2024-03-02T00:00:00Z"),
    ("https://t.example/e", "2024-03-05T00:00:00Z"),
]


@pytest.fixture(scope="module")
def tied(
    tmp_path_factory: pytest.TempPathFactory,
    postgres_server: PostgresServer,
    postgres_template: str,
) -> Iterator[tuple[Library, Library]]:
    """Made once: the tests only query it."""
    tmp_path = tmp_path_factory.mktemp("tied")
    libs = []
    for name, url in (("s", None), ("p", new_database(postgres_server, postgres_template))):
        (tmp_path / name).mkdir()
        lib = Library.open(tmp_path / name / "lib", create=True, database_url=url)
        resps = [
            Resp(u, html_page("Same title", f"the river bank filler{i}"), date=at)
            for i, (u, at) in enumerate(TIED)
        ]
        import_warc_file(lib, write_warc(tmp_path / name / "t.warc.gz", resps))
        libs.append(lib)
    try:
        yield libs[0], libs[1]
    finally:
        for lib in libs:
            lib.close()


@pytest.mark.parametrize("typed", ["river", "riv", "river ban", "bank river"])
def test_tied_scores_rank_newest_first_then_last_saved_on_both(
    tied: tuple[Library, Library], typed: str
) -> None:
    """Equal scores are ordered by capture time, newest first, then by the snapshot saved
    last; the same on both engines and on both paths (ranked and as-you-type)."""
    expected = [f"https://t.example/{x}" for x in "eadcb"]
    for lib in tied:
        for q in (Query(typed), Query(typed, prefix_last=False)):
            hits = search(lib, q)
            if not hits:  # a whole-word query for a prefix ("riv") finds nothing
                continue
            assert len({h.score for h in hits}) == 1, (q, [h.score for h in hits])
            assert [h.url for h in hits] == expected, (lib.engine.dialect.name, q)


def test_pages_indexed_with_the_older_fold_are_still_found(
    both: tuple[Library, Library],
) -> None:
    """A shared library indexed before its words followed SQLite's tokenizer holds Greek
    words without their accents: a search with the accents still finds those pages."""
    from sqlalchemy import text

    _lite, pg = both
    older = "'αθηνα':1A 'ο':2D 'καιρος':3D 'στην':4D 'αθηνα':5D"
    with pg.engine.begin() as conn:
        conn.execute(
            text("UPDATE snapshot_fts SET doc = CAST(:doc AS tsvector) WHERE url = :url"),
            {"doc": older, "url": "https://e.example/athens"},
        )
    for words in ("Αθήνα", "καιρός", '"στην Αθήνα"', "αθην"):
        assert [h.url for h in search(pg, Query(words))] == ["https://e.example/athens"], words
