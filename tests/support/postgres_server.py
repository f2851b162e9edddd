"""A PostgreSQL server for the tests marked ``postgres``.

``$SQLBENCH_LMEVAL_POSTGRES_URL`` (an admin account: it creates databases and roles) when set,
as ``.ci/run`` sets it; otherwise a private cluster started by ``.ci/postgres.sh`` (``initdb`` on
a temporary directory, a unix socket there and a loopback port; stopped at the end of the
session) when PostgreSQL's binaries are installed; otherwise the test skips and says why.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

URL_ENV = "SQLBENCH_LMEVAL_POSTGRES_URL"
SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "postgres.sh"


class PrivateServer:
    """A cluster started from ``.ci/postgres.sh`` in a temporary folder."""

    def __init__(self) -> None:
        # Short path: a unix socket path must stay under ~100 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix="sqlbench-pg-"))
        started = subprocess.run(
            ["bash", str(SCRIPT), "start", str(self.folder)],
            capture_output=True,
            text=True,
            check=False,
        )
        if started.returncode != 0:
            self.stop()
            raise RuntimeError(f"could not start a private PostgreSQL: {started.stderr.strip()}")
        self.url = started.stdout.strip().splitlines()[-1]

    def stop(self) -> None:
        subprocess.run(["bash", str(SCRIPT), "stop", str(self.folder)], check=False)
        shutil.rmtree(self.folder, ignore_errors=True)


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
