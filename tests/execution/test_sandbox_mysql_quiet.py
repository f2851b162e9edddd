"""The ``mysql`` engine ends every connection cleanly and quietly: after results cut off at the
row cap or the byte budget, queries that leave session state behind (a reconnect), timeouts
(``KILL QUERY``) and the worker's exit, the server's error log holds no "Aborted connection"
line and stderr holds no PyMySQL traceback ("Exception ignored in ... SSCursor.close")."""

from __future__ import annotations

import pytest
from support.server_log import ServerLog

pytest.importorskip("pymysql")

from sqlbench_lmeval.execution import Job, Limits, Status, execute_many  # noqa: E402

pytestmark = pytest.mark.mysql


def test_capped_results_reconnects_and_worker_exit_leave_no_trace(mysql_attack_server, capfd):
    log = ServerLog.open(mysql_attack_server.admin_url)
    database = mysql_attack_server.database()
    capped = "SELECT a.a FROM t a, t b"  # 10,000 rows, over the cap of 100
    budget = "SELECT repeat('x', 100000) FROM t a, t b"  # 1 GB of text, over 64 MiB
    jobs = [
        Job(database, capped),
        Job(database, "SELECT count(*) FROM t"),
        Job(database, budget),
        Job(database, "SELECT @quiet := 1"),
        Job(database, capped),
        Job(database, "SELECT count(*) FROM t"),
    ]
    # One worker: every job on one connection in turn (see test_statement_rule_mysql.py). A
    # generous timeout: building 64 MB must not race the deadline on a busy machine.
    outcomes = execute_many(jobs, Limits(timeout_s=60, max_rows=100, memory_mb=256), workers=1)
    assert [outcome.status for outcome in outcomes] == [
        Status.TOO_MANY_ROWS,
        Status.OK,
        Status.TOO_MANY_ROWS,
        Status.OK,
        Status.TOO_MANY_ROWS,
        Status.OK,
    ]
    assert outcomes[5].rows == ((100,),)
    stopped = execute_many([Job(database, "SELECT SLEEP(5)")], Limits(timeout_s=0.5), workers=1)
    assert stopped[0].status is Status.TIMEOUT
    stderr = capfd.readouterr().err
    assert "Exception ignored" not in stderr and "Traceback" not in stderr, stderr[-2000:]
    assert log.aborted() == []
