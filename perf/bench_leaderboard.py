"""Whole-process time of ``sqlbench-lmeval leaderboard`` over many verified LogicCat runs.

``--runs`` (default 50) full ``--tasks logiccat`` runs (4 tasks, 4,036 items each) are written
by lm-eval's own tracker (``_lmeval_runs``) and verified once by a first ``leaderboard`` call
(not timed: it re-scores every run and fills ``verifications/``). Each timed call then finds
every run's verification by the content of its files and builds the boards: per task EX and
its bootstrap interval, EX per category, rank intervals (paired bootstrap over items, 2,000
resamples), McNemar + Holm groups over all pairs, the page, CSV, JSON, Markdown and every run's
report. Target on 2 cores (issue 20): <= 10 s for 50 verified runs.

    python perf/bench_leaderboard.py --source ../shared/logiccat --workers 2 --runs 50
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from _common import prepare, print_times, timed
from _lmeval_runs import write_logiccat_runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", help="LogicCat source folder (default: the usual lookup)")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--cache-dir", help="reuse a cache holding a built bundle")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warm-runs", type=int, default=3, help="timed builds (default: 3)")
    args = parser.parse_args()
    work, cache, _bundle = prepare(args, "bench_leaderboard_")
    started = time.perf_counter()
    runs = write_logiccat_runs(work / "runs", cache, args.runs, workers=args.workers)
    print(f"{len(runs)} runs written in {time.perf_counter() - started:.0f} s (not timed)")
    command = [
        sys.executable, "-m", "sqlbench_lmeval", "leaderboard", *map(str, runs),
        "--output", str(work / "board"), "--cache-dir", str(cache),
        "--workers", str(args.workers), "--no-progress",
    ]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    print(f"first build (verifies every run) in {time.perf_counter() - started:.0f} s (not timed)")
    times = []
    for number in range(args.warm_runs):
        seconds, cpu, done = timed(command)
        times.append(seconds)
        print(f"build {number + 1}: {seconds:5.2f} s (CPU {cpu:5.2f} s): {done.stdout[:90]}")
    print_times(times, f"for {len(runs)} verified runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
