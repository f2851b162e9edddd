"""MySQL-protocol servers for the tests marked ``mysql``.

Two kinds, each an admin URL (it creates databases and users):

- the usual one: ``$SQLBENCH_LMEVAL_TEST_MYSQL_URL`` when set (``.ci/run`` sets it), else a
  private MariaDB that ``.ci/mariadb.sh start`` makes on a temporary datadir;
- one made by ``mariadb-install-db`` with its defaults (anonymous accounts, the test databases
  granted to PUBLIC): ``$SQLBENCH_LMEVAL_TEST_MYSQL_DEFAULTS_URL``, else
  ``.ci/mariadb.sh start DIR --defaults``.

Private servers are stopped at the end of the session. Without a server binary the tests skip
and say why. (``$SQLBENCH_LMEVAL_MYSQL_URL`` is the URL evaluations run under, a read-only
account; the tests keep it out of their environment.)
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.private_server import ScriptServer

URL_ENV = "SQLBENCH_LMEVAL_TEST_MYSQL_URL"
DEFAULTS_URL_ENV = "SQLBENCH_LMEVAL_TEST_MYSQL_DEFAULTS_URL"
SERVER_BINARIES = ("mariadbd", "mysqld")


class PrivateServer(ScriptServer):
    """A server started from ``.ci/mariadb.sh`` in a temporary folder."""

    def __init__(self, *options: str) -> None:
        super().__init__("mariadb.sh", "sqlbench-mdb-", "MariaDB", *options)


@dataclass(frozen=True)
class Server:
    """A server's admin URL and where it listens, as the server itself reports it."""

    admin_url: str
    port: int
    socket: str | None  # its unix socket, when it is on this machine
    bind_address: str
    secure_file_priv: str | None

    def admin(self):
        """A new admin connection (the caller closes it)."""
        from sqlbench_lmeval.execution.mysql import open_connection, parse_url

        return open_connection(parse_url(self.admin_url))

    def spellings(self) -> dict[str, str]:
        """The admin URL written every way that reaches this server from here: 127.0.0.1,
        localhost, [::1] where the server listens there, the unix socket where it has one."""
        from sqlbench_lmeval.execution.mysql import parse_url

        address = parse_url(self.admin_url)
        credentials = f"{address.user}:{address.password}"
        urls = {
            "127.0.0.1": f"mysql://{credentials}@127.0.0.1:{self.port}",
            "localhost": f"mysql://{credentials}@localhost:{self.port}",
        }
        if "::1" in self.bind_address or self.bind_address in ("*", "::"):
            urls["[::1]"] = f"mysql://{credentials}@[::1]:{self.port}"
        if self.socket and Path(self.socket).exists():
            urls["unix socket"] = f"mysql://{credentials}@localhost?unix_socket={self.socket}"
        return urls


def describe(admin_url: str) -> Server:
    from sqlbench_lmeval.execution.mysql import open_connection, parse_url

    conn = open_connection(parse_url(admin_url))
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT @@port, @@socket, @@bind_address, @@secure_file_priv")
            port, socket, bind_address, secure_file_priv = cursor.fetchone()
    finally:
        conn.close()
    return Server(admin_url, int(port), socket, bind_address or "", secure_file_priv)


def has_server_binary() -> bool:
    return any(shutil.which(name) or Path("/usr/sbin", name).exists() for name in SERVER_BINARIES)


def admin_url_or_skip(defaults: bool = False) -> tuple[str, PrivateServer | None]:
    """(admin URL, the private server to stop or None); skips the test without any server."""
    pytest.importorskip("pymysql", reason="the mysql extra (PyMySQL) is not installed")
    url = os.environ.get(DEFAULTS_URL_ENV if defaults else URL_ENV)
    if url:
        return url, None
    if not has_server_binary():
        pytest.skip(
            f"no MySQL-protocol server: set {URL_ENV}=mysql://admin:pass@host:port or install "
            "mariadb-server (.ci/run does)"
        )
    server = PrivateServer("--defaults") if defaults else PrivateServer()
    return server.url, server


def create_read_only_account(
    admin_url: str,
    databases: list[str],
    user: str = "sqlbench_reader",
    host: str = "%",
    benchmark: str | None = None,
) -> str:
    """(Re)create ``user``@``host`` with SELECT on ``databases`` (registered as ``benchmark``'s,
    default ``user``) and the metadata database only; returns its URL.

    The password is new each time (random, URL-safe); the returned URL is the admin URL with
    this account in place of the admin's.
    """
    from sqlbench_lmeval.execution.mysql import open_connection, parse_url
    from sqlbench_lmeval.execution.mysql_admin import (
        create_account,
        ensure_metadata,
        grant_select,
        new_password,
        register_databases,
        with_account,
    )

    password = new_password()
    conn = open_connection(parse_url(admin_url))
    try:
        with conn.cursor() as cursor:
            ensure_metadata(cursor)
            register_databases(cursor, benchmark or user, databases)
            cursor.execute("DROP USER IF EXISTS %s@%s", (user, host))
            create_account(cursor, user, host, password)
            grant_select(cursor, user, host, databases)
    finally:
        conn.close()
    return with_account(admin_url, user, password)
