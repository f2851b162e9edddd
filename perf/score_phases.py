"""Where one ``sqlbench-lmeval score`` run spends its time: each worker batch and the rest.

Runs the CLI in this process (``python perf/score_phases.py TASK PREDICTIONS [score options]``,
with ``PYTHONPATH=TREE`` to measure another source tree) and prints, per ``execute_many`` batch,
its span in the run, its jobs, the worker processes it started and this process's CPU during
it; then the run's wall time and the CPU of this process (extraction, comparison, reports) and
of its workers (counted when they are reaped, so only in the total). The time outside the
batches is time the workers sit idle.

    python perf/score_phases.py logiccat gold-as-predictions.jsonl
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path


def cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    from sqlbench_lmeval import cli
    from sqlbench_lmeval.execution import pool

    start = time.monotonic()
    started: list[int] = []
    make_worker, run_batch = pool._Worker, pool._Batch.run

    def counted_worker():
        started.append(1)
        return make_worker()

    def timed_run(batch):
        begun, main_cpu, before = time.monotonic(), cpu(resource.RUSAGE_SELF), len(started)
        try:
            return run_batch(batch)
        finally:
            print(
                f"batch {begun - start:6.2f} .. {time.monotonic() - start:6.2f} s: "
                f"{len(batch.jobs):5d} jobs, {len(started) - before} worker(s) started, "
                f"main CPU {cpu(resource.RUSAGE_SELF) - main_cpu:.2f} s",
                file=sys.stderr,
            )

    pool._Worker, pool._Batch.run = counted_worker, timed_run
    with tempfile.TemporaryDirectory() as work:
        args = sys.argv[1:]
        if "-o" not in args:
            args += ["-o", str(Path(work) / "scores.json")]
        try:
            cli.main(["score", *args])
        except SystemExit:
            pass
    print(
        f"run {time.monotonic() - start:.2f} s wall; CPU: main {cpu(resource.RUSAGE_SELF):.2f} s, "
        f"workers {cpu(resource.RUSAGE_CHILDREN):.2f} s; {len(started)} worker(s) started",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
