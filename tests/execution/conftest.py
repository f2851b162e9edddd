"""Small real databases for the execution tests, built in a temporary folder.

``tiny_sqlite``/``tiny_duckdb``: table ``t(a INTEGER, b TEXT, c REAL)`` with 100 rows, built
once per session. ``mysql_attack_server``: the same table in a database of the MySQL-protocol
server of ``mysql_admin_url`` (tests/conftest.py), a secret database beside it and a read-only
account that may SELECT from the first only (and the metadata database, where the first is
registered as a benchmark database: the engine refuses any other account); skipped, with the
reason, when there is no server. ``postgres_attack_server``: the same on a PostgreSQL server
(``postgres_admin_url``): a database of its own with table ``t``, a schema the reader may not
read, and the read-only role.
``restartable_postgres``: the same on a private cluster of the test's own, which it may restart.
``no_retry_pause``: the runner's pause before its one retry, shortened.
``hooks_dir``: an importable module of setup hooks (a sleeping function, a crashing function, a
clock, the worker's pid; hooks that fail, kill their process (always, or when told), or fail on
the first open only) placed on sys.path, so the worker processes can import it.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from sqlbench_lmeval.execution import Database

ROWS = [(i, f"name{i}", i / 10) for i in range(100)]

HOOKS = textwrap.dedent(
    '''
    """Setup hooks for tests: trusted code that registers SQL functions."""
    import os
    import signal
    import time


    def register(conn):
        conn.create_function("slow_sleep", 1, lambda s: time.sleep(s) or 1)
        conn.create_function("die", 0, lambda: os.kill(os.getpid(), signal.SIGKILL))
        conn.create_function("frozen_now", 0, lambda: "2024-01-01 00:00:00")
        conn.create_function("worker_pid", 0, os.getpid, deterministic=False)


    def broken(conn):
        raise RuntimeError("hook exploded")


    def die_on_open(conn):
        os.kill(os.getpid(), signal.SIGKILL)


    def die_when_told(conn):
        # Dies opening a database while the file $SQLBENCH_TEST_DIE_MARKER exists (it is
        # removed first, so one open dies per marker the test makes).
        marker = os.environ.get("SQLBENCH_TEST_DIE_MARKER")
        if marker and os.path.exists(marker):
            os.remove(marker)
            os.kill(os.getpid(), signal.SIGKILL)


    _opened = []


    def fails_once(conn):
        _opened.append(1)
        if len(_opened) == 1:
            raise RuntimeError("the first open fails")
    '''
)


def build_sqlite(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (a INTEGER, b TEXT, c REAL)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", ROWS)
    conn.commit()
    conn.close()
    return path


def build_duckdb(path: Path) -> Path:
    import duckdb

    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE t (a INTEGER, b VARCHAR, c DOUBLE)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", ROWS)
    conn.close()
    return path


@pytest.fixture(scope="session")
def db_dir(tmp_path_factory) -> Path:
    # A '#', a '?' and a space in the folder name: the URI must be quoted to stay read-only.
    folder = tmp_path_factory.mktemp("dbs") / "odd #name? dir"
    folder.mkdir()
    return folder


@pytest.fixture(scope="session")
def tiny_sqlite(db_dir) -> Path:
    return build_sqlite(db_dir / "tiny.sqlite")


@pytest.fixture(scope="session")
def tiny_duckdb(tmp_path_factory) -> Path:
    # No '?' here: DuckDB itself cannot write a database under such a folder (its WAL path
    # gets mangled), so only '#' and a space.
    folder = tmp_path_factory.mktemp("duck") / "odd #name dir"
    folder.mkdir()
    return build_duckdb(folder / "tiny.duckdb")


@pytest.fixture(scope="session")
def hooks_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hooks")
    (folder / "sqlbench_test_hooks.py").write_text(HOOKS)
    sys.path.insert(0, str(folder))  # the pool hands sys.path to its workers
    yield folder
    sys.path.remove(str(folder))


def admin_connection(admin_url: str):
    """A new connection to the server as its admin (the caller closes it)."""
    from sqlbench_lmeval.execution.mysql import open_connection, parse_url

    return open_connection(parse_url(admin_url))


@dataclass(frozen=True)
class AttackServer:
    """Databases ``attacked`` (table t, ROWS) and ``secret`` on a MySQL-protocol server;
    ``reader_url`` is the read-only account (SELECT on ``attacked`` only)."""

    admin_url: str
    reader_url: str
    attacked: str
    secret: str

    def database(self) -> Database:
        """The attacked database as the read-only account sees it."""
        from sqlbench_lmeval.execution.mysql import database_url

        return Database("mysql", database_url(self.reader_url, self.attacked))

    def admin(self):
        """A new admin connection (the caller closes it)."""
        return admin_connection(self.admin_url)

    def state(self) -> dict:
        """What no query may change: the list of databases and CHECKSUM TABLE of every table
        of the attacked and the secret database."""
        from sqlbench_lmeval.execution.mysql_admin import table_checksums

        conn = self.admin()
        try:
            with conn.cursor() as cursor:
                cursor.execute("SHOW DATABASES")
                databases = sorted(row[0] for row in cursor.fetchall())
        finally:
            conn.close()
        return {
            "databases": databases,
            "attacked": table_checksums(self.admin_url, self.attacked),
            "secret": table_checksums(self.admin_url, self.secret),
        }


@pytest.fixture(scope="session")
def mysql_attack_server(mysql_admin_url):
    """An :class:`AttackServer`: its databases and account are dropped at the end."""
    from support.mysql_server import create_read_only_account

    from sqlbench_lmeval.execution.mysql_admin import quote_identifier

    suffix = str(os.getpid())
    reader = f"reader_{suffix}"
    attacked, secret = f"sqlbench_attack_{suffix}", f"sqlbench_secret_{suffix}"
    conn = admin_connection(mysql_admin_url)
    with conn.cursor() as cursor:
        for name in (attacked, secret):
            cursor.execute(f"DROP DATABASE IF EXISTS {quote_identifier(name)}")
            cursor.execute(f"CREATE DATABASE {quote_identifier(name)}")
        cursor.execute(f"CREATE TABLE {attacked}.t (a INT, b VARCHAR(20), c DOUBLE)")
        cursor.executemany(f"INSERT INTO {attacked}.t VALUES (%s, %s, %s)", ROWS)
        cursor.execute(f"CREATE TABLE {secret}.s (k VARCHAR(20))")
        cursor.execute(f"INSERT INTO {secret}.s VALUES ('secret')")
    reader_url = create_read_only_account(mysql_admin_url, [attacked], user=reader)
    yield AttackServer(mysql_admin_url, reader_url, attacked, secret)
    with conn.cursor() as cursor:
        for name in (attacked, secret):
            cursor.execute(f"DROP DATABASE IF EXISTS {quote_identifier(name)}")
        cursor.execute("DROP USER IF EXISTS %s@'%%'", (reader,))
        cursor.execute(
            "DELETE FROM sqlbench_lmeval_meta.benchmark_databases WHERE benchmark = %s", (reader,)
        )
    conn.close()


@dataclass(frozen=True)
class PostgresServer:
    """See :func:`postgres_attack_server`."""

    admin_url: str
    reader_url: str
    name: str
    secret: str

    def database(self) -> Database:
        """The attacked database as the read-only role sees it."""
        return Database("postgres", self.reader_url)

    @property
    def role(self) -> str:
        """The read-only role."""
        import urllib.parse

        return urllib.parse.urlsplit(self.reader_url).username

    def admin(self):
        """A new admin connection to the attacked database (the caller closes it)."""
        from sqlbench_lmeval.execution.postgres import open_connection, with_database

        return open_connection(with_database(self.admin_url, self.name))

    def state(self) -> dict:
        """What no query may change: the databases and roles of the server, its large objects,
        and a checksum of every table's rows (the admin reads the secret schema too)."""
        from sqlbench_lmeval.execution.postgres import table_checksums

        with self.admin() as conn:
            databases = [r[0] for r in conn.execute("SELECT datname FROM pg_database ORDER BY 1")]
            roles = [r[0] for r in conn.execute("SELECT rolname FROM pg_roles ORDER BY 1")]
            (objects,) = conn.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone()
            return {
                "databases": databases,
                "roles": roles,
                "large_objects": objects,
                "tables": table_checksums(conn),
            }


def make_postgres_attack_database(admin_url: str, folder: Path) -> PostgresServer:
    """On the server of ``admin_url``: a database with ``t`` (:data:`ROWS`), a secret schema
    beside it, and a read-only role whose password file goes into ``folder``."""
    from sqlbench_lmeval.execution import postgres_admin as admin
    from sqlbench_lmeval.execution.postgres import with_database

    suffix = str(os.getpid())
    name, reader, secret = f"sqlbench_attack_{suffix}", f"reader_{suffix}", "secret_schema"
    admin.create_database(admin_url, name)
    with admin.open_connection(with_database(admin_url, name)) as conn:
        conn.execute("CREATE TABLE t (a integer, b varchar(20), c double precision)")
        with conn.cursor() as cursor:
            cursor.executemany("INSERT INTO t VALUES (%s, %s, %s)", ROWS)
        conn.execute(f"CREATE SCHEMA {secret}")
        conn.execute(f"CREATE TABLE {secret}.s (k varchar(20))")
        conn.execute(f"INSERT INTO {secret}.s VALUES ('secret')")
    password = admin.new_password()
    admin.grant_reader(admin_url, name, reader, password, ["t"])
    passfile = folder / "reader.pgpass"
    admin.write_passfile(passfile, name, reader, password)
    reader_url = admin.reader_url(admin_url, name, reader, passfile)
    return PostgresServer(admin_url, reader_url, name, secret)


def drop_postgres_attack_database(server: PostgresServer) -> None:
    from support.postgres_server import drop_database

    from sqlbench_lmeval.execution import postgres

    postgres.close_all()
    drop_database(server.admin_url, server.name, roles=(server.role,))


@pytest.fixture
def restartable_postgres(tmp_path):
    """(a private cluster of the test's own, which it may restart; its attack database)."""
    from support.postgres_server import private_or_skip

    private = private_or_skip()
    try:
        server = make_postgres_attack_database(private.url, tmp_path)
        yield private, server
        drop_postgres_attack_database(server)
    finally:
        private.stop()


@pytest.fixture
def no_retry_pause(monkeypatch):
    """The runner's pause before its one retry, shortened (the retry itself still happens)."""
    from sqlbench_lmeval.execution import runner

    monkeypatch.setattr(runner, "RETRY_PAUSE_S", 0.01)


@pytest.fixture(scope="session")
def postgres_attack_server(postgres_admin_url, tmp_path_factory):
    """A :class:`PostgresServer`: its database and role are dropped at the end."""
    server = make_postgres_attack_database(postgres_admin_url, tmp_path_factory.mktemp("pgpass"))
    yield server
    drop_postgres_attack_database(server)
