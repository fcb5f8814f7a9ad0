"""Moving a library's database between SQLite and PostgreSQL (``archiver library convert``).

The folder stays where it is; only the database moves. The rows are copied, verified and
checkpointed by :mod:`archiver_app.store.convert`; then the library is switched over:
``library.json`` names the new database (or none, for the folder's own ``library.db``),
and on PostgreSQL the folder and the database get a new share token
(:mod:`archiver_app.library_share`). The old database is kept: after a move to PostgreSQL
``library.db`` is renamed ``library.db.before-postgresql-<time>``; after a move back the
PostgreSQL database is left for its administrator to drop, and the folder's token file is
removed, so that the old database can no longer open this folder.

A copy that stops (crash, Ctrl-C, a lost connection) continues where it stopped when the
same command runs again; until the switch the library keeps using its old database. When
the library changed meanwhile in a way a resumed copy cannot follow, the error names the
command that starts the copy over (``--start-over``: the unfinished copy is dropped).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from archiver_app import durable
from archiver_app.errors import InputError, LibraryError
from archiver_app.library import DB_NAME, Library, public_url, record_database
from archiver_app.library_share import TOKEN_NAME, bind_folder
from archiver_app.store import convert
from archiver_app.store.engine import make_engine, sqlite_url
from archiver_app.tasks import CancelToken, Progress
from archiver_app.tasks.progress import null_progress


@dataclass(frozen=True)
class ConvertResult:
    database: str  # the library's database now (no password)
    resumed: bool
    copied_rows: int  # by this run
    tables: tuple[convert.TableCheck, ...]
    old_database: str  # what was left behind, for the user to keep or drop


def convert_library(
    root: Path,
    to: str,
    *,
    database_url: str | None = None,
    batch: int = convert.BATCH_ROWS,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    start_over: bool = False,
) -> ConvertResult:
    """Copy the database of the library at ``root`` to ``to`` (``sqlite`` or a PostgreSQL
    URL), verify it row by row and switch the library to it. ``start_over``: drop an
    unfinished copy of this library in the target first.

    Raises:
        InputError: ``to`` is not a database this can convert to.
        LibraryError: a worker is running, the target is not empty, or the copy differs
            (the library keeps its old database).
        Cancelled: stopped; run again to continue.
    """
    from archiver_app.crawl.gone_workers import live_workers

    with Library.open(root, create=False, database_url=database_url) as lib:
        meta, source_url = lib.meta, lib.engine.url
        live = live_workers(lib)
    if live:
        names = ", ".join(f"pid {w.pid} on {w.host}" for w in live[:3])
        raise LibraryError(f"capture workers are using this library ({names}); stop them first")
    to_sqlite = to == "sqlite"
    if not to_sqlite and not to.startswith(("postgresql://", "postgresql+psycopg://")):
        raise InputError(f"convert --to takes sqlite or a postgresql:// URL, not {to!r}")
    target_url = sqlite_url(root / DB_NAME) if to_sqlite else to
    if to.startswith("postgresql://"):
        target_url = "postgresql+psycopg://" + to.removeprefix("postgresql://")
    if (source_url.get_backend_name() == "sqlite") == to_sqlite:
        raise InputError(
            f"the library's database is already on {'SQLite' if to_sqlite else 'PostgreSQL'}"
        )
    source = make_engine(source_url.render_as_string(hide_password=False))
    target = make_engine(target_url)
    try:
        unknown = convert.unknown_tables(source)
        if unknown:
            raise LibraryError(
                f"the database holds tables this version does not know ({', '.join(unknown)}); "
                "nothing was copied"
            )
        if start_over:
            convert.empty_target(target, meta.library_id)
        resumed = convert.prepare_target(source, target, meta.library_id)
        try:
            copied = convert.copy_database(
                source, target, batch=batch, progress=progress, cancel=cancel
            )
            checks = convert.verify_copy(source, target, batch=batch)
        except convert.StaleCopyError as exc:
            # as typed, unless that shows a password
            shown = to if to_sqlite or target.url.password is None else public_url(target.url)
            raise LibraryError(
                f"{exc.message}. Start the copy over (the unfinished copy is dropped): "
                f"archiver library convert --to {shown} --start-over",
                details=exc.details,
            ) from exc
        convert.finish_copy(source, target)
        if not to_sqlite:
            bind_folder(target, root, library_id=meta.library_id, new_folder=False)
    finally:
        source.dispose()
        target.dispose()
    record_database(root, meta, None if to_sqlite else target_url)
    old = public_url(source_url)
    if to_sqlite:
        # The folder is no longer the PostgreSQL library's: without the token, a process
        # pointed at the old database is refused instead of writing captures here.
        (root / TOKEN_NAME).unlink(missing_ok=True)
    else:
        old = str(_set_aside(root / DB_NAME))
    with Library.open(root, create=False) as lib:
        now = lib.info().database_url
    return ConvertResult(now, resumed, copied, tuple(checks), old)


def _set_aside(db: Path) -> Path:
    """Rename the SQLite database (and any sidecar files) out of the way, kept as a backup."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    kept = db.with_name(f"{db.name}.before-postgresql-{stamp}")
    for suffix in ("-wal", "-shm"):
        side = db.with_name(db.name + suffix)
        if side.exists():
            durable.install(side, kept.with_name(kept.name + suffix))
    durable.install(db, kept)
    return kept


__all__ = ["ConvertResult", "convert_library"]
