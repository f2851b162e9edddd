"""A PostgreSQL server that turns new connections away for want of a slot (SQLSTATE 53300: a
role at its CONNECTION LIMIT here, the same error as a server at max_connections, which only a
restart can lower) is waited for, said on stderr, and then stops the run as ServerBusy naming
the remedy; a slot freed meanwhile lets the connection through."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("psycopg")

import psycopg  # noqa: E402

from sqlbench_lmeval.execution import unavailable  # noqa: E402
from sqlbench_lmeval.execution.postgres import (  # noqa: E402
    connection_failure,
    is_busy,
    open_connection,
    with_database,
    with_role,
)
from sqlbench_lmeval.execution.unavailable import ServerBusy  # noqa: E402

pytestmark = pytest.mark.postgres

ROLE, PASSWORD = "sqlbench_busy_client", "busy-client-pw"


@pytest.fixture
def limited_url(postgres_admin_url):
    """A role allowed one connection at a time, on the ``postgres`` database."""
    with open_connection(postgres_admin_url) as admin:
        admin.execute(f"DROP ROLE IF EXISTS {ROLE}")
        admin.execute(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}' CONNECTION LIMIT 1")
    yield with_database(with_role(postgres_admin_url, ROLE, password=PASSWORD), "postgres")
    with open_connection(postgres_admin_url) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (ROLE,)
        )
        admin.execute(f"DROP ROLE IF EXISTS {ROLE}")


def test_no_free_slot_is_waited_for_then_stops_the_run(limited_url, monkeypatch, capsys):
    monkeypatch.setattr(unavailable, "BUSY_WINDOW_S", 1.0)
    holder = open_connection(limited_url, wait_busy=False)
    try:
        with pytest.raises(psycopg.OperationalError) as raised:
            open_connection(limited_url)
    finally:
        holder.close()
    assert is_busy(raised.value)
    assert "waiting up to 1 s" in capsys.readouterr().err
    failure = connection_failure(limited_url, raised.value)
    assert isinstance(failure, ServerBusy)
    assert "refuses new connections" in str(failure) and "max_connections" in str(failure)


def test_a_slot_freed_while_waiting_lets_the_connection_through(limited_url, monkeypatch, capsys):
    holder = open_connection(limited_url, wait_busy=False)
    said = threading.Event()

    def free_the_slot_once_waiting() -> None:
        said.wait(timeout=120)
        holder.close()

    # The waiting line is written before the first pause: free the slot once it is there.
    original = unavailable.time.sleep

    def sleep(seconds: float) -> None:
        said.set()
        original(seconds)

    releaser = threading.Thread(target=free_the_slot_once_waiting)
    releaser.start()
    monkeypatch.setattr(unavailable.time, "sleep", sleep)
    try:
        with open_connection(limited_url) as conn:
            assert conn.execute("SELECT current_user").fetchone() == (ROLE,)
    finally:
        said.set()
        releaser.join()
    assert "has no free connection" in capsys.readouterr().err
