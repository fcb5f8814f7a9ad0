"""Running a :class:`~archiver_app.search.query.Query` against the library.

With text: ``snapshot_fts MATCH`` joined to ``snapshots``, ranked by bm25 (title weighs
most, then tags, url, body); on PostgreSQL the same query as a ``tsquery`` on
``snapshot_fts.doc`` (:mod:`archiver_app.store.tsearch`), ranked by ``ts_rank`` with the
same field weights. Then a snippet cut from each hit's indexed text by
:func:`archiver_app.search.quick.snippet` (the one snippet builder; the captures table's
too). The filters compile in :func:`filter_clauses`, shared with the table. While the last
word is still a
short prefix (``river cli`` → ``"river" AND "cli"*``, which can match most of a library),
:mod:`archiver_app.search.quick` answers instead, from the newest matching pages, so a
keystroke costs about the same on 1,000 or 1,000,000 pages; a longer word or a finished
one (a space after it) ranks every match. Without text: the filters alone,
newest first, with the stored snippet; with excluded words only (``-draft``), the same minus
the captures holding one (:func:`excluded_clause`). A revisited page was given its
original's text at index time, so it is found like any other capture.

Threading contract: stateless; call from any thread (each call opens its own connection
from the library's pool).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.search import pg as pg_search
from archiver_app.search import quick
from archiver_app.search.query import Query, TextQuery, no_words_message, parse_text
from archiver_app.store.tsearch import fts_to_tsquery
from archiver_app.store.types import UTCDateTime
from archiver_app.tasks import Cancelled, CancelToken
from archiver_app.urls import domain_forms, prefix_forms

#: Snippet highlight markers inside :attr:`Hit.snippet` (control characters never in text).
MARK_START, MARK_END = "\x02", "\x03"
#: bm25 column weights: title, url, body, tags.
WEIGHTS = (10.0, 3.0, 1.0, 5.0)
_DT = UTCDateTime()
#: SQLite virtual machine steps between two looks at a search's cancel token.
CANCEL_CHECK_STEPS = 1000
#: Seconds between two looks at a search's cancel token on PostgreSQL.
PG_CANCEL_POLL = 0.05


@dataclass(frozen=True)
class Hit:
    snapshot_id: int
    url: str
    title: str | None
    captured_at: datetime
    snippet: str  # with MARK_START/MARK_END around matched words
    collection: str
    domain: str
    mime: str | None
    status: int | None
    fidelity: str | None
    score: float  # bm25: lower is better; 0.0 without text

    def snippet_marked(self, start: str = "[", end: str = "]") -> str:
        return self.snippet.replace(MARK_START, start).replace(MARK_END, end)

    @property
    def snippet_text(self) -> str:
        return self.snippet_marked("", "")

    def snippet_html(self, tag: str = "b") -> str:
        return marks_to_html(self.snippet, tag)


def marks_to_html(snippet: str, tag: str = "b") -> str:
    """A marked snippet as HTML, matches in ``<tag>``, everything else escaped."""
    safe = escape(snippet, quote=False)
    return safe.replace(MARK_START, f"<{tag}>").replace(MARK_END, f"</{tag}>")


def domains_for(conn: Connection | None, q: Query) -> list[str] | None:
    """On PostgreSQL, the domains ``q``'s domain filter takes in
    (:func:`archiver_app.search.pg.domains_under`, for :func:`filter_clauses`); else None
    (and None for more than :data:`~archiver_app.search.pg.DOMAINS_NAMED_MAX` of them)."""
    if conn is None or conn.dialect.name != "postgresql" or not q.domain:
        return None
    forms = domain_forms(q.domain)
    named = [d for form in forms for d in pg_search.domains_under(conn, form)] or forms
    return named if len(named) <= pg_search.DOMAINS_NAMED_MAX else None


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def filter_clauses(
    q: Query,
    params: dict[str, Any],
    domains: Sequence[str] | None = None,
    *,
    fts: str | None = None,
) -> list[str]:
    """SQL conditions on ``snapshots s`` for ``q``'s filters (the one place filters are
    compiled: ranked search and the captures table), their values added to ``params``.
    ``domains``: the domain filter's domains, named (:func:`domains_for`), on PostgreSQL,
    whose planner would scan every snapshot for ``LIKE '%.site'``. ``fts``: on PostgreSQL,
    the alias of the joined full-text row, whose ``captured_at`` (migration 0010) is asked
    the date range too: the planner then intersects the words' GIN index with the date
    range in one bitmap before it reads a row (it cannot intersect indexes of two tables)."""
    where: list[str] = []
    if q.collection:
        where.append("s.collection_id = (SELECT id FROM collections WHERE slug = :collection)")
        params["collection"] = q.collection
    if q.tag:
        where.append(
            "s.id IN (SELECT st.snapshot_id FROM snapshot_tags st JOIN tags t "
            "ON t.id = st.tag_id WHERE lower(t.name) = lower(:tag))"
        )
        params["tag"] = q.tag
    if q.domain:
        if domains:
            names = [f"domain_{i}" for i in range(len(domains))]
            where.append("s.domain IN (" + ", ".join(f":{n}" for n in names) + ")")
            params.update(zip(names, domains, strict=True))
        else:  # stored in IDNA, or as typed before addresses were normalised
            tests = []
            for i, form in enumerate(domain_forms(q.domain)):
                tests.append(
                    f"s.domain = :domain_{i} OR s.domain LIKE :domain_like_{i} ESCAPE '\\'"
                )
                params[f"domain_{i}"] = form
                params[f"domain_like_{i}"] = "%." + _like_escaped(form)
            where.append("(" + " OR ".join(tests) + ")")
    if q.url_prefix:  # typed as stored, as shown, or with escapes (urls.prefix_forms)
        tests = []
        for i, form in enumerate(prefix_forms(q.url_prefix)):
            tests.append(f"substr(s.url, 1, :prefix_len_{i}) = :prefix_{i}")
            params[f"prefix_{i}"], params[f"prefix_len_{i}"] = form, len(form)
        where.append("(" + " OR ".join(tests) + ")")
    dated = ("s", fts) if fts else ("s",)
    if q.since is not None:
        where += [f"{t}.captured_at >= :since" for t in dated]
        params["since"] = _DT.process_bind_param(q.since, None)  # type: ignore[arg-type]
    if q.until is not None:
        where += [f"{t}.captured_at < :until" for t in dated]
        params["until"] = _DT.process_bind_param(q.until, None)  # type: ignore[arg-type]
    if q.mime:
        if q.mime.endswith("/"):
            where.append("substr(s.mime, 1, :mime_len) = :mime")
            params["mime_len"] = len(q.mime)
        else:
            where.append("s.mime = :mime")
        params["mime"] = q.mime.lower()
    if (status := q.status_range()) is not None:
        where.append("s.http_status BETWEEN :status_lo AND :status_hi")
        params["status_lo"], params["status_hi"] = status
    if q.fidelity:
        where.append("s.capture_fidelity = :fidelity")
        params["fidelity"] = q.fidelity
    if q.state:
        where.append("s.state = :state")
        params["state"] = q.state
    return where


def parse(q: Query) -> TextQuery:
    """``q``'s text, parsed (:func:`~archiver_app.search.query.parse_text`).

    Raises:
        InputError: the text holds no word to search for (``OR``, ``-``): listing every
            capture for it would look like an answer; or it holds too many words.
    """
    parsed = parse_text(q.text, prefix_last=q.prefix_last)
    if parsed.ignored:
        raise InputError(no_words_message(q.text))
    return parsed


def excluded_clause(excluded: str, params: dict[str, Any], *, postgresql: bool) -> str:
    """The condition on ``snapshots s``: holds none of the ``excluded`` words (a MATCH
    expression ``"a" OR "b"``). The matches are found once through the full-text index, as
    a search for those words would: SQLite keeps them in a temporary index for ``NOT IN``;
    PostgreSQL anti-joins them (``NOT IN`` a subquery too large for memory would be
    scanned again for every row)."""
    if postgresql:
        params["excluded"] = fts_to_tsquery(excluded)
        return (
            "NOT EXISTS (SELECT 1 FROM snapshot_fts x WHERE x.rowid = s.id "
            "AND x.doc @@ CAST(:excluded AS tsquery))"
        )
    params["excluded"] = excluded
    return "s.id NOT IN (SELECT rowid FROM snapshot_fts WHERE snapshot_fts MATCH :excluded)"


#: The tags column of the full-text index: the tag names, then the notes.
_OWN = "coalesce(f.tags, '')"
_COLUMNS = (
    "s.id, s.url, s.title, s.captured_at, {snippet}, c.slug, s.domain, s.mime, "
    "s.http_status, s.capture_fidelity, {score}, {own}"
)


def _sql(
    q: Query,
    params: dict[str, Any],
    *,
    counting: bool = False,
    conn: Connection | None = None,
) -> str:
    """The statement for ``q`` (rows of :data:`_COLUMNS`, or a count), for SQLite's FTS5 or
    PostgreSQL's tsvector (``conn`` on PostgreSQL: it counts the terms for ranking)."""
    pg = conn is not None and conn.dialect.name == "postgresql"
    parsed = parse(q)
    fts = parsed.match
    where = filter_clauses(q, params, domains_for(conn, q), fts="fts" if pg and fts else None)
    if fts is None:
        if not q.state:
            where.append("s.state = 'complete'")
        if parsed.excluded is not None:
            where.append(excluded_clause(parsed.excluded, params, postgresql=pg))
        clause = " WHERE " + " AND ".join(where)
        if counting:
            return f"SELECT count(*) FROM snapshots s{clause}"  # noqa: S608
        cols = _COLUMNS.format(snippet="coalesce(s.snippet, '')", score="0.0", own="''")
        return (
            f"SELECT {cols} FROM snapshots s JOIN collections c ON c.id = s.collection_id"  # noqa: S608
            f"{clause} ORDER BY s.captured_at DESC, s.id DESC LIMIT :limit OFFSET :offset"
        )
    if pg:
        params["tsq"] = fts_to_tsquery(fts)
        where.insert(0, "fts.doc @@ CAST(:tsq AS tsquery)")
        source = "snapshot_fts fts JOIN snapshots s ON s.id = fts.rowid"
        score = (
            "0.0"
            if counting or conn is None
            else pg_search.score_sql(conn, fts, "fts.doc", params, WEIGHTS)
        )
    else:
        params["match"] = fts
        where.insert(0, "snapshot_fts MATCH :match")
        # Counting, SQLite would walk a filter's index and ask FTS5 about each snapshot
        # (13 s for two words in one collection of 100,000): CROSS JOIN keeps the words'
        # postings first. It ranks in that order by itself (and 1 ms sooner at the median).
        join = "CROSS JOIN" if counting else "JOIN"
        source = f"snapshot_fts {join} snapshots s ON s.id = snapshot_fts.rowid"
        score = "bm25(snapshot_fts, {}, {}, {}, {})".format(*WEIGHTS)
    clause = " WHERE " + " AND ".join(where)
    if counting:
        return f"SELECT count(*) FROM {source}{clause}"  # noqa: S608
    # Rank the matches (cheap), then read the page of hits' indexed text by rowid (no
    # second MATCH: with a prefix, FTS5 would merge its postings again for every hit);
    # :func:`_snippet` cuts the snippets from it in Python.
    cols = _COLUMNS.format(snippet="coalesce(f.body, '')", score="top.score", own=_OWN)
    top = (
        f"top AS (SELECT s.id AS id, {score} AS score, s.captured_at AS at "  # noqa: S608
        f"FROM {source}{clause} ORDER BY score, at DESC, id DESC LIMIT :limit OFFSET :offset)"
    )
    return (
        f"WITH {top} SELECT {cols} FROM top "  # noqa: S608
        "JOIN snapshots s ON s.id = top.id JOIN collections c ON c.id = s.collection_id "
        "LEFT JOIN snapshot_fts f ON f.rowid = top.id "
        "ORDER BY top.score, top.at DESC, top.id DESC"
    )


def _snippet(body: str, title: str | None, url: str, own: str, fts: str | None) -> str:
    """The snippet of a hit: around the first match in its text, else its title, address,
    or tags and notes (:func:`archiver_app.search.quick.snippet`, the one snippet builder)."""
    if fts is None:  # no text searched: the snippet stored at capture time
        return " ".join(body.split())
    terms = quick.terms_of(fts)
    for text_ in (body, title or "", url, own):
        found = quick.snippet(text_, terms, (MARK_START, MARK_END))
        if MARK_START in found:
            return found
    return quick.snippet(body, terms, (MARK_START, MARK_END))


def search(
    library: Library,
    query: Query,
    limit: int = 50,
    offset: int = 0,
    *,
    cancel: CancelToken | None = None,
) -> list[Hit]:
    """One page of hits for ``query``, best first (newest first without text).

    Args:
        cancel: checked while the database works; a front end searching as the user types
            cancels the previous keystroke's search instead of waiting for it.

    Raises:
        Cancelled: ``cancel`` was set before the query finished.
        InputError: the text holds no word to search for, or too many (:func:`parse`).
    """
    params: dict[str, Any] = {"limit": limit, "offset": offset}
    parsed = parse(query)
    fts = parsed.match
    plan = quick.plan_for(fts) if fts is not None else None
    with library.engine.connect() as conn, _watch(conn, cancel):
        try:
            if plan is not None:
                hits = _quick_search(
                    conn,
                    query,
                    plan=plan,
                    plan_fts=str(fts),
                    limit=limit,
                    offset=offset,
                    cancel=cancel,
                )
                if hits is not None:
                    return hits
            rows = _run(conn, _sql(query, params, conn=conn), params, parsed.has_words)
        except DBAPIError as exc:
            if cancel is not None and cancel.cancelled:
                raise Cancelled from exc
            raise
    return _hits(rows, fts)


@contextmanager
def _watch(conn: Connection, cancel: CancelToken | None) -> Iterator[None]:
    """Stop ``conn``'s statements when ``cancel`` is set: SQLite's progress handler looks
    every :data:`CANCEL_CHECK_STEPS` steps; on PostgreSQL a thread looks every
    :data:`PG_CANCEL_POLL` seconds and asks the server to cancel. A token set by the time
    the statement returns raises :class:`Cancelled` too (its hits are no longer wanted)."""
    if cancel is None:
        yield
        return
    if cancel.cancelled:
        raise Cancelled
    raw: Any = conn.connection.driver_connection
    if conn.dialect.name == "sqlite":
        raw.set_progress_handler(lambda: 1 if cancel.cancelled else 0, CANCEL_CHECK_STEPS)
        try:
            yield
        finally:
            raw.set_progress_handler(None, 0)
    else:
        with pg_search.cancel_watcher(raw, cancel, PG_CANCEL_POLL):
            yield
    if cancel.cancelled:
        raise Cancelled


def _hits(rows: Any, fts: str | None) -> list[Hit]:
    """Hits from rows of :data:`_COLUMNS` (the snippet column holds the indexed body)."""
    return [
        Hit(
            snapshot_id=r[0],
            url=r[1],
            title=r[2],
            captured_at=_DT.process_result_value(r[3], None),  # type: ignore[arg-type]
            snippet=_snippet(r[4] or "", r[2], r[1], r[11] or "", fts),
            collection=r[5],
            domain=r[6],
            mime=r[7],
            status=r[8],
            fidelity=r[9],
            score=float(r[10]),
        )
        for r in rows
    ]


def _quick_search(
    conn: Connection,
    query: Query,
    *,
    plan: quick.Plan,
    plan_fts: str,
    limit: int,
    offset: int,
    cancel: CancelToken | None,
) -> list[Hit] | None:
    """One page of hits through :mod:`archiver_app.search.quick`, or None (ask FTS5)."""
    params: dict[str, Any] = {}
    pg = conn.dialect.name == "postgresql"
    # quick's statements call the full-text row f
    where = filter_clauses(query, params, domains_for(conn, query), fts="f" if pg else None)
    # On PostgreSQL the candidates come unscored: only the matches kept are scored, below,
    # in one statement.
    score = "0.0" if pg else "bm25(snapshot_fts, {}, {}, {}, {})".format(*WEIGHTS)
    found = quick.quick_hits(
        lambda sql, p: conn.execute(text(sql), p),
        plan,
        filters=where,
        params=params,
        score_sql=score,
        postgresql=pg,
        want=offset + limit,
        check=cancel.raise_if_cancelled if cancel is not None else lambda: None,
    )
    if found is None:
        return None
    if pg and plan.words and found:
        found, at = _pg_rescore(conn, plan, found)
    else:
        at = _captured_at(conn, found)
    page = _rank_order(found, at)[offset : offset + limit]
    if not page:
        return []
    marks = ",".join(str(int(f[0])) for f in page)
    cols = _COLUMNS.format(snippet="coalesce(f.body, '')", score="0.0", own=_OWN)
    rows = {
        int(r[0]): r
        for r in conn.execute(
            text(
                f"SELECT {cols} FROM snapshots s JOIN collections c ON c.id = s.collection_id "  # noqa: S608
                f"LEFT JOIN snapshot_fts f ON f.rowid = s.id WHERE s.id IN ({marks})"
            )
        )
    }
    ranked = [(*rows[sid][:10], rank, rows[sid][11]) for sid, rank in page if sid in rows]
    return _hits(ranked, plan_fts)


def _pg_rescore(
    conn: Connection, plan: quick.Plan, found: list[tuple[int, float]]
) -> tuple[list[tuple[int, float]], dict[int, datetime | None]]:
    """``found`` scored by the whole words (in the same order; :func:`_rank_order` sorts),
    and when each was captured (one statement)."""
    params: dict[str, Any] = {}
    score = pg_search.score_sql(conn, plan.words_match, "f.doc", params, WEIGHTS)
    marks = ",".join(str(int(f[0])) for f in found)
    sql = (
        f"SELECT f.rowid, {score}, s.captured_at FROM snapshot_fts f "  # noqa: S608
        f"JOIN snapshots s ON s.id = f.rowid WHERE f.rowid IN ({marks})"
    )
    rows = conn.execute(text(sql), params).all()
    scores = {int(r[0]): float(r[1]) for r in rows}
    at = {int(r[0]): _DT.process_result_value(r[2], conn.dialect) for r in rows}
    return [(sid, scores.get(sid, 0.0)) for sid, _ in found], at


def _captured_at(conn: Connection, found: list[tuple[int, float]]) -> dict[int, datetime | None]:
    """When each of ``found`` was captured (for :func:`_rank_order`; none for one)."""
    if len(found) < 2:
        return {}
    marks = ",".join(str(int(f[0])) for f in found)
    sql = f"SELECT id, captured_at FROM snapshots WHERE id IN ({marks})"  # noqa: S608
    rows = conn.execute(text(sql))
    return {int(r[0]): _DT.process_result_value(r[1], conn.dialect) for r in rows}


def _rank_order(
    found: list[tuple[int, float]], at: dict[int, datetime | None]
) -> list[tuple[int, float]]:
    """``found`` in the ranked query's order (``ORDER BY score, captured_at DESC, id
    DESC``): best first, then the newest capture (``at``), then the snapshot saved last,
    so equal scores come out the same on both engines and on both paths."""
    oldest = datetime.min.replace(tzinfo=UTC)
    # Stable sorts, least significant key first.
    ordered = sorted(found, key=lambda f: f[0], reverse=True)
    ordered.sort(key=lambda f: at.get(f[0]) or oldest, reverse=True)
    ordered.sort(key=lambda f: f[1])
    return ordered


def matching_ids(library: Library, query: Query) -> list[int]:
    """Every matching snapshot id, oldest capture first (exports of a search result)."""
    params: dict[str, Any] = {}
    words = parse(query).has_words
    with library.engine.connect() as conn:
        inner = _sql(query, params, counting=True, conn=conn)
        inner = inner.replace("count(*)", "s.id, s.captured_at", 1)
        sql = f"SELECT id FROM ({inner}) AS m ORDER BY captured_at, id"  # noqa: S608
        return [int(r[0]) for r in _run(conn, sql, params, words)]


def count(library: Library, query: Query) -> int:
    """How many snapshots match ``query`` (for "N results")."""
    params: dict[str, Any] = {}
    words = parse(query).has_words
    with library.engine.connect() as conn:
        sql = _sql(query, params, counting=True, conn=conn)
        return int(_run(conn, sql, params, words)[0][0] or 0)


def _run(conn: Connection, sql: str, params: dict[str, Any], words: bool) -> list[Any]:
    """The rows of ``sql``; on PostgreSQL, a statement with words (wanted or excluded)
    finds them through the index (:func:`archiver_app.search.pg.words_by_index`)."""
    if not words or conn.dialect.name != "postgresql":
        return list(conn.execute(text(sql), params))
    with pg_search.words_by_index(lambda statement, values: conn.execute(text(statement), values)):
        return list(conn.execute(text(sql), params))
