"""The bounded path for a short, still-typed last word (``river cli`` → ``"river" AND "cli"*``).

FTS5 answers a prefix by merging the postings of every indexed word that starts with it
before it can return a single row: for a three-letter prefix on a large library that is
most of the index (seconds on 100,000 pages), and no ``ORDER BY``/``LIMIT`` or rowid range
avoids it. A prefix index (``prefix='3'``) would, at about +50% full-text insert time for
every import. So while the last word is short, :func:`quick_hits` does not ask FTS5 for the
prefix at all:

1. candidates come newest first (rowid order, the order pages were saved), passing the
   filters and holding every whole word (an FTS5 ``MATCH`` on the whole words, streamed:
   no prefix to merge), or straight from ``snapshots`` when there are no whole words
   (on PostgreSQL, window by window of rowids through the GIN index:
   :func:`_pg_candidates`);
2. each candidate's indexed text (title, address, tags, body) is checked for a word that
   starts with the prefix, as the ``unicode61 remove_diacritics 2`` tokenizer would see it
   (case and accents folded, letters and digits make words; on PostgreSQL the page's
   ``tsvector`` is asked, which holds those words);
3. at most :data:`MAX_SCAN` candidates are read and at most :data:`WINDOW` matches kept;
   the matches are ranked by bm25 of the whole words (newest first between equals, and
   without whole words), and snippets are cut around the first matching word.

When the scan ends without a full page of hits although candidates remain (a rare
prefix), :func:`quick_hits` returns None and the caller runs the FTS5 query, which is
cheap exactly then: a rare prefix has few words to merge.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

from archiver_app.search.pg import INDEX_ONLY_SQL, restore_sql
from archiver_app.store.tsearch import WORD, fold, fts_to_tsquery

#: A still-typed last word this short or shorter takes this path.
SHORT_PREFIX = 4
#: Matches kept for ranking (the newest ones).
WINDOW = 200
#: Candidate pages read at most before handing over to FTS5.
MAX_SCAN = 3000
#: Rowids in the first window of candidates read on PostgreSQL (:func:`_pg_candidates`).
PG_WINDOW = 4096
#: Candidates a window of rowids is sized to bring (:func:`_pg_candidates`).
PG_WANTED = 512
#: Candidates read at most per statement (:func:`_pg_candidates`).
PG_BATCH = 1024
#: Characters of a page body checked (the index holds at most 1,000,000 per page).
BODY_CHARS = 1_000_000

RUN = WORD
#: Candidate pages, newest first: ``(rowid, score, holds the prefix?)``.
Candidates = Generator[tuple[int, float, bool], None, None]
_TERMS = re.compile(r'"((?:[^"]|"")*)"(\*?)')


@dataclass(frozen=True)
class Plan:
    """A MATCH expression this path can answer: whole words AND a short prefix."""

    words: tuple[str, ...]
    prefix: str

    @property
    def words_match(self) -> str:
        return " AND ".join('"' + w.replace('"', '""') + '"' for w in self.words)

    @property
    def terms(self) -> list[tuple[str, bool]]:
        """``(folded term, whole word?)`` for :func:`snippet`: the prefix, then the words."""
        return [(self.prefix, False)] + [(fold(w), True) for w in self.words]


def plan_for(fts: str) -> Plan | None:
    """The plan for ``fts`` (from ``build_fts_query``), or None when it is not of the form
    ``"w1" AND … "p"*`` with a prefix of at most SHORT_PREFIX characters."""
    terms = _TERMS.findall(fts)
    if not terms:
        return None
    rebuilt = " AND ".join(f'"{t}"{star}' for t, star in terms)
    if rebuilt != fts or any(star for _, star in terms[:-1]) or not terms[-1][1]:
        return None
    words = tuple(t.replace('""', '"') for t, _ in terms[:-1])
    prefix = terms[-1][0].replace('""', '"')
    folded = fold(prefix)
    if not folded or len(prefix) > SHORT_PREFIX or not all(_word_chars(w) for w in words):
        return None
    if not _word_chars(prefix):
        return None  # punctuation in the prefix: the tokenizer splits it, leave it to FTS5
    return Plan(words, folded)


def _word_chars(term: str) -> bool:
    return bool(term) and all(ch.isalnum() for ch in term)


def word_at(text: str, term: str, *, whole: bool = False) -> int:
    """Where a word starting with ``term`` (the whole word if ``whole``) begins in ``text``,
    or -1. A literal search with the boundary checked by hand: several times faster than a
    regular expression with a look-behind, which cannot skip ahead."""
    i = text.find(term)
    end = len(term)
    while i >= 0:
        if (i == 0 or not text[i - 1].isalnum()) and (
            not whole or i + end == len(text) or not text[i + end].isalnum()
        ):
            return i
        i = text.find(term, i + 1)
    return -1


def has_word(text: str | None, term: str) -> bool:
    """Does ``text`` hold a word starting with ``term``, as the tokenizer compares them?
    ``term`` is already folded (:func:`fold`)."""
    if not text:
        return False
    low = text.lower()
    if word_at(low, term) >= 0:
        return True
    return not low.isascii() and word_at(fold(low), term) >= 0


def quick_hits(
    execute: Callable[[str, dict[str, Any]], Any],
    plan: Plan,
    *,
    filters: list[str],
    params: dict[str, Any],
    score_sql: str,
    want: int,
    check: Callable[[], None] = lambda: None,
    postgresql: bool = False,
) -> list[tuple[int, float]] | None:
    """``(snapshot id, score)`` of the best WINDOW-or-fewer newest matches, best first,
    or None when FTS5 should answer (see the module docstring).

    Args:
        execute: runs SQL with named parameters, returns a result with ``fetchmany``.
        want: offset + limit (the hits the caller needs).
        check: called every hundred candidates (raises to cancel).
        score_sql: the score of a candidate (SQLite: bm25 of ``:quick_words``).
        postgresql: the words are matched as a ``tsquery`` on ``snapshot_fts.doc``, window
            by window (:func:`_pg_candidates`), unscored (the caller scores the matches).
    """
    where = " AND ".join(filters)
    if postgresql:
        rows: Candidates = _pg_candidates(execute, plan, where, params)
    else:
        rows = _sqlite_candidates(execute, plan, where, params, score_sql)
    found: list[tuple[int, float]] = []
    exhausted = True
    try:
        for scanned, (rowid, score, hit) in enumerate(rows, 1):
            if scanned % 100 == 1:
                check()
            if hit:
                found.append((rowid, score))
                if len(found) >= max(WINDOW, want):
                    exhausted = False
                    break
            if scanned >= MAX_SCAN:
                exhausted = False
                break
    finally:
        rows.close()
    if len(found) < want and not exhausted:
        return None
    # bm25 of the whole words, newest (largest id) first between equals.
    found.sort(key=lambda f: (f[1], -f[0]))
    return found


def _sqlite_candidates(
    execute: Callable[[str, dict[str, Any]], Any],
    plan: Plan,
    where: str,
    params: dict[str, Any],
    score_sql: str,
) -> Candidates:
    """Candidates ``(rowid, score, holds the prefix?)``, newest first: one query, read a
    hundred rows at a time (FTS5 walks its postings backwards, so it stops early), each
    page's indexed text checked for the prefix here."""
    if plan.words:
        sql = (
            f"SELECT snapshot_fts.rowid, {score_sql}, snapshot_fts.title, "  # noqa: S608
            "snapshot_fts.url, snapshot_fts.tags, snapshot_fts.body "
            "FROM snapshot_fts CROSS JOIN snapshots s ON s.id = snapshot_fts.rowid "
            "WHERE snapshot_fts MATCH :quick_words"
            + (f" AND {where}" if where else "")
            + " ORDER BY snapshot_fts.rowid DESC"
        )
        params = {**params, "quick_words": plan.words_match}
    else:
        sql = (
            "SELECT s.id, 0.0, f.title, f.url, f.tags, f.body "
            "FROM snapshots s CROSS JOIN snapshot_fts f ON f.rowid = s.id"
            + (f" WHERE {where}" if where else "")
            + " ORDER BY s.id DESC"
        )
    # CROSS JOIN tells SQLite's planner the join order.
    result = execute(sql, params)
    try:
        while rows := result.fetchmany(100):
            for rowid, score, title, url, tags, body in rows:
                fields = (title, url, tags, (body or "")[:BODY_CHARS])
                yield int(rowid), float(score), any(has_word(t, plan.prefix) for t in fields)
    finally:
        if hasattr(result, "close"):
            result.close()


def _pg_candidates(
    execute: Callable[[str, dict[str, Any]], Any], plan: Plan, where: str, params: dict[str, Any]
) -> Candidates:
    """The same candidates on PostgreSQL, window by window of rowids, newest window first.

    PostgreSQL's planner has no good plan for "the newest rows matching a ``tsquery``":
    a GIN index hands out its matches in no order, and a scan of the primary key backwards
    that tests ``doc @@ …`` on each row reads each page's ``tsvector`` from TOAST (about
    5 µs a row, and a plan it picks or drops as its estimates move). So each window of
    rowids is one statement, with bitmap scans only: the GIN index intersected with the
    window's range, joined to ``snapshots`` in the same range and filtered, the newest
    :data:`PG_BATCH` kept (a window that holds more is read on from below the last), and
    only those kept asked for the prefix: ``doc @@ 'pre':*``, the same folded words as the
    text (:mod:`archiver_app.store.tsearch`), one read of the ``tsvector`` instead of the
    text sent over to be searched here. (So a word past the ``tsvector``'s limits, which
    PostgreSQL's full query does not find either, is not found here.) A date range in
    ``where`` is asked of ``f.captured_at`` too (``engine.filter_clauses``): the GIN index
    and the date's B-tree are then intersected before any row is read.

    The first window holds :data:`PG_WINDOW` rowids (a sixteenth of that without words:
    every row is a candidate); each next one is sized to bring :data:`PG_WANTED`
    candidates at the rate seen so far (the rest of the table when none came yet), and is
    at least twice as wide: each window costs a pass over the words' postings."""
    # The newest rowid, and the planner switched to bitmap scans (pg.words_by_index, in
    # the same statement).
    newest_sql = f"SELECT max(rowid), {INDEX_ONLY_SQL} FROM snapshot_fts"  # noqa: S608
    top = execute(newest_sql, {}).fetchall()
    hi = int(top[0][0]) if top[0][0] is not None else 0
    params = {**params, "quick_prefix": fts_to_tsquery(f'"{plan.prefix}"*')}
    if plan.words:
        params["quick_words"] = fts_to_tsquery(plan.words_match)
        window = PG_WINDOW
        inner = (
            "SELECT f.rowid AS id, f.doc AS doc FROM snapshot_fts f "
            "JOIN snapshots s ON s.id = f.rowid WHERE f.doc @@ CAST(:quick_words AS tsquery) "
            "AND f.rowid > :quick_lo AND f.rowid <= :quick_hi "
            "AND s.id > :quick_lo AND s.id <= :quick_hi"
        )
    else:
        window = max(PG_WINDOW // 16, 1)
        inner = (
            "SELECT s.id AS id, f.doc AS doc FROM snapshots s "
            "JOIN snapshot_fts f ON f.rowid = s.id WHERE s.id > :quick_lo AND s.id <= :quick_hi"
        )
    inner += (f" AND {where}" if where else "") + " ORDER BY 1 DESC LIMIT :quick_batch"
    # The prefix is asked of the rows kept only (a condition on ``f.doc`` in the inner
    # statement would be tested on every match of the words, before the join filters).
    sql = f"SELECT t.id, t.doc @@ CAST(:quick_prefix AS tsquery) FROM ({inner}) t"  # noqa: S608
    try:
        seen, newest = 0, hi
        while hi > 0:
            lo = max(hi - window, 0)
            while True:
                bounds = {"quick_lo": lo, "quick_hi": hi, "quick_batch": PG_BATCH}
                rows = sorted(execute(sql, {**params, **bounds}).fetchall(), reverse=True)
                yield from ((int(rowid), 0.0, bool(hit)) for rowid, hit in rows)
                seen += len(rows)
                if len(rows) < PG_BATCH:
                    break
                hi = int(rows[-1][0]) - 1  # more in this window: read on below the last
            rate = seen / max(newest - lo, 1)
            wider = PG_WANTED / rate if rate > 0 else float(lo)
            hi, window = lo, int(max(2 * window, min(wider, lo)))
    except GeneratorExit:  # the caller has its candidates
        execute(*restore_sql(top[0][1:]))
        raise
    # Not after an error, as pg.words_by_index: the rollback restores the planner.
    execute(*restore_sql(top[0][1:]))


def snippet(
    body: str,
    terms: Sequence[tuple[str, bool]],
    mark: tuple[str, str],
    tokens: int = 24,
    *,
    lead_words: int = 6,
) -> str:
    """About ``tokens`` words of ``body`` around the first matching word, matches marked.

    The one snippet builder for search-as-you-type and the captures table. ``terms`` are
    ``(folded term, whole word?)`` (:attr:`Plan.terms`, :func:`terms_of`); at most
    ``lead_words`` words come before the first match (a narrow column wants few). Words are
    compared as the index compares them: a word inside an address (``tides`` in
    ``https://tides.example/``) is one, and a page with characters that fold to more than
    one (``…``, ``ﬁ``, ``™``) is searched all the same."""
    head = body[:BODY_CHARS]
    low = head.lower()
    if not low.isascii():
        low = fold(low)
    hits = [i for t, whole in terms if (i := word_at(low, t, whole=whole)) >= 0]
    at = min(hits) if hits else 0
    if len(low) != len(head):  # folding changed the length: find the place in the page
        at = _unfolded_at(head, at)
    # the whole space-separated token the match is in (a word of an address)
    near = max(0, at - 200)  # (a longer token is cut: the look back stays short)
    space = max(head.rfind(" ", near, at), head.rfind("\n", near, at))
    at = space + 1 if space >= 0 else 0 if near == 0 else at
    before = body[max(0, at - 120) : at].split()[-lead_words:] if lead_words else []
    after = body[at : at + 600].split()
    words = (before + after)[:tokens]
    cut_start = at > 120 or len(body[:at].split()) > len(before)
    cut_end = len(body) > at + 600 or len(before) + len(after) > tokens
    text = " ".join(_marked(w, terms, mark) for w in words)
    return ("…" if cut_start else "") + text + ("…" if cut_end else "")


def _unfolded_at(text: str, folded_at: int, chunk: int = 4096) -> int:
    """The place in ``text`` of what is at ``folded_at`` in ``fold(text)`` (folding one
    character may give several, or none): counted a chunk at a time, so linear."""
    done = 0
    for start in range(0, len(text), chunk):
        part = text[start : start + chunk]
        size = len(fold(part))
        if done + size <= folded_at:
            done += size
            continue
        for k, ch in enumerate(part):
            done += len(fold(ch))
            if done > folded_at:
                return start + k
    return len(text)


def _marked(token: str, terms: Sequence[tuple[str, bool]], mark: tuple[str, str]) -> str:
    """``token`` with each of its words that a term matches between ``mark``."""
    low = fold(token)
    if not any(t in low for t, _ in terms):
        return token
    starts = None  # where each character's folding starts, when folding changed lengths
    if len(low) != len(token):
        starts, done = [], 0
        for ch in token:
            starts.append(done)
            done += len(fold(ch))
    out, pos = [], 0
    for run in RUN.finditer(low):
        word = run.group()
        if not any(word.startswith(t) and (not whole or len(word) == len(t)) for t, whole in terms):
            continue
        begin, end = run.span()
        if starts is not None:
            begin, end = bisect.bisect_right(starts, begin) - 1, bisect.bisect_left(starts, end)
            while end < len(token) and not fold(token[end]):
                end += 1  # a combining accent after the word's last letter is the word's
        out += [token[pos:begin], mark[0], token[begin:end], mark[1]]
        pos = end
    return "".join(out) + token[pos:]


def terms_of(fts: str) -> list[tuple[str, bool]]:
    """The terms of a MATCH expression from ``build_fts_query`` as :func:`snippet` wants
    them: each word folded, a ``*`` term as a prefix (a phrase's words each count)."""
    out: list[tuple[str, bool]] = []
    for term, star in _TERMS.findall(fts):
        words = RUN.findall(fold(term.replace('""', '"')))
        out.extend((w, not (star and i == len(words) - 1)) for i, w in enumerate(words))
    return out


__all__ = [
    "MAX_SCAN",
    "SHORT_PREFIX",
    "WINDOW",
    "Plan",
    "fold",
    "has_word",
    "plan_for",
    "quick_hits",
    "snippet",
    "terms_of",
]
