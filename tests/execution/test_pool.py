"""execute_many: input order, killed and replaced workers, setup hooks, progress, in-process,
and failures of the evaluation itself (they raise EvaluationUnavailable, never an outcome)."""

from __future__ import annotations

import re

import pytest

from sqlbench_lmeval.execution import Database, Job, Limits, Status, execute, execute_many
from sqlbench_lmeval.execution import pool as pool_module
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable

HOOK = "sqlbench_test_hooks:register"


def test_results_come_back_in_input_order(tiny_sqlite):
    database = Database("sqlite", str(tiny_sqlite))
    jobs = [Job(database, f"SELECT a, b FROM t WHERE a = {i % 100}") for i in range(500)]
    outcomes = execute_many(jobs, workers=2)
    assert [o.rows for o in outcomes] == [((i % 100, f"name{i % 100}"),) for i in range(500)]


def test_empty_batch():
    assert execute_many([]) == []


def test_progress_bar_and_in_process_mode_agree(tiny_sqlite, capsys):
    database = Database("sqlite", str(tiny_sqlite))
    jobs = [Job(database, "SELECT sum(a) FROM t"), Job(database, "SELECT nope FROM t")]
    pooled = execute_many(jobs, workers=1, progress="gold")
    local = execute_many(jobs, workers=0)
    assert [(o.status, o.rows, o.error) for o in pooled] == [
        (o.status, o.rows, o.error) for o in local
    ]
    assert pooled[0].rows == ((4950,),)
    assert "gold" in capsys.readouterr().err


def test_crashing_worker_marks_only_its_job_and_is_replaced(tiny_sqlite, hooks_dir):
    database = Database("sqlite", str(tiny_sqlite), setup=HOOK)
    sqls = ["SELECT 1"] * 5 + ["SELECT die()"] + ["SELECT 2"] * 5 + ["SELECT die()", "SELECT 3"]
    outcomes = execute_many([Job(database, sql) for sql in sqls], workers=2)
    statuses = [o.status for o in outcomes]
    assert statuses == [Status.CRASHED if "die" in s else Status.OK for s in sqls]
    assert "SIGKILL" in outcomes[5].error
    assert outcomes[-1].rows == ((3,),)


def test_hung_worker_is_killed_after_timeout_plus_grace(tiny_sqlite, hooks_dir, monkeypatch):
    # A Python function sleeping inside SQLite never reaches the progress handler: only the
    # watchdog can stop it.
    monkeypatch.setattr(pool_module, "KILL_GRACE_S", 1.0)
    database = Database("sqlite", str(tiny_sqlite), setup=HOOK)
    sqls = ["SELECT 1", "SELECT slow_sleep(60)", "SELECT 2", "SELECT 3"]
    outcomes = execute_many([Job(database, s) for s in sqls], Limits(timeout_s=0.3), workers=1)
    assert [o.status for o in outcomes] == [Status.OK, Status.TIMEOUT, Status.OK, Status.OK]
    assert "killed" in outcomes[1].error


def test_setup_hook_functions_are_callable_under_the_authorizer(tiny_sqlite, hooks_dir):
    database = Database("sqlite", str(tiny_sqlite), setup=HOOK)
    (outcome,) = execute_many([Job(database, "SELECT frozen_now()")], workers=1)
    assert outcome.rows == (("2024-01-01 00:00:00",),)


def test_failing_setup_hook_stops_the_batch_on_duckdb(tiny_duckdb, hooks_dir):
    # A hook is the evaluation's own code: when it fails, no query can be judged fairly.
    database = Database("duckdb", str(tiny_duckdb), setup="sqlbench_test_hooks:broken")
    jobs = [Job(database, "SELECT 1"), Job(database, "SELECT 2")]
    with pytest.raises(EvaluationUnavailable, match="setup hook failed.*hook exploded"):
        execute_many(jobs, workers=1)


@pytest.mark.parametrize(
    ("setup", "fragment"),
    [
        ("sqlbench_test_hooks:broken", "hook exploded"),
        ("sqlbench_test_hooks:missing", "missing"),
        ("no_such_module_xyz:f", "no_such_module_xyz"),
        ("not a spec", "pkg.module:function"),
    ],
)
def test_bad_setup_hooks_stop_the_evaluation(
    tiny_sqlite, hooks_dir, no_retry_pause, setup, fragment
):
    with pytest.raises(EvaluationUnavailable) as raised:
        execute(Job(Database("sqlite", str(tiny_sqlite), setup=setup), "SELECT 1"))
    assert "setup hook failed" in str(raised.value) and fragment in str(raised.value)


@pytest.mark.parametrize(
    "database",
    [Database("sqlite", "/nonexistent/x.sqlite"), Database("duckdb", "/nonexistent/x.duckdb")],
)
def test_missing_database_file_stops_the_evaluation(database, no_retry_pause):
    with pytest.raises(EvaluationUnavailable, match="no such file") as raised:
        execute(Job(database, "SELECT 1"))
    assert database.path in str(raised.value) and "prepare" in str(raised.value)


def test_unknown_engine_stops_the_evaluation(tiny_sqlite, no_retry_pause):
    with pytest.raises(EvaluationUnavailable, match="unknown engine"):
        execute(Job(Database("oracle", str(tiny_sqlite)), "SELECT 1"))


def test_rebuilt_database_file_is_reopened(tmp_path):
    import sqlite3

    path = tmp_path / "x.sqlite"
    for value in (1, 2):
        path.unlink(missing_ok=True)
        conn = sqlite3.connect(path)
        conn.execute(f"CREATE TABLE v AS SELECT {value} AS x")
        conn.commit()
        conn.close()
        assert execute(Job(Database("sqlite", str(path)), "SELECT x FROM v")).rows == ((value,),)


def test_sqlite_and_duckdb_jobs_mix_in_one_batch(tiny_sqlite, tiny_duckdb):
    jobs = [
        Job(Database("sqlite", str(tiny_sqlite)), "SELECT count(*) FROM t"),
        Job(Database("duckdb", str(tiny_duckdb)), "SELECT count(*) FROM t"),
    ]
    assert [o.rows for o in execute_many(jobs, workers=2)] == [((100,),), ((100,),)]


def test_jobs_behind_a_slow_query_are_taken_over_and_results_stay_exact(tiny_sqlite, hooks_dir):
    database = Database("sqlite", str(tiny_sqlite), setup=HOOK)
    sqls = ["SELECT slow_sleep(1)"] + [f"SELECT {i}" for i in range(300)]
    outcomes = execute_many([Job(database, s) for s in sqls], Limits(timeout_s=10), workers=2)
    assert all(o.status is Status.OK for o in outcomes)
    assert [o.rows for o in outcomes[1:]] == [((i,),) for i in range(300)]


def test_lazy_jobs_are_consumed_in_order_and_match_a_list(tiny_sqlite):
    database = Database("sqlite", str(tiny_sqlite))
    made = []

    def jobs():  # a generator, as scoring passes while it extracts SQL from outputs
        for i in range(300):
            made.append(i)
            yield Job(database, f"SELECT a FROM t WHERE a = {i % 100}")

    outcomes = execute_many(jobs(), workers=2, expected=50)  # a wrong guess is harmless
    assert made == list(range(300))
    assert [o.rows for o in outcomes] == [((i % 100,),) for i in range(300)]


def test_lazy_jobs_fill_in_the_progress_bar_total(tiny_sqlite, capsys):
    database = Database("sqlite", str(tiny_sqlite))
    jobs = (Job(database, f"SELECT {i}") for i in range(70))
    assert len(execute_many(jobs, workers=1, progress="lazy")) == 70
    assert "70/70" in capsys.readouterr().err  # the total became known when the jobs ended


@pytest.mark.parametrize("workers", [1, 0])
def test_a_bar_that_expected_more_jobs_keeps_its_total(tiny_sqlite, capsys, workers):
    # Scoring expects one job per answer; refused answers never become jobs. The bar's total
    # stays what it showed from the start (10), the 3 jobs never made count as done.
    database = Database("sqlite", str(tiny_sqlite))
    jobs = (Job(database, f"SELECT {i}") for i in range(7))
    assert len(execute_many(jobs, workers=workers, progress="short", expected=10)) == 7
    totals = set(re.findall(r"\b\d+/(\d+)\b", capsys.readouterr().err))
    assert totals == {"10"}


def test_no_lazy_jobs_start_no_worker(monkeypatch):
    def no_worker():
        raise AssertionError("a worker started for an empty batch")

    monkeypatch.setattr(pool_module, "_Worker", no_worker)
    assert execute_many(iter([]), workers=2) == []


def test_an_error_while_making_jobs_stops_the_batch(tiny_sqlite):
    database = Database("sqlite", str(tiny_sqlite))

    def jobs():
        yield from [Job(database, "SELECT 1")] * 40
        raise KeyError("made by the caller")

    with pytest.raises(KeyError, match="made by the caller"):
        execute_many(jobs(), workers=1)


@pytest.mark.parametrize("workers", [0, 2])
def test_jobs_made_from_results_join_the_batch(tiny_sqlite, workers):
    # ``more``: each result of the first jobs asks for one further job, made from it while the
    # batch runs (scoring: a matched answer's runs on the perturbed copies).
    database = Database("sqlite", str(tiny_sqlite))
    jobs = [Job(database, f"SELECT a FROM t WHERE a = {i}") for i in range(40)]
    arrived, asked = [], []

    def keep(index, outcome):
        if index < len(jobs):
            arrived.append(outcome.rows[0][0])
        return outcome

    def more():
        asked.append(len(arrived))
        made = [Job(database, f"SELECT a * 10 FROM t WHERE a = {a}") for a in arrived]
        arrived.clear()
        done = sum(asked_for for asked_for in asked) >= len(jobs)
        return None if done and not made else made

    outcomes = execute_many(jobs, workers=workers, keep=keep, more=more)
    assert [o.rows for o in outcomes[:40]] == [((i,),) for i in range(40)]
    assert sorted(o.rows[0][0] for o in outcomes[40:]) == [i * 10 for i in range(40)]


def test_no_wait_for_workers_once_the_last_job_is_in(tiny_sqlite, monkeypatch):
    # ``more`` answers None only after the last result is in (scoring: no copy run follows);
    # the batch then ends at once. A wait for the workers then, with nothing out, sat out its
    # whole timeout (0.5 s) before the batch could end.
    database = Database("sqlite", str(tiny_sqlite))
    waits, real = [], pool_module._Batch._wait_and_read

    def watched(batch, block=True):
        waits.append((block, batch.remaining))
        return real(batch, block)

    monkeypatch.setattr(pool_module._Batch, "_wait_and_read", watched)
    finished = []

    def keep(index, outcome):
        finished.append(index)
        return outcome

    def more():  # as scoring's: none yet while a job is out, none ever once all are in
        return None if len(finished) == 5 else []

    outcomes = execute_many([Job(database, "SELECT 1")] * 5, workers=1, keep=keep, more=more)
    assert [o.rows for o in outcomes] == [((1,),)] * 5
    assert any(block for block, _ in waits), "the batch waited for its workers while jobs ran"
    assert [(block, left) for block, left in waits if block and left == 0] == []


def test_a_job_runs_under_its_own_limits_beside_the_batchs(tiny_sqlite, hooks_dir, monkeypatch):
    # The watchdog gives each job its own time limit: the batch's is 30 s, this job's 0.3 s.
    monkeypatch.setattr(pool_module, "KILL_GRACE_S", 1.0)
    database = Database("sqlite", str(tiny_sqlite), setup=HOOK)
    short = Limits(timeout_s=0.3, max_rows=1)
    jobs = [
        Job(database, "SELECT 1"),
        Job(database, "SELECT slow_sleep(60)", limits=short),
        Job(database, "SELECT a FROM t", limits=short),
        Job(database, "SELECT a FROM t WHERE a < 2"),
    ]
    outcomes = execute_many(jobs, Limits(timeout_s=30), workers=1)
    statuses = [o.status for o in outcomes]
    assert statuses == [Status.OK, Status.TIMEOUT, Status.TOO_MANY_ROWS, Status.OK]
    assert "1.3 s" in outcomes[1].error and outcomes[3].rows == ((0,), (1,))
