"""Search for the captures table: matching ids in the table's own order, a window at a time.

:func:`archiver_app.search.search` returns ranked pages of hits; the table instead needs
every matching id sorted by its column, streamed, and the first window at once. Both use
the same MATCH syntax (:func:`~archiver_app.search.query.build_fts_query`), the same
folding and word matching (:mod:`archiver_app.search.quick`) and the same snippet builder
(:func:`archiver_app.search.quick.snippet`).

Threading contract: stateless; the cursors and connections passed in belong to the caller
(the table's reader threads use their own).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection

from archiver_app.search import quick
from archiver_app.search.engine import MARK_END, MARK_START, marks_to_html
from archiver_app.search.query import build_fts_query

#: How long the quick look among the newest pages may take before the index answers.
QUICK_MAX_ROWS = 20_000
QUICK_MAX_SECONDS = 0.06


class TableSearch:
    """Full-text search over title, URL, page text and tags, for the streamed table."""

    def match_expression(self, user_text: str) -> str:
        """The MATCH expression ("" when the text holds no searchable word)."""
        return build_fts_query(user_text) or ""

    def id_subquery(self, user_text: str) -> tuple[str, dict[str, Any]]:
        """SQL selecting the matching snapshot ids, and its parameters."""
        expr = self.match_expression(user_text)
        if not expr:
            return "SELECT 0 WHERE 0", {}
        return "SELECT rowid FROM snapshot_fts WHERE snapshot_fts MATCH :fts", {"fts": expr}

    def newest_matches_sql(self, user_text: str, limit: int) -> tuple[str, dict[str, Any]]:
        """SQL for the ``limit`` most recently saved matches: streams straight from the
        index without collecting every match, so the first results show at once."""
        sub, params = self.id_subquery(user_text)
        return f"{sub} ORDER BY rowid DESC LIMIT {int(limit)}", params

    def newest_matches(self, cur: Any, user_text: str, limit: int) -> list[int]:
        """The ids of the ``limit`` most recently saved matches, newest first (DB-API cursor).

        A prefix that matches many words (``sit`` → site0 … site999) makes FTS5 merge every
        one of their postings lists before it can return the first row, a third of a second
        over a million pages. Those are exactly the prefixes with matches on nearly every
        page, so :meth:`quick_newest` first looks for them among the newest pages; the
        index answers when that does not find ``limit`` of them quickly.
        """
        found = self.quick_newest(cur, user_text, limit)
        if found is not None:
            return found
        sql, params = self.newest_matches_sql(user_text, limit)
        return [int(r[0]) for r in cur.execute(sql, params).fetchall()]

    def quick_newest(
        self,
        cur: Any,
        user_text: str,
        limit: int,
        *,
        max_rows: int = QUICK_MAX_ROWS,
        max_seconds: float = QUICK_MAX_SECONDS,
    ) -> list[int] | None:
        """``limit`` newest matches of a still-typed last word, or None (ask the index).

        Only for plain words where the MATCH expression is ``"w1" AND … "last"*``. The
        newest pages' titles and addresses (pages holding every whole word, straight off
        the index in rowid order; else the ``snapshots`` table, read backwards by primary
        key) are checked word by word (:func:`archiver_app.search.quick.has_word`) until
        ``limit`` are found, or ``max_rows``/``max_seconds`` run out. Page text and tags
        are not read (a page's text can be megabytes), so a match may be missing here but
        a non-match is never shown: callers ask for one row more than they show, so a full
        answer always means "there are more", and the complete result, loaded through the
        index next, replaces this window.
        """
        words = user_text.split()
        if not words or not all(quick.RUN.fullmatch(w) for w in words):
            return None
        quoted = ['"' + w + '"' for w in words]
        if self.match_expression(user_text) != " AND ".join(quoted) + "*":
            return None  # no prefix (whole words stream fast) or syntax this cannot mirror
        terms = [(quick.fold(w), True) for w in words[:-1]] + [(quick.fold(words[-1]), False)]
        if len(quoted) > 1:  # pages holding the whole words, newest first, streamed
            cur.execute(
                "SELECT rowid, title, url FROM snapshot_fts WHERE snapshot_fts MATCH :fts "
                "ORDER BY rowid DESC",
                {"fts": " AND ".join(quoted[:-1])},
            )
        else:
            cur.execute("SELECT id, title, url FROM snapshots ORDER BY id DESC")
        found: list[int] = []
        seen = 0
        # Never a complete answer: fewer than ``limit`` found returns None below.
        deadline = time.perf_counter() + max_seconds
        while seen < max_rows:
            rows = cur.fetchmany(256)
            for rowid, title, url in rows:
                if all(
                    quick.has_word(title, t, whole=w) or quick.has_word(url, t, whole=w)
                    for t, w in terms
                ):
                    found.append(int(rowid))
                    if len(found) >= limit:
                        return found
            seen += len(rows)
            if len(rows) < 256 or time.perf_counter() > deadline:
                break  # fewer than ``limit`` here: only the index can say which exist
            if seen >= 2048 and len(found) * max_rows < limit * seen:
                break  # too rare to find ``limit`` in time; a rare prefix is cheap to index
        return None

    def snippets(self, conn: Connection, ids: Sequence[int], user_text: str) -> dict[int, str]:
        """Highlighted snippets (``<b>…</b>`` around matches, HTML-escaped text) per id.

        Reads the stored text by rowid (cheap) and highlights in Python: asking FTS5 for
        ``snippet()`` means evaluating the whole MATCH again, seconds for a common prefix.
        """
        expr = self.match_expression(user_text)
        if not expr or not ids or conn.dialect.name != "sqlite":
            return {}
        terms = quick.terms_of(expr)
        marks = ",".join(str(int(i)) for i in ids)
        rows = conn.exec_driver_sql(
            f"SELECT rowid, title, url, body FROM snapshot_fts WHERE rowid IN ({marks})"  # noqa: S608 - ints
        ).all()
        out = {}
        for rowid, title, url, body in rows:
            for field_text in (body, title, url):
                found = quick.snippet(
                    str(field_text or ""), terms, (MARK_START, MARK_END), 20, lead_words=3
                )
                if MARK_START in found:
                    out[int(rowid)] = marks_to_html(found)
                    break
        return out
