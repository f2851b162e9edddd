"""A worker process killed from outside while it runs a query (the OOM killer acting for
another process, an operator, a container limit): the query runs once more, alone, on a fresh
worker; only a second death makes it ``crashed``.

The kill is real: a setup-hook function (tests/support/held_workers.py) writes its worker's pid
into a folder and waits; a
thread of the test sends that pid SIGKILL, so the worker dies exactly while the query runs.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest
from support.held_workers import HOOKS

from sqlbench_lmeval.execution import Database, Job, Limits, Status, WorkerPool, execute_many


class Killer(threading.Thread):
    """Sends SIGKILL to the first ``kills`` workers that announce themselves, then lets the
    waiting function return."""

    def __init__(self, folder, kills: int) -> None:
        super().__init__(daemon=True)
        self.folder, self.kills = folder, kills
        self.killed: list[int] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set() and len(self.killed) < self.kills:
            for name in os.listdir(self.folder):
                if name.isdigit() and int(name) not in self.killed:
                    os.kill(int(name), signal.SIGKILL)
                    self.killed.append(int(name))
                    os.remove(self.folder / name)
            time.sleep(0.02)
        (self.folder / "go").touch()


@pytest.fixture
def killable(tmp_path, tiny_sqlite, monkeypatch):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "kill_test_hooks.py").write_text(HOOKS)
    folder = tmp_path / "pids"
    folder.mkdir()
    monkeypatch.setenv("KILL_TEST_FOLDER", str(folder))
    monkeypatch.syspath_prepend(str(hooks))
    sys.modules.pop("kill_test_hooks", None)
    return Database("sqlite", str(tiny_sqlite), setup="kill_test_hooks:register"), folder


def run_with_kills(database, folder, kills: int, pool: WorkerPool | None = None):
    killer = Killer(folder, kills)
    killer.start()
    sqls = ["SELECT 1", "SELECT wait_to_be_killed()", "SELECT 2"]
    jobs = [Job(database, s) for s in sqls]
    try:
        outcomes = execute_many(jobs, Limits(timeout_s=120), workers=1, pool=pool)
    finally:
        killer.stop.set()
        killer.join()
    return outcomes, killer.killed


def test_a_worker_killed_once_runs_its_query_again_on_a_fresh_worker(killable):
    outcomes, killed = run_with_kills(*killable, kills=1)
    assert len(killed) == 1
    assert [(o.status, o.rows) for o in outcomes] == [
        (Status.OK, ((1,),)),
        (Status.OK, ((1,),)),
        (Status.OK, ((2,),)),
    ]


def test_a_query_whose_worker_dies_twice_is_crashed_and_says_so(killable):
    outcomes, killed = run_with_kills(*killable, kills=2)
    assert len(set(killed)) == 2  # two different worker processes were killed
    assert [o.status for o in outcomes] == [Status.OK, Status.CRASHED, Status.OK]
    error = outcomes[1].error
    assert "signal SIGKILL" in error and "both runs" in error and "fresh worker" in error


def test_in_a_pool_the_query_runs_again_on_a_new_worker_and_the_pool_keeps_it(killable):
    # The pool's worker ran a batch before (it is not fresh); the killed query's second run is
    # on a new process, which the pool keeps for its next batch.
    database, folder = killable
    with WorkerPool(1) as pool:
        execute_many([Job(database, "SELECT 0")], pool=pool)
        (before,) = pool.pids()
        outcomes, killed = run_with_kills(database, folder, kills=1, pool=pool)
        (after,) = pool.pids()
        (last,) = execute_many([Job(database, "SELECT 3")], pool=pool)
    assert killed == [before] and after != before
    assert [o.rows for o in outcomes] == [((1,),), ((1,),), ((2,),)]
    assert last.rows == ((3,),)
