"""WorkerPool: worker processes shared by several execute_many batches, each batch under its own
limits and rules, and none left running once the pool's ``with`` ends (however it ends).

Which process ran a query is read from the query itself (``worker_pid()``, a setup-hook
function); which processes are left, from ``/proc``.
"""

from __future__ import annotations

import os
import shutil
from contextlib import nullcontext
from pathlib import Path

import pytest

from sqlbench_lmeval.execution import Database, Job, Limits, Status, WorkerPool, execute_many
from sqlbench_lmeval.execution import pool as pool_module
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

HOOK = "sqlbench_test_hooks:register"
WORKER_MODULE = b"sqlbench_lmeval.execution.worker"


def _parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state


def alive(pids) -> set[int]:
    """Those of ``pids`` that are still processes of this one (running, or dead and not
    reaped)."""
    return {pid for pid in pids if _parent_of(pid) == os.getpid()}


def worker_children() -> set[int]:
    """Every worker process this process has started and not yet reaped."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _parent_of(int(entry.name)) == os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if WORKER_MODULE in cmdline or not cmdline:  # no command line: a zombie
                found.add(int(entry.name))
    return found


@pytest.fixture
def database(tiny_sqlite, hooks_dir) -> Database:
    return Database("sqlite", str(tiny_sqlite), setup=HOOK)


def pid_jobs(database: Database, count: int) -> list[Job]:
    return [Job(database, "SELECT worker_pid()")] * count


def test_batches_under_different_limits_run_on_the_same_workers(database):
    # One worker: with two, the one left idle may take over (duplicate) jobs queued behind the
    # other, which is then not kept (test below), and which processes stay is the scheduler's.
    ten_rows = "SELECT worker_pid() FROM t WHERE a < 10"
    with WorkerPool(1) as pool:
        jobs = pid_jobs(database, 20) + [Job(database, ten_rows)] * 20
        capped = execute_many(jobs, Limits(max_rows=5), pool=pool)
        workers = set(pool.pids())
        assert len(workers) == 1 and worker_children() == workers
        roomy = execute_many([Job(database, ten_rows)] * 20, Limits(max_rows=50), pool=pool)
        assert set(pool.pids()) == workers
    # Each batch's own row limit applied on the same process.
    assert [o.status for o in capped] == [Status.OK] * 20 + [Status.TOO_MANY_ROWS] * 20
    assert all(o.status is Status.OK and len(o.rows) == 10 for o in roomy)
    assert {o.rows[0][0] for o in capped[:20]} == workers
    assert {row[0] for o in roomy for row in o.rows} == workers
    assert not alive(workers) and not worker_children()


def test_a_worker_the_watchdog_killed_is_replaced_and_the_next_batch_runs(database, monkeypatch):
    monkeypatch.setattr(pool_module, "KILL_GRACE_S", 1.0)
    sqls = ["SELECT worker_pid()", "SELECT slow_sleep(60)", "SELECT worker_pid()"]
    with WorkerPool(1) as pool:
        first = execute_many([Job(database, s) for s in sqls], Limits(timeout_s=0.3), pool=pool)
        (replacement,) = pool.pids()
        second = execute_many(pid_jobs(database, 3), Limits(timeout_s=10), pool=pool)
    killed = first[0].rows[0][0]
    assert first[1].status is Status.TIMEOUT and "killed" in first[1].error
    assert replacement != killed and first[2].rows == ((replacement,),)
    assert [o.rows for o in second] == [((replacement,),)] * 3
    assert not alive({killed, replacement}) and not worker_children()


def test_deaths_while_opening_a_database_are_counted_per_batch(
    tiny_sqlite, hooks_dir, tmp_path, monkeypatch
):
    # One such death is forgiven in a batch (the job moves to a fresh worker), a second stops
    # it: a death in each of two batches of one pool stops neither.
    marker = tmp_path / "die"
    monkeypatch.setenv("SQLBENCH_TEST_DIE_MARKER", str(marker))
    copies = [tmp_path / f"copy{i}.sqlite" for i in (1, 2)]
    for copy in copies:
        shutil.copy(tiny_sqlite, copy)
    with WorkerPool(1) as pool:
        for copy in copies:  # a database no worker has open yet: opening it kills the worker
            marker.touch()
            database = Database("sqlite", str(copy), setup="sqlbench_test_hooks:die_when_told")
            outcomes = execute_many([Job(database, "SELECT count(*) FROM t")] * 3, pool=pool)
            assert not marker.exists()  # a worker did die opening it
            assert [o.rows for o in outcomes] == [((100,),)] * 3
    assert not worker_children()


def test_a_worker_still_holding_jobs_another_took_over_is_not_kept(database):
    # Behind the slow query, the other worker takes over (duplicates) the waiting jobs; the slow
    # worker still lists them when the batch ends. Were it kept, it would run them in the next
    # batch and their results would land on that batch's jobs of the same index.
    sqls = ["SELECT slow_sleep(1)"] + [f"SELECT 'old', {i}" for i in range(300)]
    with WorkerPool(2) as pool:
        first = execute_many([Job(database, s) for s in sqls], Limits(timeout_s=10), pool=pool)
        second = execute_many([Job(database, f"SELECT 'new', {i}") for i in range(301)], pool=pool)
    assert [o.rows for o in first[1:]] == [(("old", i),) for i in range(300)]
    assert [o.rows for o in second] == [(("new", i),) for i in range(301)]


class Interrupted(KeyboardInterrupt):
    pass


@pytest.mark.parametrize(
    "ending", ["normal", "error", "interrupt", "interrupt_in_batch", "unavailable"]
)
def test_no_worker_process_outlives_the_pool(database, no_retry_pause, ending):
    seen: set[int] = set()

    def jobs_then_interrupt():
        yield from pid_jobs(database, 40)
        seen.update(worker_children())
        raise Interrupted

    expected = {
        "normal": None,
        "error": RuntimeError,
        "interrupt": Interrupted,
        "interrupt_in_batch": Interrupted,
        "unavailable": EvaluationUnavailable,
    }[ending]
    with pytest.raises(expected) if expected else nullcontext():
        with WorkerPool(2) as pool:
            outcomes = execute_many(pid_jobs(database, 40), pool=pool)
            seen.update(o.rows[0][0] for o in outcomes)
            seen.update(worker_children())
            if ending == "error":
                raise RuntimeError("the caller's own failure")
            if ending == "interrupt":
                raise Interrupted
            if ending == "interrupt_in_batch":
                execute_many(jobs_then_interrupt(), pool=pool)
            if ending == "unavailable":
                missing = Database("sqlite", "/nonexistent/x.sqlite")
                execute_many([Job(missing, "SELECT 1")] + pid_jobs(database, 40), pool=pool)
    assert len(seen) >= 2
    assert not alive(seen) and not worker_children()
    assert pool.closed
    with pytest.raises(ValueError, match="closed"):
        execute_many(pid_jobs(database, 1), pool=pool)


def test_a_pool_of_no_workers_runs_in_this_process(database):
    with WorkerPool(0) as pool:
        (outcome,) = execute_many(pid_jobs(database, 1), pool=pool)
        assert pool.pids() == []
    assert outcome.rows == ((os.getpid(),),)


def test_renew_stops_the_idle_workers_and_the_next_batch_starts_fresh_ones(database):
    with WorkerPool(2) as pool:
        execute_many(pid_jobs(database, 20), pool=pool)
        old = set(pool.pids())
        pool.renew()
        assert pool.pids() == [] and not alive(old)
        fresh = {o.rows[0][0] for o in execute_many(pid_jobs(database, 20), pool=pool)}
        assert (
            fresh and not fresh & old
        )  # (a worker that took over jobs is not kept: no pids check)
    assert not worker_children()
