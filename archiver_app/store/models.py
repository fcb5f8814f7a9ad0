"""SQLAlchemy 2.0 models for the whole data model (DESIGN section 3).

The database is the source of truth for state: jobs, the page queue, copies on drives and
migration progress all live here so that any process can die and the next one resumes.
Queries stay portable to PostgreSQL; SQLite-only features (FTS5) are created by migrations
for that dialect alone.

Enumerations are stored as short strings (readable with the ``sqlite3`` shell, portable,
and extendable without a schema change); the allowed values are the ``StrEnum`` classes.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    event,
    func,
    text,
)
from sqlalchemy.engine import Connection
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from archiver_app.store.snapshot_ids import reserve_snapshot_ids
from archiver_app.store.types import UTCDateTime, utcnow

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def referring(column: str) -> dict[str, Any]:
    """An index of a column that refers to another row, on the rows that refer (not
    NULL): what deleting the row referred to looks up, without an entry per NULL."""
    where = text(f"{column} IS NOT NULL")
    return {"sqlite_where": where, "postgresql_where": where}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime(), dict[str, Any]: JSON}


# --------------------------------------------------------------------------- enumerations


class SnapshotState(StrEnum):
    PENDING = "pending"  # row exists, capture not finished
    COMPLETE = "complete"
    FAILED = "failed"


class Fidelity(StrEnum):
    HIGH = "high"  # the page loaded fully
    FALLBACK = "fallback"  # timed out or parts failed; provenance says why
    IMPORTED = "imported"  # came from another tool's files


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    RETRYABLE = "retryable"
    NEEDS_LOGIN = "needs_login"  # nothing captured: its pages met a login form; not retried
    INDEXING = "indexing"
    INDEXED = "indexed"
    INDEX_FAILED = "index_failed"
    ABORTED = "aborted"
    CANCELLING = "cancelling"  # cancel asked; the running process stops at its next check


#: ``jobs.kind`` values the crawl worker runs (pages with their own leases and attempts);
#: every other kind is run by :mod:`archiver_app.jobs`.
CRAWL_KIND_NAMES = ("crawl", "capture")


class PageState(StrEnum):
    READY = "ready"
    CLAIMED = "claimed"
    SKIPPED = "skipped"
    DONE = "done"
    FAILED = "failed"


class FileKind(StrEnum):
    WARC = "warc"
    SCREENSHOT = "screenshot"
    DOM = "dom"
    TEXT = "text"
    SIDECAR = "sidecar"
    PDF = "pdf"
    OTHER = "other"


class LocalState(StrEnum):
    PRESENT = "present"
    OFFLOADED = "offloaded"  # verified copies exist on drives; the laptop copy was freed
    MISSING = "missing"
    CORRUPTED = "corrupted"


class CopyState(StrEnum):
    MISSING = "missing"
    ONGOING = "ongoing"
    PRESENT = "present"
    CORRUPTED = "corrupted"


# --------------------------------------------------------------------------- library


class Setting(Base):
    """Library-wide key/value settings (default retention policy, migrator cursor...)."""

    __tablename__ = "settings"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[Any] = mapped_column(JSON)


class Collection(Base):
    """A topic or project; snapshots belong to exactly one."""

    __tablename__ = "collections"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(100), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    base_url: Mapped[str | None] = mapped_column(Text)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    # Retention policy; None means "use the library default" (settings row).
    policy_copies: Mapped[int | None] = mapped_column(Integer)
    #: labels; or "any" (mirror.policy.ANY_DESTINATION): any of its own accord; None: the
    #: library default's (SQL NULL, not JSON null: "has it its own?" is ``IS NOT NULL``)
    policy_destinations: Mapped[list[str] | str | None] = mapped_column(JSON(none_as_null=True))
    policy_max_age_seconds: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    snapshots: Mapped[list[Snapshot]] = relationship(back_populates="collection")


class Snapshot(Base):
    """One capture of one page (or one imported page)."""

    __tablename__ = "snapshots"
    __table_args__ = (
        Index(None, "captured_at"),
        Index(None, "collection_id", "captured_at"),
        Index(None, "url_key", "captured_at"),
        Index(None, "url_group", "captured_at"),
        Index(None, "domain", "captured_at"),
        Index(None, "fs_version", "id"),
        Index(None, "state", "captured_at"),
        Index(None, "job_id"),
        Index(None, "content_hash"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    uid: Mapped[str] = mapped_column(String(40), unique=True)  # folder name, sidecar id
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id"))
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    url: Mapped[str] = mapped_column(Text)
    url_key: Mapped[str] = mapped_column(Text)  # SURT form of url
    url_group: Mapped[str] = mapped_column(Text)  # timeline group (SURT, no fragment)
    domain: Mapped[str] = mapped_column(String(255), default="")
    captured_at: Mapped[datetime]
    state: Mapped[str] = mapped_column(String(16), default=SnapshotState.PENDING)
    http_status: Mapped[int | None] = mapped_column(Integer)
    mime: Mapped[str | None] = mapped_column(String(255))
    title: Mapped[str | None] = mapped_column(Text)
    snippet: Mapped[str | None] = mapped_column(Text)
    language: Mapped[str | None] = mapped_column(String(35))
    capture_backend: Mapped[str | None] = mapped_column(String(32))
    capture_fidelity: Mapped[str | None] = mapped_column(String(16))
    provenance: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    folder: Mapped[str | None] = mapped_column(Text)  # relative to the library root
    warc_file: Mapped[str | None] = mapped_column(Text)  # main response, relative path
    warc_offset: Mapped[int | None] = mapped_column(BigInteger)
    warc_length: Mapped[int | None] = mapped_column(BigInteger)
    content_hash: Mapped[str | None] = mapped_column(String(80))  # the main WARC-Payload-Digest
    size_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    fs_version: Mapped[str] = mapped_column(String(32))
    notes: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    profile: Mapped[str | None] = mapped_column(String(64))  # browser profile, if any

    collection: Mapped[Collection] = relationship(back_populates="snapshots")
    tags: Mapped[list[Tag]] = relationship(secondary="snapshot_tags", back_populates="snapshots")


@event.listens_for(Snapshot, "before_insert")
def _new_snapshot_id(_mapper: Any, connection: Connection, target: Snapshot) -> None:
    """On SQLite a new snapshot's id is one never given before (``store/snapshot_ids.py``);
    PostgreSQL's sequence already never gives one twice."""
    given = cast("int | None", target.id)  # None until inserted, unless set by hand
    if given is None and connection.dialect.name == "sqlite":
        target.id = reserve_snapshot_ids(connection, 1)[0]


class Record(Base):
    """One WARC record: the replay index (CDXJ fields plus where it lives)."""

    __tablename__ = "records"
    __table_args__ = (
        Index(None, "url_key", "ts"),
        Index(None, "digest"),
        Index(None, "snapshot_id"),
        Index(None, "file_id", "offset"),
        # of the rows that refer (a revisit's): NULLs cost the inserts of an import nothing;
        # store/indexes.py: older libraries get it later
        Index(None, "revisit_of_id", **referring("revisit_of_id")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    url_key: Mapped[str] = mapped_column(Text)
    ts: Mapped[str] = mapped_column(String(17))  # YYYYMMDDhhmmssfff, UTC, zero padded
    url: Mapped[str] = mapped_column(Text)
    record_type: Mapped[str] = mapped_column(String(16))  # response, revisit, resource...
    status: Mapped[int | None] = mapped_column(Integer)
    mime: Mapped[str | None] = mapped_column(String(255))
    digest: Mapped[str | None] = mapped_column(String(80))  # WARC-Payload-Digest as written
    file_id: Mapped[int] = mapped_column(ForeignKey("files.id"))
    offset: Mapped[int] = mapped_column(BigInteger)
    length: Mapped[int] = mapped_column(BigInteger)
    snapshot_id: Mapped[int | None] = mapped_column(ForeignKey("snapshots.id", ondelete="SET NULL"))
    revisit_of_id: Mapped[int | None] = mapped_column(ForeignKey("records.id"))


class Tag(Base):
    __tablename__ = "tags"
    # one tag whatever its case, even when two processes create it at once (migration 0013)
    __table_args__ = (Index("uq_tags_name_folded", func.lower(text("name")), unique=True),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)

    snapshots: Mapped[list[Snapshot]] = relationship(
        secondary="snapshot_tags", back_populates="tags"
    )


class SnapshotTag(Base):
    __tablename__ = "snapshot_tags"
    __table_args__ = (Index(None, "tag_id", "snapshot_id"),)

    snapshot_id: Mapped[int] = mapped_column(
        ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True
    )
    tag_id: Mapped[int] = mapped_column(ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True)


# --------------------------------------------------------------------------- crawling


class Job(Base):
    """One long operation of the job runtime (``kind``), with its state in the database.

    A crawl or capture (kinds ``crawl``/``capture``) has seeds, scope, limits, a versioned
    ruleset and live counters, and its pages carry their own leases. Every other kind
    (import, export, mirror ...) keeps its arguments in ``config``, its progress in
    ``progress_*``, its outcome in ``result``, and the process running it holds a lease
    on the row (``lease_owner`` until ``lease_expires_at``, renewed at each heartbeat).
    """

    __tablename__ = "jobs"
    __table_args__ = (Index(None, "status", "priority", "id"), Index(None, "kind", "status"))

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id"))
    kind: Mapped[str] = mapped_column(String(16), default="crawl", server_default="crawl")
    name: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(16), default=JobStatus.QUEUED)
    priority: Mapped[int] = mapped_column(Integer, default=0)  # niceness: lower runs first
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # crawl: seeds, scope
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # runtime kinds: the outcome
    progress_done: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    progress_total: Mapped[int | None] = mapped_column(BigInteger)
    progress_message: Mapped[str | None] = mapped_column(Text)
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_expires_at: Mapped[datetime | None]
    heartbeat_at: Mapped[datetime | None]
    ruleset_version: Mapped[int] = mapped_column(Integer, default=1)
    settings_age: Mapped[int] = mapped_column(Integer, default=0)
    items_queued: Mapped[int] = mapped_column(Integer, default=0)
    items_downloaded: Mapped[int] = mapped_column(Integer, default=0)
    bytes_downloaded: Mapped[int] = mapped_column(BigInteger, default=0)
    r1xx: Mapped[int] = mapped_column(Integer, default=0)
    r2xx: Mapped[int] = mapped_column(Integer, default=0)
    r3xx: Mapped[int] = mapped_column(Integer, default=0)
    r4xx: Mapped[int] = mapped_column(Integer, default=0)
    r5xx: Mapped[int] = mapped_column(Integer, default=0)
    runk: Mapped[int] = mapped_column(Integer, default=0)
    error_count: Mapped[int] = mapped_column(Integer, default=0)
    concurrency: Mapped[int] = mapped_column(Integer, default=0)  # pages in flight now
    retry_count: Mapped[int] = mapped_column(Integer, default=0)
    max_retries: Mapped[int] = mapped_column(Integer, default=2)
    schedule: Mapped[str | None] = mapped_column(String(32))  # "daily", "weekly", None
    next_run_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    coverage_json: Mapped[str | None] = mapped_column(Text)  # relative paths
    coverage_md: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class Ruleset(Base):
    """One version of a job's rules; older versions are kept for the record."""

    __tablename__ = "rulesets"
    __table_args__ = (UniqueConstraint("job_id", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    rules: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Page(Base):
    """One URL in a job's crawl queue."""

    __tablename__ = "pages"
    __table_args__ = (
        UniqueConstraint("job_id", "url"),
        Index(None, "job_id", "state", "priority", "id"),
        Index(None, "state", "lease_expires_at"),
        Index(None, "snapshot_id", **referring("snapshot_id")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    url: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16), default=PageState.READY)
    depth: Mapped[int] = mapped_column(Integer, default=0)
    priority: Mapped[int] = mapped_column(Integer, default=0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    attempts_remaining: Mapped[int] = mapped_column(Integer, default=3)
    claimed_by: Mapped[str | None] = mapped_column(String(64))
    lease_expires_at: Mapped[datetime | None]
    ruleset_version: Mapped[int | None] = mapped_column(Integer)
    skip_reason: Mapped[str | None] = mapped_column(Text)
    last_error: Mapped[str | None] = mapped_column(Text)
    snapshot_id: Mapped[int | None] = mapped_column(ForeignKey("snapshots.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class Relation(Base):
    """Page ``parent`` linked to page ``child`` (discovery graph)."""

    __tablename__ = "relations"
    __table_args__ = (
        UniqueConstraint("parent_page_id", "child_page_id"),
        Index(None, "child_page_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    parent_page_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"))
    child_page_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"))


class PageAttempt(Base):
    """One attempt at one page: who claimed it, under which rules, and how it ended.

    ``outcome`` is None while the attempt runs, then ``done``, ``failed``, ``login`` (failed
    on a login form), ``skipped``, ``lost`` (the lease expired: the worker died or
    stalled), or, not counted against the page's attempts, ``cancelled`` (its worker was
    stopped) or ``unrecorded`` (the database went away before it could be recorded). A page
    captured twice because a worker died after writing but before recording has two rows
    here.
    """

    __tablename__ = "page_attempts"
    __table_args__ = (
        Index(None, "page_id", "attempt"),
        Index(None, "job_id", "id"),
        Index(None, "snapshot_id", **referring("snapshot_id")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    page_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"))
    attempt: Mapped[int] = mapped_column(Integer)
    worker_id: Mapped[str] = mapped_column(String(64))
    ruleset_version: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    outcome: Mapped[str | None] = mapped_column(String(16))
    http_status: Mapped[int | None] = mapped_column(Integer)
    final_url: Mapped[str | None] = mapped_column(Text)
    snapshot_id: Mapped[int | None] = mapped_column(ForeignKey("snapshots.id", ondelete="SET NULL"))
    bytes_written: Mapped[int] = mapped_column(BigInteger, default=0)
    error: Mapped[str | None] = mapped_column(Text)


class JobLog(Base):
    """Ordered log lines of a job (the id gives the order)."""

    __tablename__ = "job_log"
    __table_args__ = (Index(None, "job_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    at: Mapped[datetime] = mapped_column(default=utcnow)
    level: Mapped[str] = mapped_column(String(10), default="info")
    message: Mapped[str] = mapped_column(Text)


class Worker(Base):
    """A running (or recently dead) worker process and its heartbeat."""

    __tablename__ = "workers"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    pid: Mapped[int] = mapped_column(Integer)
    host: Mapped[str] = mapped_column(String(255))
    version: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(16), default="idle")
    current_job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    disk_free: Mapped[int | None] = mapped_column(BigInteger)
    memory_rss: Mapped[int | None] = mapped_column(BigInteger)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    heartbeat_at: Mapped[datetime] = mapped_column(default=utcnow)


# --------------------------------------------------------------------------- files and drives


class File(Base):
    """Every file of the archive (WARC, screenshot, DOM, text, sidecar ...)."""

    __tablename__ = "files"
    __table_args__ = (Index(None, "snapshot_id"), Index(None, "sha256"))

    id: Mapped[int] = mapped_column(primary_key=True)
    path: Mapped[str] = mapped_column(Text, unique=True)  # relative, '/' separated
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64))  # None until hashed
    kind: Mapped[str] = mapped_column(String(16), default=FileKind.OTHER)
    snapshot_id: Mapped[int | None] = mapped_column(ForeignKey("snapshots.id", ondelete="SET NULL"))
    local_state: Mapped[str] = mapped_column(String(16), default=LocalState.PRESENT)
    external_path: Mapped[str | None] = mapped_column(Text)  # absolute, for --link imports
    verified_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: The hash and size the file had when its capture or import wrote it (never updated
    #: by a later rewrite), and ``origin``: an :class:`Origin`, or None before the first verify.
    origin_sha256: Mapped[str | None] = mapped_column(String(64))
    origin_size: Mapped[int | None] = mapped_column(BigInteger)
    origin: Mapped[str | None] = mapped_column(String(8))


class Origin(StrEnum):
    """Who recorded a file's ``origin_sha256``."""

    CAPTURE = "capture"
    IMPORT = "import"
    LATER = "later"  # the first verify of a file older than capture-time digests


class Destination(Base):
    """An external drive or folder that holds copies (append-only)."""

    __tablename__ = "destinations"

    id: Mapped[int] = mapped_column(primary_key=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    label: Mapped[str] = mapped_column(String(200), unique=True)
    last_mount_path: Mapped[str | None] = mapped_column(Text)
    capacity_bytes: Mapped[int | None] = mapped_column(BigInteger)
    free_bytes: Mapped[int | None] = mapped_column(BigInteger)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    scrub_interval_days: Mapped[int] = mapped_column(Integer, default=30)
    last_seen_at: Mapped[datetime | None]
    last_scrub_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Copy(Base):
    """The state of one file on one destination."""

    __tablename__ = "copies"
    __table_args__ = (Index(None, "destination_id", "state"),)

    file_id: Mapped[int] = mapped_column(
        ForeignKey("files.id", ondelete="CASCADE"), primary_key=True
    )
    destination_id: Mapped[int] = mapped_column(
        ForeignKey("destinations.id", ondelete="CASCADE"), primary_key=True
    )
    state: Mapped[str] = mapped_column(String(16), default=CopyState.MISSING)
    mtime: Mapped[datetime | None]
    verified_at: Mapped[datetime | None]
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    #: Where the copy is on the destination (relative to its folder) when that is not the
    #: file's path: the file moved in the library (a layout migration, a merge) after it
    #: was copied, and the drive keeps it where it was written. None: at the file's path.
    path: Mapped[str | None] = mapped_column(Text)


class SnapshotChange(Base):
    """What changed in a capture against the previous complete capture of its address.

    Written when a capture is compared on arrival (watched pages); ``changed`` false marks
    an unchanged capture. The figures are those of :class:`archiver_app.compare.ChangeSummary`;
    a share is None when either capture kept no text (or no screenshot).
    """

    __tablename__ = "snapshot_changes"
    __table_args__ = (
        Index(None, "compared_at"),
        Index(None, "previous_id", **referring("previous_id")),
    )

    snapshot_id: Mapped[int] = mapped_column(
        ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True
    )
    previous_id: Mapped[int | None] = mapped_column(ForeignKey("snapshots.id", ondelete="SET NULL"))
    changed: Mapped[bool] = mapped_column(Boolean)
    text_share: Mapped[float | None] = mapped_column(Float)
    pixel_share: Mapped[float | None] = mapped_column(Float)
    resources_added: Mapped[int] = mapped_column(Integer, default=0)
    resources_removed: Mapped[int] = mapped_column(Integer, default=0)
    resources_changed: Mapped[int] = mapped_column(Integer, default=0)
    compared_at: Mapped[datetime] = mapped_column(default=utcnow)


# --------------------------------------------------------------------------- imports


class ImportSource(Base):
    """A legacy folder (e.g. an ArchiveBox data folder) registered for lazy import."""

    __tablename__ = "import_sources"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))  # "archivebox", "warc-folder" ...
    path: Mapped[str] = mapped_column(Text)
    mode: Mapped[str] = mapped_column(String(8), default="copy")  # copy | link
    state: Mapped[str] = mapped_column(String(16), default="registered")
    cursor: Mapped[str | None] = mapped_column(Text)
    stats: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    collection_id: Mapped[int | None] = mapped_column(ForeignKey("collections.id"))
    registered_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]


# The edition tables live with their package; importing them here puts them on ``Base``.
from archiver_app.editions import models as _edition_models  # noqa: E402, F401
