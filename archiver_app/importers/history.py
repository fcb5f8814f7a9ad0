"""Browser history databases: Chrome/Chromium/Edge ``History`` and Firefox ``places.sqlite``.

Opened read-only and immutable (the browser may hold them open), so they are never
modified. Only http(s) URLs are taken, most recently visited first.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

SQLITE_MAGIC = b"SQLite format 3\x00"


class HistoryError(ValueError):
    """Not a browser history database we understand."""


def read_history(path: Path, *, limit: int | None = None) -> list[str]:
    uri = f"file:{quote(str(path.absolute()))}?mode=ro&immutable=1"
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise HistoryError(f"cannot open the database: {exc}") from exc
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "urls" in tables:  # Chrome family
            sql = "SELECT url FROM urls ORDER BY last_visit_time DESC"
        elif "moz_places" in tables:  # Firefox
            sql = "SELECT url FROM moz_places WHERE visit_count > 0 ORDER BY last_visit_date DESC"
        else:
            raise HistoryError("an SQLite file, but not a Chrome or Firefox history database")
        urls = [
            str(r[0])
            for r in conn.execute(sql)
            if isinstance(r[0], str) and r[0].lower().startswith(("http://", "https://"))
        ]
    except sqlite3.DatabaseError as exc:
        raise HistoryError(f"the database is damaged: {exc}") from exc
    finally:
        conn.close()
    return urls[:limit] if limit is not None else urls
