"""The Library facade: one folder, one database; every front end goes through it.

``Library.open(root)`` creates or opens a library. It runs only schema migrations and reads
two small files, so it takes the same time whatever the library holds: folder layout changes
are migrated lazily (``layout/``), never at open.

The database is the folder's ``library.db`` unless ``library.json`` names another
(``"database"``, a PostgreSQL URL without its password) or ``database_url`` is given. A
library whose database is elsewhere is shared: opening it proves the folder is the
library's (:mod:`archiver_app.library_share`), and an empty folder is never adopted.

Threading contract: a ``Library`` may be shared between threads; each thread takes its own
session from :meth:`Library.session` / :meth:`Library.write`.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import URL, Engine, func, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from archiver_app import __version__, library_use
from archiver_app import known_libraries as known
from archiver_app.durable import atomic_write_text
from archiver_app.errors import LibraryError, NewerLibraryError, library_busy
from archiver_app.ids import new_snapshot_uid
from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.library_share import (
    DB_NAME,
    TOKEN_NAME,
    FolderCheck,
    FolderCode,
    bind_folder,
    check_folder,
)
from archiver_app.outages import Outages
from archiver_app.store import schema
from archiver_app.store.connection_loss import not_connected
from archiver_app.store.engine import make_engine, make_sessionmakers, sqlite_url
from archiver_app.store.models import Collection, Setting, Snapshot
from archiver_app.store.types import utcnow

if TYPE_CHECKING:
    from archiver_app.api.drives import DrivesManager
    from archiver_app.api.editions import EditionsManager
    from archiver_app.api.exports import ExportsManager
    from archiver_app.api.imports import ImportsManager
    from archiver_app.api.integrity import IntegrityManager
    from archiver_app.api.jobs import JobsManager
    from archiver_app.api.labels import CollectionsManager, TagsManager
    from archiver_app.api.mirror import MirrorManager
    from archiver_app.api.profiles import ProfilesManager
    from archiver_app.api.settings import SettingsManager
    from archiver_app.api.snapshots import SnapshotsManager
    from archiver_app.api.table import TableReader

LIBRARY_FORMAT = "archiver-library"
LIBRARY_FORMAT_VERSION = 2  # bump only for changes older versions must not open
#: The format of a library whose database is not its own library.db: Archiver before
#: shared libraries would create an empty library.db beside it, so it must refuse it.
SHARED_FORMAT_VERSION = 2
META_NAME = "library.json"
DEFAULT_COLLECTION = "default"


@dataclass(frozen=True)
class LibraryMeta:
    """The contents of ``library.json``."""

    library_id: str
    created: str
    layout_version: str
    database_url: str | None = None  # None: library.db in the folder

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "format": LIBRARY_FORMAT,
            "format_version": SHARED_FORMAT_VERSION if self.database_url else 1,
            "library_id": self.library_id,
            "layout_version": self.layout_version,
            "created": self.created,
            "written_by": f"archiver {__version__}",
        }
        if self.database_url:
            doc["database"] = self.database_url
        return doc


@dataclass(frozen=True)
class LibraryInfo:
    root: Path
    library_id: str
    created: str
    layout_version: str
    schema_revision: str | None
    schema_head: str
    database_url: str
    snapshots: int
    collections: int
    by_state: dict[str, int] = field(default_factory=dict)  # snapshots by state


class Library:
    """An open library. Create with :meth:`open`; close with :meth:`close` or ``with``."""

    def __init__(
        self,
        root: Path,
        engine: Engine,
        meta: LibraryMeta,
        *,
        clock: Callable[[], datetime] = utcnow,
        new_uid: Callable[[datetime], str] = new_snapshot_uid,
        share_token: str | None = None,
        use: library_use.Use | None = None,
    ) -> None:
        self._use = use  # this process's registration as having it open
        self.root = root
        self.engine = engine
        self.meta = meta
        self.clock = clock
        self.new_uid = new_uid
        self.share_token = share_token
        self._read, self._write = make_sessionmakers(engine)
        #: Its schema was upgraded as it was opened (front ends say so), else None.
        self.upgraded: schema.SchemaUpgrade | None = None
        #: The library lost and found again, as loops that retry see it (said once each way).
        self.outages = Outages(self.check_folder)

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        root: str | os.PathLike[str],
        *,
        create: bool = True,
        database_url: str | None = None,
        clock: Callable[[], datetime] = utcnow,
        new_uid: Callable[[datetime], str] = new_snapshot_uid,
        start_over: bool = False,
        remember: bool = True,
    ) -> Library:
        """Open the library at ``root``, creating it if ``create`` and the folder is empty.

        A folder where this computer opened a library before is not made a new one, being
        empty or missing now (an unmounted drive or share), unless ``start_over``
        (``archiver init``): :mod:`archiver_app.known_libraries` (``remember``: record the
        place there). Open until :meth:`close` (:mod:`archiver_app.library_use`).

        Raises:
            LibraryError: the folder is unusable; nothing in it was modified.
            NewerLibraryError: a newer Archiver wrote this library; nothing was modified.
        """
        root = Path(root).expanduser().absolute()
        meta_path, db_path = root / META_NAME, root / DB_NAME
        shared = database_url is not None and not database_url.startswith("sqlite")
        # A shared library's folder may be empty or missing here (a share not mounted): the
        # database decides, below (it knows the folder's token), and says which it expected.
        is_new = check_library_folder(
            root, create=create or shared, start_over=start_over or shared
        )
        meta = None if is_new else _read_meta(meta_path)
        revision: str | None = None
        if database_url is None and meta is not None:
            database_url = meta.database_url
        if database_url is None:
            database_url = sqlite_url(db_path)
            if db_path.exists():
                revision = schema.read_sqlite_revision(db_path)
        status = schema.check_known(revision, str(root))  # refuses before any write

        made_folder = is_new and create and not root.exists()
        if is_new and create:
            try:
                root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise LibraryError(f"cannot create a library at {root}: {exc.strerror}") from exc
        use = library_use.hold_to_open(root)  # before any write: a move sees it, or it a move
        engine = make_engine(database_url)
        token: str | None = None
        upgraded: schema.SchemaUpgrade | None = None
        try:
            if engine.dialect.name != "sqlite":
                status = schema.check_known(schema.current_revision(engine), _public(engine))
            if status.needs_upgrade:
                upgraded = schema.upgrade_from(engine, db_path, status)
            if engine.dialect.name != "sqlite":
                token = bind_folder(
                    engine,
                    root,
                    library_id=meta.library_id if meta else None,
                    new_folder=is_new,
                    create=create,
                )
            meta = _ensure_meta(engine, meta_path, meta, clock)
        except BaseException as exc:
            said = _refused(engine, use, root if made_folder else None, exc)
            if said is not exc:
                raise said from exc
            raise
        if remember:
            known.remember_library(root, meta.library_id)
        lib = cls(root, engine, meta, clock=clock, new_uid=new_uid, share_token=token, use=use)
        lib.upgraded = upgraded
        return lib

    def close(self) -> None:
        self.engine.dispose()
        if self._use is not None:
            self._use.release()

    def check_folder(self) -> FolderCheck:
        """Is the library's folder still there (a shared folder's token still readable and
        the same)? Workers ask before each claim: a share that went away must not get
        captures written into an empty mount point."""
        if self.share_token is None:
            if self.root.is_dir():
                return FolderCheck(FolderCode.OK, f"{self.root} is the library's folder")
            return FolderCheck(FolderCode.UNREADABLE, f"the library folder {self.root} is gone")
        return check_folder(self.root, self.share_token)

    def require_folder(self) -> None:
        """Raise :class:`LibraryError` unless :meth:`check_folder` is fine: asked before a job
        is queued, so a folder that went away (or was given to another database) gets no
        job row that nothing can run."""
        check = self.check_folder()
        if not check.ok:  # one sentence or two: "... is gone. Nothing was changed."
            said = check.message if check.message.endswith((".", "?", "!")) else f"{check.message}."
            raise LibraryError(f"{said} Nothing was changed.")

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ sessions

    @property
    def db_path(self) -> Path:
        return self.root / DB_NAME

    @property
    def id(self) -> str:
        return self.meta.library_id

    @property
    def sessionmaker(self) -> sessionmaker[Session]:
        return self._read

    def session(self) -> Session:
        """A session for reading (and short writes that cannot race)."""
        return self._read()

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction (``BEGIN IMMEDIATE`` on SQLite), committed on success."""
        with self._write() as session, session.begin():
            yield session

    # ------------------------------------------------------------------ queries

    def info(self) -> LibraryInfo:
        with self.session() as s:
            by_state = {
                str(state): int(n)
                for state, n in s.execute(
                    select(Snapshot.state, func.count()).group_by(Snapshot.state)
                )
            }
            collections = s.scalar(select(func.count()).select_from(Collection)) or 0
        return LibraryInfo(
            root=self.root,
            library_id=self.meta.library_id,
            created=self.meta.created,
            layout_version=self.meta.layout_version,
            schema_revision=schema.current_revision(self.engine),
            schema_head=schema.head_revision(),
            database_url=self.engine.url.render_as_string(hide_password=True),
            snapshots=sum(by_state.values()),
            collections=collections,
            by_state=by_state,
        )

    def recent_snapshots(self, limit: int = 100, offset: int = 0) -> Sequence[Snapshot]:
        """Snapshots newest first (the first page of the library table)."""
        with self.session() as s:
            stmt = (
                select(Snapshot)
                .order_by(Snapshot.captured_at.desc(), Snapshot.id.desc())
                .limit(limit)
                .offset(offset)
            )
            return s.scalars(stmt).all()

    def ensure_collection(self, slug: str = DEFAULT_COLLECTION, name: str | None = None) -> int:
        """The id of collection ``slug``, created if missing (or the one another process
        created since this one looked: the insert is in a savepoint, and a clash reads
        the other's row)."""
        from archiver_app.validation import validate_slug

        slug = validate_slug(slug)
        find = select(Collection.id).where(Collection.slug == slug)
        with self.write() as s:
            existing = s.scalar(find)
            if existing is not None:
                return existing
            coll = Collection(slug=slug, name=name or slug.replace("-", " ").title())
            try:
                with s.begin_nested():
                    s.add(coll)
            except IntegrityError:
                existing = s.scalar(find)
                if existing is None:
                    raise
                return existing
            return coll.id

    def abspath(self, relative: str) -> Path:
        """Absolute path of a library-relative path, refusing anything that escapes root."""
        from archiver_app.validation import safe_join

        return safe_join(self.root, relative)

    # ------------------------------------------------------------------ application API
    # The managers front ends call (``archiver_app.api``), built on first use so that
    # opening a library stays cheap. They return frozen views, and ``Changes`` from edits.

    @cached_property
    def snapshots(self) -> SnapshotsManager:
        from archiver_app.api.snapshots import SnapshotsManager

        return SnapshotsManager(self)

    @cached_property
    def tags(self) -> TagsManager:
        from archiver_app.api.labels import TagsManager

        return TagsManager(self)

    @cached_property
    def collections(self) -> CollectionsManager:
        from archiver_app.api.labels import CollectionsManager

        return CollectionsManager(self)

    @cached_property
    def settings(self) -> SettingsManager:
        from archiver_app.api.settings import SettingsManager

        return SettingsManager(self)

    @cached_property
    def table(self) -> TableReader:
        from archiver_app.api.table import TableReader

        return TableReader(self)

    @cached_property
    def drives(self) -> DrivesManager:
        from archiver_app.api.drives import DrivesManager

        return DrivesManager(self)

    @cached_property
    def jobs(self) -> JobsManager:
        from archiver_app.api.jobs import JobsManager

        return JobsManager(self)

    @cached_property
    def imports(self) -> ImportsManager:
        from archiver_app.api.imports import ImportsManager

        return ImportsManager(self)

    @cached_property
    def exports(self) -> ExportsManager:
        from archiver_app.api.exports import ExportsManager

        return ExportsManager(self)

    @cached_property
    def mirror(self) -> MirrorManager:
        from archiver_app.api.mirror import MirrorManager

        return MirrorManager(self)

    @cached_property
    def profiles(self) -> ProfilesManager:
        from archiver_app.api.profiles import ProfilesManager

        return ProfilesManager(self)

    @cached_property
    def integrity(self) -> IntegrityManager:
        from archiver_app.api.integrity import IntegrityManager

        return IntegrityManager(self)

    @cached_property
    def editions(self) -> EditionsManager:
        from archiver_app.api.editions import EditionsManager

        return EditionsManager(self)


# ---------------------------------------------------------------------- helpers


def check_library_folder(root: Path, *, create: bool, start_over: bool = False) -> bool:
    """Validate ``root``; return True when a new library must be created there.

    ``start_over``: a new library may be made where this computer knew one that is gone
    (or moved away from).

    Raises:
        LibraryError: the folder cannot hold a library (says why); nothing was written.
    """
    if root.exists() and not root.is_dir():
        raise LibraryError(f"{root} is a file, not a library folder")
    if (link := _dangling_link(root)) is not None:  # a place not mounted: never made one
        raise LibraryError(
            f"cannot read the library folder {root} ({link} links to {os.readlink(link)}, "
            "which is missing): is the share or drive mounted there?"
        )
    if not start_over and _holds_no_library(root):
        if (moved := known.moved_to(root)) is not None:
            raise known.LibraryMovedError(root, moved)
        if known.known_library(root) is not None:
            raise LibraryError(known.gone_message(root))
    if not root.exists():
        if not create:
            raise LibraryError(
                f"there is no library at {root}; create one with: archiver init --library {root}"
            )
        parent = next((p for p in root.parents if p.exists()), None)
        if parent is None or not os.access(parent, os.W_OK | os.X_OK):
            raise LibraryError(f"cannot create a library at {root}: {parent} is not writable")
        return True
    if not os.access(root, os.R_OK | os.W_OK | os.X_OK):
        raise LibraryError(f"the library folder {root} is not readable and writable by you")
    if any((root / name).exists() for name in (META_NAME, DB_NAME, TOKEN_NAME)):
        return False
    if not create:
        raise LibraryError(f"{root} is not an Archiver library")
    if any(root.iterdir()):
        raise LibraryError(
            f"{root} is not empty and is not an Archiver library; choose an empty folder"
        )
    return True


def _dangling_link(root: Path) -> Path | None:
    """``root`` or the folder it would be made in, when that is a link to nothing."""
    for place in (root, *root.parents):
        if place.exists():
            return None
        if place.is_symlink():
            return place
    return None


def _holds_no_library(root: Path) -> bool:
    try:
        return not any((root / name).exists() for name in (META_NAME, DB_NAME, TOKEN_NAME))
    except OSError:
        return True


def _refused(
    engine: Engine, use: library_use.Use, made: Path | None, exc: BaseException
) -> BaseException:
    """Undo an open that failed with ``exc`` (``made``: the folder it made, removed so no
    empty folder is left behind); what to raise: ``exc``, or what says it better (another
    process's long write, a database server that cannot be reached)."""
    engine.dispose()
    use.release()
    if made is not None:
        with suppress(OSError):
            made.rmdir()
    if (busy := library_busy(exc)) is not None:
        return busy
    if isinstance(exc, OperationalError) and engine.dialect.name != "sqlite":
        return not_connected(_public(engine), exc)
    return exc


def _read_meta(meta_path: Path) -> LibraryMeta | None:
    if not meta_path.exists():
        return None  # rebuilt from the database (settings) below
    try:
        data = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LibraryError(f"{meta_path} is unreadable ({exc}); it was left untouched") from exc
    if not isinstance(data, dict) or data.get("format") != LIBRARY_FORMAT:
        raise LibraryError(f"{meta_path} does not describe an Archiver library")
    version = data.get("format_version")
    if not isinstance(version, int) or version > LIBRARY_FORMAT_VERSION:
        raise NewerLibraryError(
            f"the library at {meta_path.parent} was written by a newer version of Archiver "
            f"(library format {version}); install the newer version to open it. "
            "Nothing was changed."
        )
    database = data.get("database")
    try:
        return LibraryMeta(
            library_id=str(data["library_id"]),
            created=str(data["created"]),
            layout_version=str(data.get("layout_version", CURRENT_FS_VERSION)),
            database_url=str(database) if database else None,
        )
    except KeyError as exc:
        raise LibraryError(f"{meta_path} lacks the field {exc}; it was left untouched") from exc


def _ensure_meta(
    engine: Engine, meta_path: Path, meta: LibraryMeta | None, clock: Callable[[], datetime]
) -> LibraryMeta:
    """Make library.json and the database agree on the library id; write what is missing."""
    read, write = make_sessionmakers(engine)
    database = None if engine.dialect.name == "sqlite" else _public(engine)
    with read() as s:  # written once: reopening then waits on no other process's write
        session = write if s.get(Setting, "library") is None else read
    with session() as s, s.begin():
        row = s.get(Setting, "library")
        if row is None:
            meta = meta or LibraryMeta(
                library_id=str(uuid.uuid4()),
                created=clock().isoformat(timespec="seconds"),
                layout_version=CURRENT_FS_VERSION,
                database_url=database,
            )
            s.add(Setting(key="library", value=meta.to_json()))
        elif meta is None:
            stored = dict(row.value)
            meta = LibraryMeta(
                library_id=stored["library_id"],
                created=stored["created"],
                layout_version=stored.get("layout_version", CURRENT_FS_VERSION),
                database_url=database,
            )
        elif row.value.get("library_id") != meta.library_id:
            raise LibraryError(
                f"{meta_path} and the database name different libraries "
                f"({meta.library_id} and {row.value.get('library_id')}); nothing was changed"
            )
    if not meta_path.exists():
        atomic_write_text(meta_path, json.dumps(meta.to_json(), indent=2) + "\n")
    return meta


def _public(engine: Engine) -> str:
    """The engine's URL without its password (which stays in PGPASSWORD or ~/.pgpass)."""
    return public_url(engine.url)


def public_url(url: URL) -> str:
    """``url`` without its password, to write in ``library.json`` or show. Not
    ``url.set(password=None)``: SQLAlchemy 2.1 reads None there as "unchanged"."""
    return url._replace(password=None).render_as_string(hide_password=False)


def record_database(root: Path, meta: LibraryMeta, database_url: str | None) -> LibraryMeta:
    """Rewrite ``library.json`` so the folder names its database (None: its library.db)."""
    if database_url is not None:
        database_url = _public(make_engine(database_url))
    meta = replace(meta, database_url=database_url)
    atomic_write_text(root / META_NAME, json.dumps(meta.to_json(), indent=2) + "\n")
    return meta


__all__ = ["DB_NAME", "Library", "LibraryInfo", "LibraryMeta"]
