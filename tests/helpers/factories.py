"""Fast ways to fill a library with rows for tests and benchmarks (raw SQL, no ORM)."""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime, timedelta

from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.library import Library

WORDS = [
    "archive",
    "web",
    "page",
    "research",
    "climate",
    "health",
    "policy",
    "history",
    "data",
    "report",
    "city",
    "river",
    "museum",
    "library",
    "science",
    "energy",
    "open",
    "public",
    "water",
    "school",
    "digital",
    "map",
]


def bulk_snapshots(
    library: Library, count: int, *, collection: str = "default", seed: int = 1, batch: int = 20_000
) -> None:
    """Insert ``count`` complete snapshot rows spread over five years, deterministically."""
    coll_id = library.ensure_collection(collection)
    rng = random.Random(seed)
    start = datetime(2021, 1, 1, tzinfo=UTC)
    conn = sqlite3.connect(library.db_path)
    try:
        conn.execute("PRAGMA synchronous = OFF")
        sql = (
            "INSERT INTO snapshots (uid, collection_id, url, url_key, url_group, domain,"
            " captured_at, state, http_status, mime, title, size_bytes, fs_version, notes,"
            " capture_backend, capture_fidelity, created_at, updated_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,'',?,?,?,?)"
        )
        rows = []
        for i in range(count):
            at = start + timedelta(seconds=rng.randrange(5 * 365 * 86400))
            host = f"site{rng.randrange(500)}.example"
            path = f"/{rng.choice(WORDS)}/{i}"
            stamp = at.strftime("%Y-%m-%d %H:%M:%S.%f")
            rows.append(
                (
                    f"{at:%Y%m%dT%H%M%SZ}-{i:08x}",
                    coll_id,
                    f"https://{host}{path}",
                    f"example,{host.split('.', maxsplit=1)[0]})/{path.lstrip('/')}",
                    f"example,{host.split('.', maxsplit=1)[0]})/{path.lstrip('/')}",
                    host,
                    stamp,
                    "complete",
                    200,
                    "text/html",
                    " ".join(rng.choice(WORDS) for _ in range(5)).title(),
                    rng.randrange(10_000, 5_000_000),
                    CURRENT_FS_VERSION,
                    "playwright",
                    "high",
                    stamp,
                    stamp,
                )
            )
            if len(rows) >= batch:
                conn.executemany(sql, rows)
                rows.clear()
        conn.executemany(sql, rows)
        conn.commit()
    finally:
        conn.close()
