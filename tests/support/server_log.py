"""What a MySQL-protocol server writes to its error log while a test runs.

``ServerLog.open(admin_url)`` finds the log through ``@@log_error`` (on this machine when the
server is one the tests started) and remembers where it ends; ``new_lines()`` is what was added
since. A server whose log is elsewhere, or that does not log aborted connections
(``log_warnings`` < 2), makes the test skip with the reason.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ABORTED = "Aborted connection"


class ServerLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.start = path.stat().st_size

    @classmethod
    def open(cls, admin_url: str) -> ServerLog:
        from sqlbench_lmeval.execution.mysql import open_connection, parse_url

        conn = open_connection(parse_url(admin_url))
        try:
            with conn.cursor() as cursor:
                cursor.execute("SELECT @@log_error, @@datadir, @@log_warnings")
                log_error, datadir, warnings = cursor.fetchone()
        finally:
            conn.close()
        if int(warnings) < 2:
            pytest.skip(f"the server does not log aborted connections (log_warnings={warnings})")
        path = Path(log_error) if os.path.isabs(log_error) else Path(datadir, log_error)
        if not path.is_file() or not os.access(path, os.R_OK):
            pytest.skip(f"the server's error log {log_error!r} is not readable here")
        return cls(path)

    def new_lines(self) -> list[str]:
        with self.path.open("rb") as log:
            log.seek(self.start)
            return log.read().decode("utf-8", "replace").splitlines()

    def aborted(self) -> list[str]:
        return [line for line in self.new_lines() if ABORTED in line]
