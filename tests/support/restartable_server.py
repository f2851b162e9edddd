"""A private MariaDB that a test may kill and start again, on the same datadir and port.

Always a server of its own (started by ``.ci/mariadb.sh``, as ``support.mysql_server`` does),
never ``$SQLBENCH_LMEVAL_MYSQL_URL``: killing a server the test did not start is not the test's
to do. :meth:`kill` sends SIGKILL to the pid in the server's pid file (a crash; :meth:`shut_down` is
the clean stop); :meth:`start` runs the very command line the server was started with (read from
``/proc/<pid>/cmdline`` before the kill) and waits until it answers. Linux only: elsewhere, or
without a server binary, :func:`restartable_or_skip` skips the test and says why.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.mysql_server import PrivateServer, has_server_binary

START_TIMEOUT_S = 60.0


class RestartableServer:
    """A :class:`PrivateServer` with :meth:`kill` and :meth:`start`; ``url`` is its admin."""

    def __init__(self) -> None:
        self.server = PrivateServer()
        self.url = self.server.url
        self.folder = self.server.folder
        self.command = Path(f"/proc/{self.pid()}/cmdline").read_bytes().split(b"\0")[:-1]
        self.restarted: subprocess.Popen | None = None

    def pid(self) -> int:
        return int((self.folder / "mysqld.pid").read_text().strip())

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """``sig`` to the server (its pid file); returns once the process is gone."""
        pid = self.pid()
        os.kill(pid, sig)
        if self.restarted is not None and self.restarted.pid == pid:
            self.restarted.wait()  # our own child: reap it
        deadline = time.monotonic() + START_TIMEOUT_S
        while _alive(pid):
            if time.monotonic() > deadline:
                raise RuntimeError(f"server {pid} still alive after SIGKILL")
            time.sleep(0.05)

    def shut_down(self) -> None:
        """A clean shutdown (SIGTERM), as an operator stops a server."""
        self.kill(signal.SIGTERM)

    def start(self) -> None:
        """Start the server again with its first command line; wait until it answers."""
        self.restarted = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.wait_until_answering()

    def wait_until_answering(self) -> None:
        from sqlbench_lmeval.execution.mysql import open_connection, parse_url

        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                open_connection(parse_url(self.url)).close()
                return
            except Exception:
                if time.monotonic() > deadline or (
                    self.restarted is not None and self.restarted.poll() is not None
                ):
                    log = (self.folder / "error.log").read_text(errors="replace")[-3000:]
                    raise RuntimeError(
                        f"the server did not come back; its log ends:\n{log}"
                    ) from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.restarted is not None and self.restarted.poll() is None:
            # Our child: stop and reap it here (.ci/mariadb.sh would wait on the zombie).
            self.restarted.terminate()
            try:
                self.restarted.wait(timeout=START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.restarted.kill()
                self.restarted.wait()
        self.server.stop()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) still answers signal 0.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def restartable_or_skip() -> RestartableServer:
    """A started :class:`RestartableServer`, or a skip that says why there is none."""
    pytest.importorskip("pymysql", reason="the mysql extra (PyMySQL) is not installed")
    if not sys.platform.startswith("linux"):
        pytest.skip("restarting a server reads its command line from /proc (Linux only)")
    if not has_server_binary():
        pytest.skip("no mariadbd/mysqld binary to start a private server with")
    return RestartableServer()
