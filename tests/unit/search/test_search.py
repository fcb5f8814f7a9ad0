"""Search against a real library: ranking, snippets, every filter, search-as-you-type.

Every test runs on SQLite (FTS5) and on PostgreSQL (tsvector): the same library, the same
answers.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text

from archiver_app.errors import InputError
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.search import Query, count, matching_ids, search
from archiver_app.tasks import CancelToken
from tests.helpers.warcs import Resp, html_page, write_warc


@pytest.fixture(params=["sqlite", "postgresql"])
def library(request: pytest.FixtureRequest, library_root: Path) -> Iterator[Library]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgresql" else None
    lib = Library.open(library_root, create=True, database_url=url)
    try:
        yield lib
    finally:
        lib.close()


@pytest.fixture
def filled(library: Library, tmp_path: Path) -> Library:
    alpha = [
        Resp(
            "https://www.alpha.example/river",
            html_page("River report", "the river flooded the museum basement"),
            date="2023-05-01T00:00:00Z",
        ),
        Resp(
            "https://docs.alpha.example/notes",
            html_page("Notes", "a short note about a river and about climate"),
            date="2024-01-10T00:00:00Z",
        ),
        Resp(
            "https://www.alpha.example/report.txt",
            b"plain text climate report",
            mime="text/plain",
            date="2024-02-01T00:00:00Z",
        ),
    ]
    beta = [
        Resp(
            "https://beta.example/climate",
            html_page("Climate climate climate", "climate policy river"),
            date="2024-07-01T00:00:00Z",
        ),
        Resp(
            "https://beta.example/other",
            html_page("Other", "<b>nothing</b> &amp; more"),
            date="2024-08-01T00:00:00Z",
        ),
    ]
    import_warc_file(
        library, write_warc(tmp_path / "a.warc.gz", alpha), collection="alpha", tags=("work",)
    )
    import_warc_file(library, write_warc(tmp_path / "b.warc.gz", beta), collection="beta")
    with library.write() as s:
        s.execute(text("UPDATE snapshots SET http_status = 404 WHERE url LIKE '%/other'"))
    return library


def urls(lib: Library, q: Query) -> list[str]:
    return [h.url for h in search(lib, q)]


def test_ranking_title_weighs_most(filled: Library) -> None:
    hits = search(filled, Query("climate"))
    assert hits[0].url == "https://beta.example/climate"
    assert len(hits) == 3
    assert all(a.score <= b.score for a, b in pairwise(hits))


def test_snippet_highlights(filled: Library) -> None:
    [hit] = search(filled, Query("flooded"))
    assert "[flooded]" in hit.snippet_marked()
    assert hit.snippet_html().count("<b>flooded</b>") == 1
    assert "\x02" not in hit.snippet_text
    [other] = search(filled, Query("nothing"))
    assert "&lt;" not in other.snippet_html() and "<b>nothing</b>" in other.snippet_html()


def test_search_as_you_type_prefix(filled: Library) -> None:
    assert urls(filled, Query("flo")) == ["https://www.alpha.example/river"]
    assert urls(filled, Query("flo ")) == []
    assert urls(filled, Query("flo", prefix_last=False)) == []
    # typing a phrase: found while its last word is typed, before the quote closes
    assert urls(filled, Query('"the river flo')) == ["https://www.alpha.example/river"]


def test_filters(filled: Library) -> None:
    assert set(urls(filled, Query("river", collection="alpha"))) == {
        "https://www.alpha.example/river",
        "https://docs.alpha.example/notes",
    }
    assert urls(filled, Query("river", collection="beta")) == ["https://beta.example/climate"]
    assert len(urls(filled, Query("", tag="work"))) == 3
    assert urls(filled, Query("", tag="nope")) == []
    assert set(urls(filled, Query("", domain="alpha.example"))) == {
        "https://www.alpha.example/river",
        "https://docs.alpha.example/notes",
        "https://www.alpha.example/report.txt",
    }
    assert urls(filled, Query("", domain="docs.alpha.example")) == [
        "https://docs.alpha.example/notes"
    ]
    assert urls(filled, Query("climate", url_prefix="https://www.alpha.example/")) == [
        "https://www.alpha.example/report.txt"
    ]
    since, until = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 7, 1, tzinfo=UTC)
    assert set(urls(filled, Query("", since=since, until=until))) == {
        "https://docs.alpha.example/notes",
        "https://www.alpha.example/report.txt",
    }
    assert urls(filled, Query("climate", mime="text/plain")) == [
        "https://www.alpha.example/report.txt"
    ]
    assert len(urls(filled, Query("", mime="text/"))) == 5
    assert urls(filled, Query("", status="4xx")) == ["https://beta.example/other"]
    assert len(urls(filled, Query("", status=200))) == 4
    assert len(urls(filled, Query("", fidelity="imported"))) == 5
    assert len(urls(filled, Query("", state="complete"))) == 5  # a state without text
    assert (
        urls(filled, Query("", state="failed")) == []
        and count(filled, Query("", state="failed")) == 0
    )
    assert urls(filled, Query("", fidelity="high")) == []
    # combined: text + two filters
    assert urls(filled, Query("river", collection="alpha", since=since)) == [
        "https://docs.alpha.example/notes"
    ]
    # the words and a date range, and the same while the last word is typed (on
    # PostgreSQL the date is asked of the full-text rows too: each must have its own)
    for q in (
        Query("river climate", since=since, until=until),
        Query("river cli", since=since, until=until),
    ):
        assert urls(filled, q) == ["https://docs.alpha.example/notes"]


def test_no_text_lists_newest_first_and_paginates(filled: Library) -> None:
    everything = urls(filled, Query())
    assert everything[0] == "https://beta.example/other" and len(everything) == 5
    assert [h.url for h in search(filled, Query(), limit=2, offset=2)] == everything[2:4]
    assert count(filled, Query()) == 5 and count(filled, Query("river")) == 3
    assert len(matching_ids(filled, Query("river"))) == 3


def test_hostile_text_never_errors(filled: Library) -> None:
    for typed in [
        "NEAR(",
        "a AND",
        "title:x",
        "'; DROP TABLE snapshots; --",
        "x\x00y",
        "riv\x00",
        '"river\x00flooded"',
    ]:
        search(filled, Query(typed))
        count(filled, Query(typed))
        matching_ids(filled, Query(typed))
    assert count(filled, Query()) == 5
    # a control character separates words, as a space does
    assert urls(filled, Query("flooded\x00museum ")) == ["https://www.alpha.example/river"]


WITHOUT_RIVER = ["https://beta.example/other", "https://www.alpha.example/report.txt"]


def test_excluded_words_alone_find_the_captures_without_them(filled: Library) -> None:
    """``-river`` is every capture an empty search lists, minus those holding "river"
    (it listed them all), newest first, on both engines, for the table too."""
    for typed in ("-river", "-RIVER ", "-river -zzzznothing", "-riv -river"):
        q = Query(typed)
        hits = search(filled, q)
        assert [h.url for h in hits] == WITHOUT_RIVER, typed
        assert all(h.score == 0.0 and "\x02" not in h.snippet for h in hits)
        assert count(filled, q) == 2 and len(matching_ids(filled, q)) == 2
    assert urls(filled, Query("-river -nothing")) == ["https://www.alpha.example/report.txt"]
    assert urls(filled, Query('-"river flooded" -climate')) == ["https://beta.example/other"]
    assert urls(filled, Query("-river", collection="alpha")) == [WITHOUT_RIVER[1]]
    assert [h.url for h in search(filled, Query("-river"), limit=1, offset=1)] == WITHOUT_RIVER[1:]
    assert count(filled, Query("-riv")) == 5  # an excluded word is a whole word
    assert count(filled, Query("-river", state="failed")) == 0

    from archiver_app.api.table import SnapshotQuery, TableReader

    reader = TableReader(filled)
    raw = reader.connect()
    try:
        query = SnapshotQuery(search="-river")
        window, complete = reader.search_window(raw.cursor(), query, 10)
        every = reader.all_ids(raw.cursor(), query, CancelToken())
    finally:
        raw.close()
    expected = [h.snapshot_id for h in search(filled, Query("-river"))]  # newest first
    assert list(window) == list(every) == expected and complete
    assert reader.snippets(expected, "-river") == {}
    assert reader.search_problem("-river") is None


@pytest.mark.parametrize("typed", ["OR", "(", "-", '"', "- OR (", "*"])
def test_text_with_no_word_is_refused_not_read_as_everything(filled: Library, typed: str) -> None:
    """``OR``, ``(`` or ``-`` alone listed every capture, as if nothing had been typed."""
    message = "nothing to search for in .*a search needs a word of letters or digits"
    for ask in (search, count, matching_ids):
        with pytest.raises(InputError, match=message):
            ask(filled, Query(typed))  # type: ignore[operator]
    from archiver_app.api.table import SnapshotQuery, TableReader

    reader = TableReader(filled)
    problem = reader.search_problem(typed)
    assert problem is not None and problem.startswith("nothing to search for")
    raw = reader.connect()
    try:  # the captures table shows no rows (and says why: the GUI's empty text)
        assert reader.search_window(raw.cursor(), SnapshotQuery(search=typed), 10) == (
            array("q"),
            True,
        )
    finally:
        raw.close()


def test_many_ored_or_excluded_words_are_searched_not_crashed_on(filled: Library) -> None:
    """A hundred ORed or excluded words nested a hundred parentheses deep: FTS5's parser
    overflowed its stack (a traceback); past MAX_TERMS words the search is refused."""
    from archiver_app.search.query import MAX_TERMS

    ored = " OR ".join(["museum", *(f"w{i}" for i in range(MAX_TERMS - 2)), "policy"])
    assert set(urls(filled, Query(ored))) == {
        "https://www.alpha.example/river",
        "https://beta.example/climate",
    }
    excluded = "river " + " ".join(f"-w{i}" for i in range(MAX_TERMS - 2)) + " -museum"
    assert set(urls(filled, Query(excluded))) == {
        "https://docs.alpha.example/notes",
        "https://beta.example/climate",
    }
    assert count(filled, Query(excluded)) == 2
    only_excluded = " ".join(f"-w{i}" for i in range(MAX_TERMS - 1)) + " -river"
    assert urls(filled, Query(only_excluded)) == WITHOUT_RIVER
    too_many = " OR ".join(f"w{i}" for i in range(MAX_TERMS + 1))
    with pytest.raises(InputError, match="too many words"):
        search(filled, Query(too_many))
    from archiver_app.api.table import TableReader

    assert "too many words" in str(TableReader(filled).search_problem(too_many))


def test_cancelled_search_stops(filled: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    from archiver_app.search import engine
    from archiver_app.tasks import Cancelled, CancelToken

    token = CancelToken()
    assert len(search(filled, Query("climate"), cancel=token)) == 3
    token.cancel()
    with pytest.raises(Cancelled):
        search(filled, Query("climate"), cancel=token)

    class CancelledWhileRunning(CancelToken):
        """Not cancelled when the search starts; cancelled at SQLite's first check."""

        looks = 0

        @property
        def cancelled(self) -> bool:
            self.looks += 1
            return self.looks > 1

    monkeypatch.setattr(engine, "CANCEL_CHECK_STEPS", 1)
    running = CancelledWhileRunning()
    with pytest.raises(Cancelled):
        search(filled, Query("climate"), cancel=running)
    # the pooled connection is usable again, without the handler
    assert len(search(filled, Query("climate"))) == 3


def test_a_search_as_you_type_cancelled_midway_leaves_the_connection_usable(
    filled: Library,
) -> None:
    """Cancelled while the newest candidates are read (the bounded path of a short last
    word): Cancelled is raised, and the next search on the pooled connection answers as
    before (on PostgreSQL the candidates switch the planner for the transaction)."""
    from archiver_app.tasks import Cancelled, CancelToken

    typed = Query("river clim")
    before = urls(filled, typed)
    assert before == ["https://beta.example/climate", "https://docs.alpha.example/notes"]

    class CancelledAtTheFirstCandidate(CancelToken):
        looks = 0

        @property
        def cancelled(self) -> bool:
            self.looks += 1
            return self.looks > 1  # not when the search starts: when it looks again

    with pytest.raises(Cancelled):
        search(filled, typed, cancel=CancelledAtTheFirstCandidate())
    assert urls(filled, typed) == before
    assert urls(filled, Query("river clim", domain="beta.example")) == before[:1]


def test_postgresql_rows_indexed_before_revision_0010_get_their_capture_time(
    postgres_url: str, library_root: Path, tmp_path: Path
) -> None:
    """Migration 0010 fills ``snapshot_fts.captured_at`` of the rows already indexed, so a
    date range finds them; its downgrade drops the column again."""
    from alembic import command

    from archiver_app.store import schema

    lib = Library.open(library_root, create=True, database_url=postgres_url)
    with lib:
        page = Resp("https://a.example/", html_page("Harbour", "harbour cranes"), date="2024-03-01")
        import_warc_file(lib, write_warc(tmp_path / "a.warc.gz", [page]))
        cfg = schema.alembic_config()
        with lib.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0009")
            columns = conn.execute(
                text(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_name = 'snapshot_fts'"
                )
            ).scalars()
            assert "captured_at" not in set(columns)
    with Library.open(library_root, database_url=postgres_url) as lib:
        since = datetime(2024, 2, 1, tzinfo=UTC)
        for q in (Query("harbour cranes", since=since), Query("harbour cra", since=since)):
            assert urls(lib, q) == ["https://a.example/"]
        assert urls(lib, Query("harbour", until=since)) == []


def test_postgresql_asks_the_date_range_of_the_full_text_rows_index(
    postgres_url: str, library_root: Path, tmp_path: Path
) -> None:
    """With a date range, the ranked statement can intersect the words' GIN index with the
    B-tree on ``snapshot_fts.captured_at`` (migration 0010) before it reads a row."""
    from archiver_app.search.engine import _sql

    with Library.open(library_root, create=True, database_url=postgres_url) as lib:
        pages = [
            Resp(f"https://a.example/{n}", html_page("Harbour", "harbour cranes"), date=f"2024-{m}")
            for n, m in enumerate(("01-05", "02-05", "03-05"))
        ]
        import_warc_file(lib, write_warc(tmp_path / "a.warc.gz", pages))
        since = datetime(2024, 2, 1, tzinfo=UTC)
        with lib.engine.connect() as conn:
            params: dict[str, object] = {"limit": 50, "offset": 0}
            sql = _sql(Query("harbour cranes", since=since), params, conn=conn)
            # three rows: without this the planner reads them all, index or not
            conn.execute(text("SET LOCAL enable_seqscan = off"))
            plan = "\n".join(r[0] for r in conn.execute(text("EXPLAIN " + sql), params))
        # search as you type asks it of the full-text row (f) in its window statements
        sent: list[str] = []
        event.listen(lib.engine, "before_cursor_execute", lambda *a: sent.append(a[2]))
        assert urls(lib, Query("harbour cra", since=since)) == [
            "https://a.example/2",
            "https://a.example/1",
        ]
    assert "ix_snapshot_fts_captured_at" in plan, plan
    assert any("f.captured_at >= " in sql and "quick_lo" in sql for sql in sent)


def test_postgresql_keeps_a_pages_words_in_its_row(
    postgres_url: str, library_root: Path, tmp_path: Path
) -> None:
    """Migration 0011: a page's ``tsvector`` of a few kB stays in its row of
    ``snapshot_fts`` (ranking reads it for every match), where the default storage put it
    in TOAST; the page's text is what leaves the row."""
    import random

    rng = random.Random(7)
    body = " ".join("".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=6)) for _ in range(400))
    with Library.open(library_root, create=True, database_url=postgres_url) as lib:
        page = Resp("https://a.example/", html_page("Words", body), date="2024-03-01")
        import_warc_file(lib, write_warc(tmp_path / "a.warc.gz", [page]))
        with lib.engine.connect() as conn:
            doc = conn.execute(
                text("SELECT octet_length(CAST(doc AS text)) FROM snapshot_fts")
            ).scalar_one()
            toast = conn.execute(
                text(
                    "SELECT CAST(reltoastrelid AS regclass) FROM pg_class "
                    "WHERE oid = CAST('snapshot_fts' AS regclass)"
                )
            ).scalar_one()
            toasted = conn.execute(
                text(f"SELECT coalesce(sum(octet_length(chunk_data)), 0) FROM {toast}")
            ).scalar_one()
        assert doc > 4000
        assert 0 < toasted < len(body) + 100  # the body alone
        assert urls(lib, Query("words")) == ["https://a.example/"]


def test_postgresql_finds_the_words_through_the_index_whatever_the_table_looks_like(
    postgres_url: str, library_root: Path, tmp_path: Path
) -> None:
    """Every statement that asks ``doc @@ q`` (ranked search, count, the ids an export
    takes, the captures table's newest matches) reads the words' GIN index, never every
    page: the planner does not know that a page's ``tsvector`` out of line in TOAST costs
    its decoding, and on a small or TOASTed table it would scan."""
    from psycopg import Cursor

    from archiver_app.api.table import TableReader

    plans: list[str] = []

    def explained(cursor: Cursor[Any], statement: str, params: Any) -> None:
        if "@@" in statement:
            with cursor.connection.cursor() as look:
                look.execute("EXPLAIN " + statement, params or None)
                plans.append("\n".join(str(r[0]) for r in look.fetchall()))

    with Library.open(library_root, create=True, database_url=postgres_url) as lib:
        pages = [
            Resp(f"https://a.example/{n}", html_page("Harbour", f"harbour cranes page {n}"))
            for n in range(5)
        ]
        import_warc_file(lib, write_warc(tmp_path / "a.warc.gz", pages))
        event.listen(
            lib.engine, "before_cursor_execute", lambda _c, cur, st, p, *_: explained(cur, st, p)
        )
        q = Query("harbour cranes", collection="default")
        assert len(search(lib, q)) == 5
        assert count(lib, q) == 5
        assert len(matching_ids(lib, q)) == 5
        excluding = Query("-page3 -zzzz", collection="default")  # the excluded words' matches
        assert len(search(lib, excluding)) == count(lib, excluding) == 5
        assert len(matching_ids(lib, excluding)) == 5

        class Explaining:  # the table's reader threads use DB-API cursors
            def __init__(self, cursor: Cursor[Any]) -> None:
                self.cursor, self.connection = cursor, cursor.connection

            def execute(self, statement: str, params: Any = None) -> Cursor[Any]:
                explained(self.cursor, statement, params)
                return self.cursor.execute(statement, params)

            def __getattr__(self, name: str) -> Any:
                return getattr(self.cursor, name)

        raw = lib.engine.raw_connection()
        try:
            with raw.driver_connection.cursor() as cur:
                cur.execute("SET jit = off")  # the session's own setting
                table = TableReader(lib).search
                found = []
                # a whole word, then a short prefix (the newest pages, window by window)
                for typed in ("harbour cranes", "harbour cra", "-zzzz"):
                    found.append(table.newest_matches(Explaining(cur), typed, 10))
                    # the connection's planner settings are back as they were
                    cur.execute(
                        "SELECT current_setting('enable_seqscan'), "
                        "current_setting('enable_indexscan'), current_setting('jit')"
                    )
                    assert cur.fetchone() == ("on", "on", "off"), typed
        finally:
            raw.close()
        assert [len(f) for f in found] == [5, 5, 5]
    assert len(plans) >= 9
    for plan in plans:  # bitmaps only: of the words, or of the rows a filter keeps
        assert "Seq Scan on snapshot_fts" not in plan, plan
        assert "using snapshot_fts_pkey" not in plan, plan


def test_sqlite_reads_the_words_postings_once_whatever_the_filter(
    library_root: Path, tmp_path: Path
) -> None:
    """SQLite walks the words' postings and joins the snapshots to them (its planner,
    left to choose, walked a collection's index and asked FTS5 about each snapshot in
    it: 13 s to count two words at 100,000 pages)."""
    from archiver_app.search.engine import _sql

    with Library.open(library_root, create=True) as lib:
        page = Resp("https://a.example/", html_page("Harbour", "harbour cranes"))
        import_warc_file(lib, write_warc(tmp_path / "a.warc.gz", [page]))
        for counting in (True, False):
            params: dict[str, Any] = {"limit": 50, "offset": 0}
            sql = _sql(Query("harbour cranes", collection="default"), params, counting=counting)
            with lib.engine.connect() as conn:
                plan = [str(r[3]) for r in conn.execute(text("EXPLAIN QUERY PLAN " + sql), params)]
            scans = [p for p in plan if p.startswith(("SCAN", "SEARCH"))]
            assert scans[0].startswith("SCAN snapshot_fts VIRTUAL TABLE"), plan


def test_address_filters_find_an_address_typed_either_way(library: Library) -> None:
    """An address in another script is stored as the browser sends it (IDNA host, UTF-8
    escapes); one captured before that was stored as typed. The domain and address
    filters find both, whether the filter is typed in Unicode or escaped."""
    from tests.helpers.snapshots import add_snapshot

    stored = "http://xn--bcher-kva.example/caf%C3%A9?q=%C3%BC"
    old = "http://bücher.example/café?q=ü"  # stored as typed by an earlier version
    add_snapshot(library, stored, title="Bücher", body="stored")
    add_snapshot(library, old, title="Bücher", body="as typed")
    add_snapshot(library, "http://other.example/caf", title="Other", body="other")
    both = {stored, old}
    for domain in ("bücher.example", "xn--bcher-kva.example", "www.Bücher.example"):
        assert set(urls(library, Query("", domain=domain))) == both, domain
    for prefix in (
        "http://bücher.example/café",
        "http://xn--bcher-kva.example/caf%C3%A9",
        "http://Bücher.example/caf%c3%a9?q=",
        "http://bücher.example/",
    ):
        assert set(urls(library, Query("", url_prefix=prefix))) == both, prefix
    assert urls(library, Query("", url_prefix="http://bücher.example/x")) == []
