"""The PostgreSQL side of search: scoring a ``tsquery`` as bm25 scores an FTS5 match.

SQLite ranks with bm25: per term, its inverse document frequency times a saturating
function of how often it occurs in the page (fields weighted). PostgreSQL has ``ts_rank``
(field weights, occurrences, the page's length) but no document frequency, so a rare word
would weigh no more than a common one. :func:`score_sql` multiplies each term's
``ts_rank`` by bm25's idf, from document frequencies found by :func:`frequencies`:

* the number of pages: ``pg_class.reltuples`` once the table is large (ANALYZE keeps it
  current), else counted;
* a term's pages: from the column statistics ANALYZE keeps for a ``tsvector``
  (``pg_stats.most_common_elems``, the frequent words, with the share of rows holding each)
  when the word is listed there, else counted through the GIN index (cheap exactly then:
  a word not among the most common is in few pages) and the count kept as long as the
  statistics (a word typed again, as search as you type does, is not counted again).
  ``doc`` keeps statistics on up to 10,000 words (migration 0009; PostgreSQL's default
  is 1,000), so the words worth ranking by rarity are mostly listed.

Where the two can still differ (the ranking test and the search benchmark compare them):
``ts_rank`` is not bm25's term-frequency curve (a second occurrence adds 1/4, a third 1/9
… of the first, where bm25 adds 0.375, 0.196 …), it mixes fields by the weight of each
occurrence rather than bm25's weighted sum, it divides by ``1 + log(length)`` where bm25
compares the length with the average, and it is a ``real`` (7 digits). So two pages whose
scores are close (within about 1e-6 relative) can swap places, and for a word in more than
half of the pages (idf clamped to 1e-6 on both) the order of its pages follows each
engine's own curve. Equal scores are ordered the same on both engines: newest capture
first, then the snapshot saved last (``ORDER BY score, captured_at DESC, id DESC``, and
:func:`archiver_app.search.engine._rank_order` on the as-you-type path).

Threading contract: stateless apart from a short-lived cache of the statistics per
database; call from any thread with a connection of your own.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, text

from archiver_app.store.tsearch import positive_terms
from archiver_app.tasks import CancelToken

#: Below this many rows, pages and term frequencies are counted exactly.
EXACT_BELOW = 10_000
#: Seconds the statistics of a database are reused.
STATS_SECONDS = 60.0
#: Per database: (when read, estimated rows, {lexeme: share of rows}, {term: pages counted}).
_stats: dict[str, tuple[float, float, dict[str, float], dict[str, float]]] = {}
_stats_lock = threading.Lock()


def weights_array(weights: Sequence[float]) -> str:
    """``ts_rank``'s weights (body D, url C, tags B, title A) from bm25's column weights
    ``(title, url, body, tags)``, relative to the title's."""
    title, url, body, tags = weights
    return "{" + ",".join(str(w / title) for w in (body, url, tags, title)) + "}"


def _statistics(conn: Connection) -> tuple[float, dict[str, float], dict[str, float]]:
    """``(estimated rows, {lexeme: share of rows}, {term: pages})`` from the planner's
    statistics; the last holds the terms counted since they were read (kept as long)."""
    key = conn.engine.url.render_as_string(hide_password=True)
    now = time.monotonic()
    with _stats_lock:
        cached = _stats.get(key)
    if cached is not None and now - cached[0] < STATS_SECONDS:
        return cached[1], cached[2], cached[3]
    rows = float(
        conn.execute(
            text("SELECT reltuples FROM pg_class WHERE oid = CAST('snapshot_fts' AS regclass)")
        ).scalar()
        or 0.0
    )
    common: dict[str, float] = {}
    found = conn.execute(
        text(
            "SELECT CAST(CAST(most_common_elems AS text) AS text[]), most_common_elem_freqs "
            "FROM pg_stats WHERE tablename = 'snapshot_fts' AND attname = 'doc'"
        )
    ).first()
    if found is not None and found[0]:
        common = dict(zip(found[0], (float(f) for f in found[1]), strict=False))
    counted: dict[str, float] = {}
    with _stats_lock:
        _stats[key] = (now, rows, common, counted)
    return rows, common, counted


def frequencies(conn: Connection, terms: Sequence[str]) -> tuple[float, list[float]]:
    """The number of indexed pages and, per ``tsquery`` term, the pages holding it."""
    rows, common, counted = _statistics(conn)
    exact = rows < EXACT_BELOW
    counts: list[float | None] = [None] * len(terms)
    for i, term in enumerate(terms):
        word = term[1:-1] if term.count("'") == 2 and term[0] == term[-1] == "'" else None
        if not exact and word is not None and word in common:
            counts[i] = common[word] * rows
        elif not exact:
            counts[i] = counted.get(term)
    wanted = [i for i, c in enumerate(counts) if c is None]
    parts = ["(SELECT count(*) FROM snapshot_fts)"] if exact else []
    parts += [
        f"(SELECT count(*) FROM snapshot_fts WHERE doc @@ CAST(:t{i} AS tsquery))"  # noqa: S608
        for i in wanted
    ]
    if parts:
        # One statement for every count, through the GIN index.
        with words_by_index(lambda sql, values: conn.execute(text(sql), values)):
            got = conn.execute(
                text("SELECT " + ", ".join(parts)), {f"t{i}": terms[i] for i in wanted}
            ).one()
        values = [float(v or 0) for v in got]
        if exact:
            rows = values.pop(0)
        for i, value in zip(wanted, values, strict=True):
            counts[i] = value
            if not exact:
                counted[terms[i]] = value
    return rows, [float(c or 0) for c in counts]


#: Per database: (when read whole, the highest snapshot id read, the snapshots' domains).
_domains: dict[str, tuple[float, int, set[str]]] = {}
#: Snapshot ids read again below the highest seen when newer ones appear: a transaction
#: that took a lower id may commit after a higher one was read (and at worst, the whole
#: list is read again after :data:`STATS_SECONDS`).
DOMAIN_MARGIN = 1_000
#: More domains than this under the filter's (``com``, say) are not named one by one:
#: the filter stays ``LIKE`` (a scan, but no statement with thousands of parameters).
DOMAINS_NAMED_MAX = 1_000

_ALL_DOMAINS = text(
    # One index probe per distinct domain (a loose scan of ix_snapshots_domain_captured_at).
    "WITH RECURSIVE d(domain) AS ((SELECT domain FROM snapshots ORDER BY domain LIMIT 1) "
    "UNION ALL SELECT (SELECT domain FROM snapshots WHERE domain > d.domain "
    "ORDER BY domain LIMIT 1) FROM d WHERE d.domain IS NOT NULL) "
    "SELECT domain FROM d WHERE domain IS NOT NULL"
)


def domains_under(conn: Connection, domain: str) -> list[str]:
    """The snapshots' domains that are ``domain`` or below it (``a.b`` for ``b``).

    The filter "this site and its subdomains" is ``domain = :d OR domain LIKE '%.' || :d``
    on SQLite, where the full-text index leads; on PostgreSQL the planner scans every
    snapshot for the ``LIKE``, so the filter becomes ``domain IN (…)`` over the existing
    index. The domains are read whole (one probe per distinct domain) once per
    :data:`STATS_SECONDS`, and those of snapshots saved since whenever the highest id grows.
    """
    key = conn.engine.url.render_as_string(hide_password=True)
    now = time.monotonic()
    top = int(conn.execute(text("SELECT coalesce(max(id), 0) FROM snapshots")).scalar() or 0)
    with _stats_lock:
        cached = _domains.get(key)
    if cached is None or now - cached[0] >= STATS_SECONDS:
        read_at, known = now, {str(d) for d in conn.execute(_ALL_DOMAINS).scalars()}
    else:
        read_at, seen, known = cached
        if top > seen:
            after = {"after": seen - DOMAIN_MARGIN}
            new = conn.execute(
                text("SELECT DISTINCT domain FROM snapshots WHERE id > :after"), after
            )
            known = known | {str(d) for d in new.scalars()}
    with _stats_lock:
        _domains[key] = (read_at, top, known)
    tail = "." + domain
    return sorted(d for d in known if d == domain or d.endswith(tail))


#: The planner settings :func:`words_by_index` turns off: every scan but the bitmap ones,
#: and JIT (a disabled scan still needed for a small table prices the statement above
#: ``jit_above_cost``: half a second compiling a 2 ms search).
INDEX_ONLY_SETTINGS = ("enable_seqscan", "enable_indexscan", "jit")


#: Expressions to select: the :data:`INDEX_ONLY_SETTINGS` as they are (the first values,
#: for :func:`restore_sql`), then each turned off for the rest of the transaction (the
#: select list is evaluated in order).
INDEX_ONLY_SQL = ", ".join(
    [f"current_setting('{n}')" for n in INDEX_ONLY_SETTINGS]
    + [f"set_config('{n}', 'off', true)" for n in INDEX_ONLY_SETTINGS]
)


def restore_sql(was: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    """The statement (and its values) that sets the :data:`INDEX_ONLY_SETTINGS` back to
    ``was``, the first values of a row that selected :data:`INDEX_ONLY_SQL`."""
    names = [f"planner_{i}" for i in range(len(INDEX_ONLY_SETTINGS))]
    sql = "SELECT " + ", ".join(
        f"set_config('{n}', :{v}, true)" for n, v in zip(INDEX_ONLY_SETTINGS, names, strict=True)
    )
    return sql, dict(zip(names, was[: len(names)], strict=True))


@contextmanager
def words_by_index(execute: Callable[[str, dict[str, Any]], Any]) -> Iterator[None]:
    """While the block runs, the planner finds rows through indexes, as bitmaps only;
    after it, the settings are as they were (``execute(sql, params)`` runs a statement on
    the connection that searches and returns its rows).

    The planner prices ``doc @@ q`` at one operator call a row and knows nothing of TOAST.
    A page's ``tsvector`` that does not fit in its row (about 8 kB: a page of a thousand
    words) is stored out of line, so the table's rows look small and reading them all, in
    order or by the primary key, looks cheaper than the words' GIN index; it then reads and
    decodes every page's ``tsvector``: 0.9 s for two words at 100,000 such pages, where the
    index answers in tens of milliseconds. A search's words are always in the index, so
    for a full-text statement no other plan is the better one."""
    was = execute(f"SELECT {INDEX_ONLY_SQL}", {}).fetchone()
    yield
    # Not after an error: the transaction is then rolled back (and the settings with it),
    # and a statement now would only raise again, over the error that matters.
    execute(*restore_sql(was))


def score_sql(
    conn: Connection, fts: str, doc: str, params: dict[str, Any], weights: Sequence[float]
) -> str:
    """The score of a match of ``fts`` (lower is better, as bm25's): minus the sum over the
    terms not excluded of the term's idf times its ``ts_rank`` in ``doc`` (field weights,
    divided by 1 + the log of the page's length). Term values go into ``params``."""
    terms = positive_terms(fts)
    if not terms:
        return "0.0"
    total, found = frequencies(conn, terms)
    parts = []
    for i, (term, n) in enumerate(zip(terms, found, strict=True)):
        name = f"rank_term_{i}"
        params[name] = term
        idf = max(math.log((total - n + 0.5) / (n + 0.5)), 1e-6)
        parts.append(
            f"{idf!r} * ts_rank('{weights_array(weights)}', {doc}, CAST(:{name} AS tsquery), 1)"
        )
    return "-(" + " + ".join(parts) + ")"


@contextmanager
def cancel_watcher(raw: Any, cancel: CancelToken, poll: float) -> Iterator[None]:
    """While the block runs, a thread looks at ``cancel`` every ``poll`` seconds and asks
    the server to cancel ``raw``'s statement (a psycopg connection) once it is set."""
    done = threading.Event()

    def look() -> None:
        while not done.wait(poll):
            if cancel.cancelled:
                raw.cancel()
                return

    watcher = threading.Thread(target=look, name="search-cancel", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()


__all__ = [
    "cancel_watcher",
    "domains_under",
    "frequencies",
    "restore_sql",
    "score_sql",
    "weights_array",
    "words_by_index",
]
