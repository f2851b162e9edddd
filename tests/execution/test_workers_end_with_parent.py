"""Workers end with the process that started them, whatever ends it: a scoring process killed
with SIGKILL or SIGTERM while its workers run queries leaves no worker running.

Real processes: a parent process (a Python script) starts two workers and has each run a query
that holds its worker for two minutes (``tests/support/held_workers.py``: a setup-hook
function that announces the worker's pid, then waits). Once both announced themselves the test
kills the parent and polls ``/proc`` until the workers are gone, up to a bound far above what
their exit takes (and below the two minutes). The parent starts the
workers from its main thread (the kernel's death signal and the pipe both apply) or from
another thread (the pipe alone: docs/engines.md#worker-processes).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support.held_workers import HOOKS

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


PARENT = textwrap.dedent(
    """
    import sys
    import threading

    from sqlbench_lmeval.execution import Database, Job, Limits, execute_many

    path, from_thread = sys.argv[1], sys.argv[2] == "thread"
    database = Database("sqlite", path, setup="kill_test_hooks:register")


    def run():
        jobs = [Job(database, "SELECT wait_to_be_killed()")] * 2
        execute_many(jobs, Limits(timeout_s=600), workers=2)


    if from_thread:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    else:
        run()
    """
)

#: How long the workers may take to go once their parent is dead: far above the milliseconds
#: it takes, so that only a worker that would never end fails the test.
GONE_WITHIN_S = 60.0
#: How long the workers may take to start and run their query.
STARTED_WITHIN_S = 120.0


def running(pid: int, started: str) -> bool:
    """Whether ``pid`` is still the process that started at ``started`` and has not ended
    (a zombie has ended: only its exit status waits to be read)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat.rsplit(")", 1)[1].split()
    return fields[19] == started and fields[0] not in ("Z", "X")


def start_time(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


@pytest.mark.parametrize("from_thread", [False, True], ids=["main-thread", "other-thread"])
@pytest.mark.parametrize("kill", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_busy_workers_end_with_their_parent(tmp_path, tiny_sqlite, kill, from_thread):
    folder = tmp_path / "pids"
    folder.mkdir()
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "kill_test_hooks.py").write_text(HOOKS)
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    env = dict(os.environ, KILL_TEST_FOLDER=str(folder))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(hooks), env.get("PYTHONPATH")]))
    mode = "thread" if from_thread else "main"
    parent = subprocess.Popen([sys.executable, str(script), str(tiny_sqlite), mode], env=env)
    workers: dict[int, str] = {}
    try:
        deadline = time.monotonic() + STARTED_WITHIN_S
        while len(os.listdir(folder)) < 2:
            assert parent.poll() is None, "the parent ended before its workers ran"
            assert time.monotonic() < deadline, "the workers did not start their queries"
            time.sleep(0.05)
        workers = {int(name): start_time(int(name)) for name in os.listdir(folder)}
        assert all(running(pid, started) for pid, started in workers.items())
        parent.send_signal(kill)
        assert parent.wait() == -kill
        deadline = time.monotonic() + GONE_WITHIN_S
        while any(running(pid, started) for pid, started in workers.items()):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        left = [pid for pid, started in workers.items() if running(pid, started)]
        assert not left, f"workers still running {GONE_WITHIN_S:g} s after their parent died"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        for pid, started in workers.items():  # never leave a worker behind, whatever failed
            if running(pid, started):
                os.kill(pid, signal.SIGKILL)
