"""A library on PostgreSQL proves it sees its own folder: the token in the database and in
``.archiver-library-token`` must match; an empty or foreign folder is refused, never adopted."""

from __future__ import annotations

import json
import os
from pathlib import Path

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
    from archiver_app.store.connection_loss import refused_for_good

    failed = 'connection failed: connection to server at "h", port 5432 failed: FATAL:  '
    assert refused_for_good(Exception(failed + 'password authentication failed for user "a"'))
    assert refused_for_good(Exception(failed + "sorry, too many clients already")) is None
    assert refused_for_good(Exception(failed + "the database system is starting up")) is None
    assert refused_for_good(Exception("connection failed: Connection refused")) is None


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
