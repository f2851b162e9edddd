"""A PostgreSQL server for the tests marked ``postgres``.

``$SQLBENCH_LMEVAL_TEST_POSTGRES_URL`` (an admin account: it creates databases and roles) when
set, as ``.ci/run`` sets it; otherwise a private cluster started by ``.ci/postgres.sh``
(``initdb`` on a temporary directory, a unix socket there and a loopback port; stopped at the end
of the session) when PostgreSQL's binaries are installed; otherwise the test skips and says why.
(``$SQLBENCH_LMEVAL_POSTGRES_URL`` is the URL evaluations run under, a read-only role's; the
tests keep it out of their environment.)
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

import pytest
from support.private_server import ScriptServer

URL_ENV = "SQLBENCH_LMEVAL_TEST_POSTGRES_URL"


class PrivateServer(ScriptServer):
    """A cluster started from ``.ci/postgres.sh`` in a temporary folder."""

    def __init__(self) -> None:
        super().__init__("postgres.sh", "sqlbench-pg-", "PostgreSQL")

    def restart(self) -> None:
        """Stop the server at once, as a crash would, and start it again (same folder, port
        and options); returns once it answers."""
        subprocess.run(
            ["bash", str(self.script), "restart", str(self.folder)], check=True, capture_output=True
        )


def has_server_binaries() -> bool:
    return bool(shutil.which("initdb") or glob.glob("/usr/lib/postgresql/*/bin/initdb"))


def admin_url_or_skip() -> tuple[str, PrivateServer | None]:
    """(admin URL, the private server to stop or None); skips the test without any server."""
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    url = os.environ.get(URL_ENV)
    if url:
        return url, None
    if not has_server_binaries():
        pytest.skip(
            f"no PostgreSQL server: set {URL_ENV}=postgresql://admin:pass@host:port/postgres or "
            "install Debian's postgresql (.ci/run does)"
        )
    server = PrivateServer()
    return server.url, server


def private_or_skip() -> PrivateServer:
    """A cluster of the caller's own, never the one ``$SQLBENCH_LMEVAL_TEST_POSTGRES_URL``
    names (restarting a server the test did not start is not the test's to do), or a skip."""
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    if not has_server_binaries():
        pytest.skip("no PostgreSQL binaries (initdb) to start a private server with")
    return PrivateServer()


def drop_database(admin_url: str, database: str, roles: tuple[str, ...] = ()) -> None:
    """Drop ``database`` (ending its sessions) and then ``roles``."""
    from psycopg import sql

    from sqlbench_lmeval.execution.postgres_admin import open_connection

    with open_connection(admin_url) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
        )
        for role in roles:
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
