"""A MySQL-protocol server for the tests marked ``mysql``.

``$SQLBENCH_LMEVAL_MYSQL_URL`` (an admin account: it creates databases and users) when set, as
``.ci/run`` sets it; otherwise a private MariaDB started by ``.ci/mariadb.sh`` on a temporary
datadir when a server binary is installed (stopped at the end of the session); otherwise the
test skips and says why.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.private_server import ScriptServer

URL_ENV = "SQLBENCH_LMEVAL_MYSQL_URL"
SERVER_BINARIES = ("mariadbd", "mysqld")


class PrivateServer(ScriptServer):
    """A server started from ``.ci/mariadb.sh`` in a temporary folder."""

    def __init__(self) -> None:
        super().__init__("mariadb.sh", "sqlbench-mdb-", "MariaDB")


def has_server_binary() -> bool:
    return any(shutil.which(name) or Path("/usr/sbin", name).exists() for name in SERVER_BINARIES)


def admin_url_or_skip() -> tuple[str, PrivateServer | None]:
    """(admin URL, the private server to stop or None); skips the test without any server."""
    pytest.importorskip("pymysql", reason="the mysql extra (PyMySQL) is not installed")
    url = os.environ.get(URL_ENV)
    if url:
        return url, None
    if not has_server_binary():
        pytest.skip(
            f"no MySQL-protocol server: set {URL_ENV}=mysql://admin:pass@host:port or install "
            "mariadb-server (.ci/run does)"
        )
    server = PrivateServer()
    return server.url, server
