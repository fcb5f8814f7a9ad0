"""A library on PostgreSQL proves it sees its own folder: the token in the database and in
``.archiver-library-token`` must match; an empty or foreign folder is refused, never adopted."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from archiver_app.errors import LibraryError
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.library_share import TOKEN_NAME, FolderCode, attach_folder
from tests.helpers.warcs import Resp, html_page, write_warc


def test_created_on_postgresql_the_folder_holds_the_token_and_names_the_database(
    tmp_path: Path, postgres_url: str
) -> None:
    root = tmp_path / "share"
    with Library.open(root, database_url=postgres_url) as lib:
        token = lib.share_token
        assert token and lib.check_folder().ok
    assert json.loads((root / TOKEN_NAME).read_text())["token"] == token
    meta = json.loads((root / "library.json").read_text())
    assert meta["database"].startswith("postgresql+psycopg://") and meta["format_version"] == 2
    assert not (root / "library.db").exists()
    # the folder alone says where its database is
    with Library.open(root, create=False) as again:
        assert again.engine.dialect.name == "postgresql" and again.share_token == token


def test_the_same_folder_at_another_path_opens(tmp_path: Path, postgres_url: str) -> None:
    root = tmp_path / "share"
    Library.open(root, database_url=postgres_url).close()
    other = tmp_path / "mnt" / "elsewhere"
    other.parent.mkdir()
    other.symlink_to(root)
    with Library.open(other, database_url=postgres_url) as lib:
        assert lib.check_folder().ok


def test_an_empty_folder_is_refused_not_adopted(tmp_path: Path, postgres_url: str) -> None:
    Library.open(tmp_path / "share", database_url=postgres_url).close()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LibraryError, match=r"not this library's folder.*library attach"):
        Library.open(empty, database_url=postgres_url)
    assert list(empty.iterdir()) == []
    missing = tmp_path / "not-mounted"
    with pytest.raises(LibraryError, match="not this library's folder"):
        Library.open(missing, database_url=postgres_url)
    assert not missing.exists()
    with pytest.raises(LibraryError, match="is the share mounted there"):
        Library.open(missing, create=False, database_url=postgres_url)
    with pytest.raises(LibraryError, match="not this library's folder"):
        Library.open(empty, create=False, database_url=postgres_url)
    assert not missing.exists() and list(empty.iterdir()) == []


def test_another_librarys_folder_is_refused(
    tmp_path: Path, postgres_url: str, postgres_server: object
) -> None:
    Library.open(tmp_path / "share", database_url=postgres_url).close()
    # a second shared library (its own database) and its folder
    from tests.helpers.postgres import TEMPLATE, PostgresServer, _admin

    assert isinstance(postgres_server, PostgresServer)
    _admin(postgres_server, f'CREATE DATABASE "other_{os.getpid()}" TEMPLATE "{TEMPLATE}"')
    other_url = postgres_server.url(f"other_{os.getpid()}")
    Library.open(tmp_path / "other", database_url=other_url).close()
    with pytest.raises(LibraryError, match="belongs to another library"):
        Library.open(tmp_path / "other", database_url=postgres_url)
    # and an SQLite library's folder is not the shared library's either
    Library.open(tmp_path / "lite").close()
    with pytest.raises(LibraryError, match="not this library's folder"):
        Library.open(tmp_path / "lite", database_url=postgres_url)


def test_attach_initialises_an_empty_folder_only_while_there_are_no_captures(
    tmp_path: Path, postgres_url: str
) -> None:
    from archiver_app.store.engine import make_engine

    with Library.open(tmp_path / "share", database_url=postgres_url) as lib:
        library_id = lib.id
    from archiver_app.cli import main

    assert (
        main(["--database-url", postgres_url, "library", "attach", str(tmp_path / "second")]) == 0
    )
    assert main(["library", "attach", str(tmp_path / "no-url")]) == 2  # needs the database
    with Library.open(tmp_path / "second", database_url=postgres_url) as lib:
        assert lib.id == library_id and lib.check_folder().ok
        pages = [Resp(f"https://e.example/{i}", html_page(f"P{i}", "text")) for i in range(3)]
        import_warc_file(lib, write_warc(tmp_path / "p.warc.gz", pages))
    engine = make_engine(postgres_url)
    try:
        with pytest.raises(LibraryError, match=r"already has 3 captures.*copy the whole folder"):
            attach_folder(engine, tmp_path / "third")
    finally:
        engine.dispose()
    assert not (tmp_path / "third").exists()


def test_a_folder_that_goes_away_is_reported(tmp_path: Path, postgres_url: str) -> None:
    root = tmp_path / "share"
    with Library.open(root, database_url=postgres_url) as lib:
        root.rename(tmp_path / "unmounted")
        check = lib.check_folder()
        assert check.code is FolderCode.UNREADABLE and "mounted" in check.message
        root.mkdir()  # an empty mount point
        assert lib.check_folder().code is FolderCode.NO_TOKEN


def test_a_library_made_before_tokens_gets_one_from_its_own_folder_only(
    tmp_path: Path, postgres_url: str
) -> None:
    from sqlalchemy import delete

    from archiver_app.library_share import SETTING_KEY
    from archiver_app.store.models import Setting

    root = tmp_path / "share"
    with Library.open(root, database_url=postgres_url) as lib, lib.write() as s:
        s.execute(delete(Setting).where(Setting.key == SETTING_KEY))  # as older versions left it
    (root / TOKEN_NAME).unlink()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LibraryError, match="not this library's folder"):
        Library.open(empty, database_url=postgres_url)
    with Library.open(root, database_url=postgres_url) as lib:  # library.json names it
        assert lib.share_token and lib.check_folder().ok
    assert (root / TOKEN_NAME).exists()


def test_an_unreachable_database_is_a_clear_error(tmp_path: Path) -> None:
    url = f"postgresql+psycopg://nobody@/x?host={tmp_path}&port=1"  # no server there
    with pytest.raises(LibraryError, match="cannot reach the library's database") as refused:
        Library.open(tmp_path / "lib", database_url=url)
    assert refused.value.exit_code == 75  # try again later, as when it is lost mid-way
    said = str(refused.value)  # libpq's lines as one sentence, then ours
    assert "\n" not in said and said.endswith(" Nothing was changed.") and "?." not in said
    assert "No such file or directory. Is the server running" in said  # two sentences
    assert not (tmp_path / "lib").exists()


def test_a_database_that_refuses_for_good_is_no_passing_outage(
    tmp_path: Path, postgres_server: object
) -> None:
    """A database name (or password, or user) that is wrong answers FATAL: exit 2 with the
    server's reason, not 75 ("try again later"), which a service manager retries forever."""
    from tests.helpers.postgres import PostgresServer

    assert isinstance(postgres_server, PostgresServer)
    url = postgres_server.url(f"no_such_db_{os.getpid()}")
    with pytest.raises(LibraryError, match="refused the connection: database") as refused:
        Library.open(tmp_path / "lib", database_url=url)
    assert refused.value.exit_code == 2
    assert "does not exist. Check the URL" in str(refused.value)
    assert not (tmp_path / "lib").exists()


def test_which_refusals_pass() -> None:
    from archiver_app.store.connection_loss import RefusalKind, refused_for_good

    failed = 'connection failed: connection to server at "h", port 5432 failed: FATAL:  '
    wrong = refused_for_good(Exception(failed + 'password authentication failed for user "a"'))
    assert wrong is not None and wrong.kind is RefusalKind.REFUSED
    assert refused_for_good(Exception(failed + "sorry, too many clients already")) is None
    assert refused_for_good(Exception(failed + "the database system is starting up")) is None
    assert refused_for_good(Exception("connection failed: Connection refused")) is None
    # libpq's own words (psycopg 3) when the server asks for a password and it has none
    none = refused_for_good(
        Exception(
            'connection failed: connection to server on socket "/run/postgresql/.s.PGSQL.5432"'
            " failed: fe_sendauth: no password supplied"
        )
    )
    assert none is not None and none.kind is RefusalKind.NO_PASSWORD


@pytest.fixture
def password_only_user(postgres_server: object) -> Iterator[str]:
    """A URL for a user the test server asks a password of (scram-sha-256 in pg_hba.conf,
    for that user alone), given without one."""
    import psycopg

    from tests.helpers.postgres import PostgresServer

    assert isinstance(postgres_server, PostgresServer)
    user = f"needs_password_{os.getpid()}"
    admin = psycopg.connect(
        host=str(postgres_server.socket_dir),
        port=postgres_server.port,
        user="postgres",
        dbname="postgres",
        autocommit=True,
    )
    with admin:
        admin.execute(f"CREATE ROLE {user} LOGIN PASSWORD 'secret'")  # type: ignore[arg-type]
        row = admin.execute("SHOW hba_file").fetchone()
        assert row is not None
        hba = Path(row[0])
        before = hba.read_text()
        hba.write_text(f"local all {user} scram-sha-256\n{before}")
        admin.execute("SELECT pg_reload_conf()")
        try:
            yield postgres_server.url("postgres").replace("postgres@", f"{user}@", 1)
        finally:
            hba.write_text(before)
            admin.execute("SELECT pg_reload_conf()")
            admin.execute(f"DROP ROLE {user}")  # type: ignore[arg-type]


def test_a_server_asking_for_a_password_none_was_given_is_no_passing_outage(
    tmp_path: Path, password_only_user: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """No password in the URL, no PGPASSWORD, no ~/.pgpass: libpq gives up before the
    server says FATAL ("fe_sendauth: no password supplied"), yet the server answered: exit
    2, saying where a password goes, not 75 ("try again later")."""
    from archiver_app.cli import main

    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no-pgpass"))
    with pytest.raises(LibraryError, match="asks for a password and none was given") as refused:
        Library.open(tmp_path / "lib", database_url=password_only_user)
    assert refused.value.exit_code == 2
    assert "~/.pgpass" in str(refused.value) and "PGPASSWORD" in str(refused.value)
    assert not (tmp_path / "lib").exists()
    args = ["--library", str(tmp_path / "lib"), "--database-url", password_only_user, "info"]
    assert main(args) == 2
    assert "asks for a password" in capsys.readouterr().err


def test_a_wrong_password_is_told_as_a_refusal_not_an_outage(password_only_user: str) -> None:
    """The app told a wrong password as the database unreachable ("when the database server
    can be reached again, refresh"): it is refused, and waiting does not cure it."""
    from sqlalchemy import create_engine
    from sqlalchemy.exc import OperationalError

    from archiver_app.errors import database_lost

    engine = create_engine(password_only_user.replace("@", ":wrong@", 1))
    try:
        with pytest.raises(OperationalError) as refused, engine.connect():
            pass
    finally:
        engine.dispose()
    told = database_lost(refused.value)
    assert told is not None
    assert str(told).startswith("the library's database refused the connection: ")
    assert "password authentication failed" in str(told) and "~/.pgpass" in str(told)
    assert "unreachable" not in str(told)


def test_a_librarys_folder_given_an_empty_database_is_refused_not_split(
    tmp_path: Path, postgres_url: str, postgres_server: object
) -> None:
    """A mistyped database name (one that holds no library) with the shared folder: the
    folder was taken as a new library's, and the share then opened with no captures."""
    from sqlalchemy import create_engine, text

    from tests.helpers.postgres import TEMPLATE, PostgresServer, _admin

    root = tmp_path / "share"
    with Library.open(root, database_url=postgres_url) as lib:
        library_id = lib.id
    before = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}
    assert isinstance(postgres_server, PostgresServer)
    name = f"typo_{os.getpid()}"
    _admin(postgres_server, f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
    typo = postgres_server.url(name)
    for create in (True, False):
        with pytest.raises(LibraryError, match=f"is the folder of library {library_id}, and this"):
            Library.open(root, create=create, database_url=typo)
    engine = create_engine(typo)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM settings")).scalar_one() == 0
    finally:
        engine.dispose()
    assert {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()} == before
    with Library.open(root, create=False) as lib:  # its own database, from library.json
        assert lib.id == library_id


def test_library_json_keeps_no_password(tmp_path: Path, postgres_url: str) -> None:
    with_password = postgres_url.replace("postgres@", "postgres:secretpw@")
    assert "secretpw" in with_password  # the test server trusts local connections
    Library.open(tmp_path / "share", database_url=with_password).close()
    meta = (tmp_path / "share" / "library.json").read_text()
    assert "secretpw" not in meta and "postgres@" in meta


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
@pytest.mark.parametrize("create", [True, False])
def test_a_link_to_a_missing_folder_is_a_place_not_mounted(
    request: pytest.FixtureRequest, tmp_path: Path, database: str, create: bool
) -> None:
    """A library at a link to nothing (a mount point's link, the share not mounted) said
    "cannot create a library at …: File exists" when capturing."""
    url = request.getfixturevalue("postgres_url") if database == "postgresql" else None
    link = tmp_path / "mntB"
    link.symlink_to(tmp_path / "share-not-mounted")
    for root in (link, link / "lib"):
        with pytest.raises(
            LibraryError,
            match=rf"cannot read the library folder {root} \({link} links to .*share-not-mounted,"
            r" which is missing\): is the share or drive mounted there\?",
        ):
            Library.open(root, create=create, database_url=url)
    assert not (tmp_path / "share-not-mounted").exists() and link.is_symlink()
