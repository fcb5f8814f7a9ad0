"""A real PostgreSQL server for tests, started by the suite itself (Debian's binaries).

``postgres_server`` (session scope) runs ``initdb`` into a temporary folder and starts the
server with ``pg_ctl`` on a Unix socket only, as the ``postgres`` user when we are root
(the server refuses to run as root). ``postgres_url`` gives each test a fresh database.
Skipped, with the reason, when the binaries or psycopg are missing.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_BIN_DIRS = [Path(f"/usr/lib/postgresql/{v}/bin") for v in (17, 16, 15, 14, 13)]


@dataclass(frozen=True)
class PostgresServer:
    socket_dir: Path
    port: int

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://postgres@/{database}?host={self.socket_dir}&port={self.port}"


def _find_bin() -> Path | None:
    env = os.environ.get("ARCHIVER_PG_BIN")
    if env and (Path(env) / "initdb").exists():
        return Path(env)
    for d in PG_BIN_DIRS:
        if (d / "initdb").exists() and (d / "pg_ctl").exists():
            return d
    return None


def _as_postgres(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    if shutil.which("runuser"):
        return ["runuser", "-u", "postgres", "--", *cmd]
    return ["su", "postgres", "-c", " ".join(cmd)]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    pg_bin = _find_bin()
    if pg_bin is None:
        pytest.skip("PostgreSQL server binaries not found (install postgresql-15)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (dev dependency group)")
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run the server")
    with running_server(pg_bin) as server:
        yield server


@contextmanager
def running_server(pg_bin: Path | None = None) -> Iterator[PostgresServer]:
    """A PostgreSQL server in a temporary folder until the block ends (the fixture's, and
    the benchmarks')."""
    pg_bin = pg_bin or _find_bin()
    if pg_bin is None:
        raise RuntimeError("PostgreSQL server binaries not found (install postgresql-15)")
    base = Path(tempfile.mkdtemp(prefix="archiver-pg-"))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        import pwd

        pw = pwd.getpwnam("postgres")
        for p in (base, sock):
            os.chown(p, pw.pw_uid, pw.pw_gid)
    port = 54_000 + os.getpid() % 1000
    subprocess.run(
        _as_postgres(
            [
                str(pg_bin / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "--no-sync",
                "-E",
                "UTF8",
            ]
        ),
        check=True,
        capture_output=True,
    )
    opts = f"-k {sock} -p {port} -c listen_addresses='' -c fsync=off -c full_page_writes=off"
    subprocess.run(
        _as_postgres(
            [
                str(pg_bin / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                opts,
                "-w",
                "-s",
                "-l",
                str(base / "log"),
                "start",
            ]
        ),
        check=True,
        capture_output=True,
    )
    try:
        yield PostgresServer(sock, port)
    finally:
        _stop(data)
        shutil.rmtree(base, ignore_errors=True)


class StoppableServer:
    """A PostgreSQL server of the tests' own, which a test may stop and start again (the
    suite's shared server stays up for the other tests)."""

    def __init__(self, server: PostgresServer) -> None:
        self.server = server
        self.data = server.socket_dir.parent / "data"

    def stop(self) -> None:
        _stop(self.data)

    def start(self) -> None:
        pg_bin = _find_bin()
        assert pg_bin is not None
        sock, port = self.server.socket_dir, self.server.port
        opts = f"-k {sock} -p {port} -c listen_addresses='' -c fsync=off"
        log = self.data.parent / "log"
        cmd = [str(pg_bin / "pg_ctl"), "-D", str(self.data), "-o", opts, "-w", "-s", "-l"]
        subprocess.run(_as_postgres([*cmd, str(log), "start"]), check=True, capture_output=True)

    def running(self) -> bool:
        try:
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return False
        return not _exited(pid)

    def new_database(self, name: str) -> str:
        """A URL to a new database (schema already migrated) named after ``name``."""
        unique = f"{name}_{next(_counter)}"
        _admin(self.server, f'CREATE DATABASE "{unique}" TEMPLATE "{TEMPLATE}"')
        return self.server.url(unique)


@pytest.fixture(scope="session")
def stoppable_postgres(postgres_server: PostgresServer) -> Iterator[StoppableServer]:
    """One server for the tests that stop one (``postgres_server`` only makes sure one
    can run): started, with a migrated template, once per session, not once per test."""
    with running_server() as own:
        _make_template(own)
        yield StoppableServer(own)


@pytest.fixture
def stoppable_server(stoppable_postgres: StoppableServer) -> Iterator[StoppableServer]:
    """The server the test may stop: running as the test starts, and again after it
    (whatever the test left it as)."""
    if not stoppable_postgres.running():
        stoppable_postgres.start()
    yield stoppable_postgres
    if not stoppable_postgres.running():
        stoppable_postgres.start()


def _stop(data: Path) -> None:
    """Immediate shutdown (SIGQUIT to the postmaster), waiting for it to exit."""
    import signal
    import time

    try:
        pid = int((data / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGQUIT)
    except (OSError, ValueError, IndexError):
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not _exited(pid):
        time.sleep(0.02)


def _exited(pid: int) -> bool:
    """The process has ended: there is no such process, or only its zombie is left, which
    its parent has not reaped yet (the postmaster's parent is PID 1, which may take a
    second or more to reap it: the server is down all that time)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    except OSError:  # no /proc: ask the process itself
        try:
            os.kill(pid, 0)
        except OSError:
            return True
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


_counter = itertools.count()
TEMPLATE = "archiver_template"


@pytest.fixture(scope="session")
def postgres_template(postgres_server: PostgresServer) -> str:
    """A database holding the current schema, copied by every ``postgres_url``."""
    _make_template(postgres_server)
    return TEMPLATE


def _make_template(server: PostgresServer) -> None:
    """Create :data:`TEMPLATE` on ``server``, migrated to the current schema."""
    from archiver_app.store import schema
    from archiver_app.store.engine import make_engine

    _admin(server, f'CREATE DATABASE "{TEMPLATE}"')
    engine = make_engine(server.url(TEMPLATE))
    try:
        schema.upgrade(engine)
    finally:
        engine.dispose()


def _admin(server: PostgresServer, sql: str) -> None:
    import psycopg

    with psycopg.connect(
        host=str(server.socket_dir),
        port=server.port,
        user="postgres",
        dbname="postgres",
        autocommit=True,
    ) as conn:
        conn.execute(sql)  # type: ignore[arg-type]


@pytest.fixture
def postgres_url(postgres_server: PostgresServer, postgres_template: str) -> str:
    """A URL to a new database (schema already migrated) on the test server."""
    return new_database(postgres_server, postgres_template)


def new_database(server: PostgresServer, template: str) -> str:
    """A URL to a new database copied from ``template`` (for fixtures of wider scope than
    ``postgres_url``'s)."""
    name = f"t{os.getpid()}_{next(_counter)}"
    _admin(server, f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return server.url(name)
