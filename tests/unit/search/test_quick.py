"""The bounded path for a short still-typed last word (``archiver_app.search.quick``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import pytest
from sqlalchemy import event

from archiver_app.library import Library
from archiver_app.search import Query, build_fts_query, quick, search
from tests.helpers.factories import bulk_snapshots


def _fill(lib: Library, texts: list[tuple[str, str]]) -> list[int]:
    """Snapshots (oldest id first) with ``(title, body)`` as their indexed text."""
    bulk_snapshots(lib, len(texts))
    conn = sqlite3.connect(lib.db_path)
    try:
        ids = [r[0] for r in conn.execute("SELECT id FROM snapshots ORDER BY id")]
        conn.executemany(
            "INSERT INTO snapshot_fts(rowid, title, url, body, tags) VALUES (?, ?, ?, ?, '')",
            [(i, t, f"https://p{i}.example/", b) for i, (t, b) in zip(ids, texts, strict=True)],
        )
        conn.commit()
    finally:
        conn.close()
    return ids


@pytest.fixture
def fts_statements(library: Library) -> Iterator[list[str]]:
    """The MATCH expressions every statement on ``library`` was given."""
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, _sql: str, params: Any, *_args: Any) -> None:
        values = params.values() if isinstance(params, dict) else params or ()
        seen.extend(v for v in values if isinstance(v, str) and '"' in v)

    event.listen(library.engine, "before_cursor_execute", record)
    yield seen
    event.remove(library.engine, "before_cursor_execute", record)


def test_plan_only_for_whole_words_and_a_short_prefix() -> None:
    def plan(text: str) -> quick.Plan | None:
        fts = build_fts_query(text)
        return quick.plan_for(fts) if fts else None

    assert plan("river cli") == quick.Plan(("river",), "cli")
    assert plan("Clím") == quick.Plan((), "clim")
    assert plan("river clima") is None  # five letters: FTS5 merges few words
    assert plan("river cli ") is None  # a finished word
    assert plan("river OR cli") is None
    assert plan("-river cli") is None
    assert plan('"river bank" cli') is None
    assert plan("river c-l") is None


def test_a_short_prefix_is_never_merged_by_fts5(
    library: Library, fts_statements: list[str]
) -> None:
    ids = _fill(
        library,
        [
            ("River", "the river climbs over the bank"),
            ("Other", "a river and a client"),
            ("No", "river reclining, no word starting so"),
            ("Clinic", "nothing else"),
            ("Accent", "river Clímate-policy"),
        ],
    )
    hits = search(library, Query("river cli"))
    assert sorted(h.snapshot_id for h in hits) == [ids[0], ids[1], ids[4]]
    assert not [s for s in fts_statements if "*" in s]  # no prefix query reached FTS5
    # the same pages FTS5 itself finds for the prefix
    conn = sqlite3.connect(library.db_path)
    truth = {
        r[0]
        for r in conn.execute(
            'SELECT rowid FROM snapshot_fts WHERE snapshot_fts MATCH \'"river" AND "cli"*\''
        )
    }
    conn.close()
    assert truth == {h.snapshot_id for h in hits}
    accent = next(h for h in hits if h.snapshot_id == ids[4])
    assert accent.snippet_marked() == "[river] [Clímate]-policy"
    # a longer prefix goes to FTS5 as before
    fts_statements.clear()
    assert [h.snapshot_id for h in search(library, Query("river climb"))] == [ids[0]]
    assert any(s.endswith('"climb"*') for s in fts_statements)


def test_only_the_newest_matches_are_ranked(
    library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The oldest page is by far the best match; 30 newer pages match weakly.
    texts = [("Museum museum museum", "museum catalogue")]
    texts += [("Page", f"filler {n} text about a museum and its catalogue") for n in range(30)]
    ids = _fill(library, texts)
    full = search(library, Query("museum catalogue", prefix_last=False), limit=5)
    assert full[0].snapshot_id == ids[0]  # whole words: every match is ranked
    monkeypatch.setattr(quick, "WINDOW", 10)
    hits = search(library, Query("museum cat"), limit=5)
    assert len(hits) == 5
    assert {h.snapshot_id for h in hits} <= set(ids[-10:])  # the 10 newest matches only
    assert all(a.score <= b.score for a, b in pairwise(hits))
    assert "[cat" in hits[0].snippet_marked() and "[museum]" in hits[0].snippet_marked()


def test_a_rare_prefix_falls_back_to_fts5(
    library: Library, monkeypatch: pytest.MonkeyPatch, fts_statements: list[str]
) -> None:
    texts = [("Old", "one zebra here")] + [("New", f"page {n} nothing") for n in range(40)]
    ids = _fill(library, texts)
    monkeypatch.setattr(quick, "MAX_SCAN", 10)
    hits = search(library, Query("zeb"))
    assert [h.snapshot_id for h in hits] == [ids[0]]
    assert '"zeb"*' in fts_statements  # the scan gave up after 10 pages: FTS5 answered
    assert "[zebra]" in hits[0].snippet_marked()


def test_filters_and_paging_on_the_quick_path(library: Library) -> None:
    ids = _fill(library, [("T", f"word{n} climate") for n in range(12)])
    conn = sqlite3.connect(library.db_path)
    domains = dict(conn.execute("SELECT id, domain FROM snapshots"))
    captured = dict(conn.execute("SELECT id, captured_at FROM snapshots"))
    conn.close()

    def newest(some: list[int]) -> list[int]:
        """Equal scores: the newest capture first, as the ranked query orders them."""
        return sorted(some, key=lambda i: (captured[i], i), reverse=True)

    domain = domains[ids[3]]
    expected = newest([i for i in ids if domains[i] == domain])
    assert [h.snapshot_id for h in search(library, Query("cli", domain=domain))] == expected
    newest_first = [h.snapshot_id for h in search(library, Query("cli"), limit=50)]
    assert newest_first == newest(ids)
    assert newest_first == [h.snapshot_id for h in search(library, Query("climate "), limit=50)]
    assert [h.snapshot_id for h in search(library, Query("cli"), limit=5, offset=5)] == (
        newest_first[5:10]
    )


def test_snippets_never_run_the_match_per_hit(library: Library) -> None:
    """The snippet step reads each hit's text by rowid without a MATCH (with a prefix,
    FTS5 would merge the prefix's postings again for every hit)."""
    from archiver_app.search.engine import _sql

    _fill(library, [("River", f"river climbing {n}") for n in range(60)])

    def lookups(query: Query) -> list[str]:
        params: dict[str, Any] = {"limit": 50, "offset": 0}
        sql = _sql(query, params)
        conn = sqlite3.connect(library.db_path)
        try:
            plan = [str(r[3]) for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
        finally:
            conn.close()
        index = [p.split("VIRTUAL TABLE INDEX", 1)[1] for p in plan if "VIRTUAL TABLE" in p]
        assert any("M" in i for i in index)  # the ranking step's one MATCH
        return [i for i in index if "M" in i and "=" in i]  # a MATCH per rowid

    since = datetime(2022, 1, 1, tzinfo=UTC)
    for query in (
        Query("river climb"),
        Query("river climb", since=since, mime="text/html"),
        Query("river climbing"),
    ):
        assert lookups(query) == []
