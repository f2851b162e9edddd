"""Whole-process time of ``sqlbench-lmeval verify`` on one full LogicCat run (4,036 items).

The run is a ``--tasks logiccat`` lm-eval output folder written by lm-eval's own tracker
(``_lmeval_runs``): our documents and prompts, raw outputs (gold, a wrong query or prose per
item) and our filter's score dicts. Writing it (not timed) fills the gold cache, so every
timed run is warm: it reads the run, rebuilds the four tasks' documents and prompts, hashes
every prompt, re-scores every output (each prediction's SQL really runs), compares the claims
and writes the report. Target on 2 cores (issue 20): <= 5 s warm.

    python perf/bench_verify.py --source ../shared/logiccat --workers 2
"""

from __future__ import annotations

import json
import sys
import time

from _common import options, prepare, print_times, timed
from _lmeval_runs import write_logiccat_runs


def main() -> int:
    args = options(__doc__.splitlines()[0])
    work, cache, _bundle = prepare(args, "bench_verify_")
    started = time.perf_counter()
    (run,) = write_logiccat_runs(work / "runs", cache, 1, workers=args.workers)
    print(f"run written in {time.perf_counter() - started:.1f} s (not part of the timings)")
    command = [
        sys.executable, "-m", "sqlbench_lmeval", "verify", str(run), "--cache-dir", str(cache),
        "--workers", str(args.workers), "--no-progress", "--output", str(work / "verify"),
    ]  # fmt: skip
    times = []
    for number in range(args.warm_runs):
        # verify exits 0 for a verified run, with findings (e.g. gold answers) or without.
        seconds, cpu, _ = timed(command)
        (report,) = (work / "verify").glob("*.json")
        data = json.loads(report.read_text(encoding="utf-8"))
        items = sum(len(task["items"]) for task in data["tasks"])
        findings = sum(len(task["findings"]) for task in data["tasks"])
        times.append(seconds)
        print(
            f"warm run {number + 1}: {seconds:5.2f} s for {items} items (CPU {cpu:5.2f} s), "
            f"verdict {data['verdict']}, findings {findings}"
        )
    print_times(times, "warm")
    return 0


if __name__ == "__main__":
    sys.exit(main())
