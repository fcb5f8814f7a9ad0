"""Full-text search over the library: FTS5 with bm25 ranking on SQLite, a ``tsvector`` with a
GIN index and bm25-like ranking on PostgreSQL; highlighted snippets, filters, the same
answers on both.

Front ends call :func:`archiver_app.search.engine.search` with a
:class:`archiver_app.search.query.Query`; it is cheap enough to run on every keystroke.
"""

from archiver_app.search.engine import count, matching_ids, search
from archiver_app.search.query import Query, build_fts_query

__all__ = ["Query", "build_fts_query", "count", "matching_ids", "search"]
