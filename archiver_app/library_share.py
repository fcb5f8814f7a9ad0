"""A shared library: proving that a process sees the library's own folder.

A library whose database is in PostgreSQL keeps its files in a folder that every machine
mounts, perhaps at different paths. The database stores file paths relative to that folder,
so a process that opened some other folder (an empty one, a share that is not mounted, a
folder of another library) would write captures that nobody else can find. So the
database holds a random token (setting ``library_share``) and the folder holds the same
token in ``.archiver-library-token``; :func:`bind_folder` compares them when a library is
opened, and :func:`check_folder` again before a worker claims work. An empty folder is never
adopted: it is initialised only by :func:`attach_folder` (``archiver library attach``),
and only while the library has no captures yet.

A library on SQLite keeps its database in its folder: there is nothing to prove.
"""

from __future__ import annotations

import enum
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, select

from archiver_app.durable import atomic_write_text
from archiver_app.errors import LibraryError
from archiver_app.store.engine import make_sessionmakers
from archiver_app.store.models import Setting, Snapshot

TOKEN_NAME = ".archiver-library-token"  # noqa: S105 - a file name
DB_NAME = "library.db"  # a library's own SQLite database
SETTING_KEY = "library_share"


class FolderCode(enum.Enum):
    OK = "ok"
    NO_TOKEN = "no-token"  # noqa: S105 - the folder holds no token (empty, or not the library's)
    UNREADABLE = "unreadable"  # the folder or its token cannot be read (share gone?)
    MISMATCH = "mismatch"  # another library's folder


@dataclass(frozen=True)
class FolderCheck:
    """An outcome: ``message`` says it whole (with a guess at the cause, where there is one);
    ``fact``, when given, says only what is wrong, for a caller that gives its own cause."""

    code: FolderCode
    message: str
    fact: str = ""

    @property
    def what(self) -> str:
        """What is wrong, without a guess at why."""
        return self.fact or self.message

    @property
    def ok(self) -> bool:
        return self.code is FolderCode.OK


def read_token(root: Path) -> str | None:
    """The token in ``root``'s token file, None when there is none.

    Raises:
        OSError: the folder or the file cannot be read (a share that went away).
    """
    path = root / TOKEN_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if not root.is_dir():
            raise
        return None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OSError(f"{path} is damaged ({exc})") from exc
    token = data.get("token") if isinstance(data, dict) else None
    return str(token) if token else None


def write_token(root: Path, token: str) -> None:
    doc = {"format": "archiver-library-token", "token": token}
    atomic_write_text(root / TOKEN_NAME, json.dumps(doc, indent=2) + "\n")


def database_token(engine: Engine) -> str | None:
    with make_sessionmakers(engine)[0]() as s:
        row = s.get(Setting, SETTING_KEY)
        value: Any = None if row is None else row.value
    return str(value["token"]) if isinstance(value, dict) and value.get("token") else None


def check_folder(root: Path, expected: str) -> FolderCheck:
    """Does ``root`` hold the library's token ``expected``? An outcome, never raises."""
    try:
        found = read_token(root)
    except OSError as exc:
        fact = f"the library folder {root} cannot be read ({exc})"
        return FolderCheck(FolderCode.UNREADABLE, f"{fact}: is the share mounted?", fact)
    if found is None and (root / DB_NAME).is_file():
        return FolderCheck(
            FolderCode.NO_TOKEN,
            f"{root} is not this library's folder: it holds a library with its own SQLite "
            "database (as after `archiver library convert --to sqlite`). Open that library "
            "from its folder alone, without a database URL.",
        )
    if found is None:
        return FolderCheck(
            FolderCode.NO_TOKEN,
            f"{root} is not this library's folder (it has no {TOKEN_NAME}). Open the "
            "library with the path where its shared folder is mounted on this machine, or "
            "copy the whole folder here (every file, the token file included).",
        )
    if found != expected:
        return FolderCheck(
            FolderCode.MISMATCH,
            f"{root} belongs to another library (its {TOKEN_NAME} differs from the "
            "database's): open it with that library's database, or pass this library's "
            "folder.",
        )
    return FolderCheck(FolderCode.OK, f"{root} is the library's folder")


def bind_folder(
    engine: Engine, root: Path, *, library_id: str | None, new_folder: bool, create: bool = True
) -> str:
    """Check (or, for a new library when ``create``, create) the token of ``root``; return it.

    ``library_id`` is the id in the folder's ``library.json`` (None when it has none);
    ``new_folder`` says the folder was empty (or missing).

    Raises:
        LibraryError: the folder is not the library's; nothing was written.
    """
    _, write = make_sessionmakers(engine)
    with write() as s, s.begin():
        lib_row = s.get(Setting, "library")
        share_row = s.get(Setting, SETTING_KEY)
        stored: Any = None if share_row is None else share_row.value
        db_token = stored.get("token") if isinstance(stored, dict) else None
        db_id = lib_row.value.get("library_id") if lib_row is not None else None
        try:
            folder_token = read_token(root)
        except OSError as exc:
            raise LibraryError(
                f"cannot read the library folder {root} ({exc}): is the share mounted there?"
            ) from exc
        if lib_row is None:
            if folder_token is not None and library_id is not None:
                # A whole library's folder (library.json is written last), given a database
                # that holds none: another database, or this one emptied. Taking the folder
                # would split the library: captures here, rows where nobody else reads.
                raise LibraryError(
                    f"{root} is the folder of library {library_id}, and this database holds no"
                    " library: open the folder with its own database (library.json names it;"
                    " omit --database-url), or restore this database from a backup. Nothing"
                    " was changed."
                )
            if not create:
                raise LibraryError(
                    "the database holds no library yet; create one with: archiver init "
                    f"--library {root} --database-url URL"
                )
            if not new_folder and folder_token is None:
                raise LibraryError(
                    f"the database holds no library, and {root} is a library of its own: "
                    f"to move it into this database, use archiver library convert --to URL. "
                    "Nothing was changed."
                )
            # A new library (or one whose creation stopped after the token file was written).
            token = folder_token or secrets.token_urlsafe(32)
            if folder_token is None:
                write_token(root, token)
            s.merge(Setting(key=SETTING_KEY, value={"token": token}))
            return token
        if db_token is None:
            # Made on PostgreSQL before folders had tokens: a folder naming the same library
            # gets one; an empty folder is never adopted.
            if library_id is None or library_id != db_id:
                raise LibraryError(check_folder(root, "").message + " Nothing was changed.")
            token = secrets.token_urlsafe(32)
            write_token(root, token)
            s.merge(Setting(key=SETTING_KEY, value={"token": token}))
            return token
    check = check_folder(root, str(db_token))
    if not check.ok:
        hint = ""
        if new_folder:
            hint = (
                " To make this empty folder the library's while it has no captures yet, "
                "run: archiver library attach --database-url URL PATH."
            )
        raise LibraryError(check.message + hint + " Nothing was changed.")
    return str(db_token)


def attach_folder(engine: Engine, root: Path) -> str:
    """Make the empty folder ``root`` the folder of the library in ``engine``; return the
    library id. Only while the library has no captures: with captures, their files are in
    the library's folder and must be copied (or the share mounted), not started afresh.

    Raises:
        LibraryError: the folder is not empty, or the library has captures or no token.
    """
    if root.exists() and any(root.iterdir()):
        raise LibraryError(f"{root} is not empty; attach needs an empty folder")
    with make_sessionmakers(engine)[0]() as s:
        lib_row = s.get(Setting, "library")
        captures = s.scalar(select(func.count()).select_from(Snapshot)) or 0
    token = database_token(engine)
    if lib_row is None or token is None:
        raise LibraryError("the database holds no shared library; create one with archiver init")
    if captures:
        raise LibraryError(
            f"the library already has {captures} captures, whose files are in its folder: "
            "mount that folder (the share) here, or copy the whole folder, every file "
            f"included, and open the copy. {root} was left as it was."
        )
    root.mkdir(parents=True, exist_ok=True)
    write_token(root, token)
    return str(lib_row.value.get("library_id"))


__all__ = [
    "TOKEN_NAME",
    "FolderCheck",
    "FolderCode",
    "attach_folder",
    "bind_folder",
    "check_folder",
    "database_token",
    "read_token",
]
