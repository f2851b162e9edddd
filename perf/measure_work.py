"""Deterministic work (``Outcome.work``, what r_ves divides) on a benchmark's gold, through the
real engines: is it identical run after run, across worker counts and between a cold and a
warm gold cache, and how well does it follow time?

    python perf/measure_work.py logiccat --workers 2                  # SQLite
    python perf/measure_work.py tpcds                                 # DuckDB
    python perf/measure_work.py logiccat --engine mysql --url URL     # a prepared MariaDB

Every gold query runs ``--runs`` times in fresh worker processes (``--workers`` of them; a
fresh process is a cold engine, a new connection), once more in one process, then twice
through a new gold cache (cold: run and stored; warm: read back). Printed: how many queries
(of those that finished OK every time) had identical work in all of that, the work's median,
maximum and zeros, and Spearman's rank correlation of work with the median time of the runs
(``Outcome.elapsed_s``: execute and fetch), and how many counts lie under 4, 16, 64, ... (the
resolution r_ves needs: docs/r-ves.md). A time measurement, so quote the machine's load beside
it; the counts themselves do not depend on it.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence

from sqlbench_lmeval import benchmarks
from sqlbench_lmeval.execution import GoldCache, Job, Limits, Status, engines, execute_many


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            result[order[k]] = (start + end) / 2 + 1
        start = end + 1
    return result


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Pearson's correlation of the ranks."""
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = math.fsum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = math.fsum((a - mx) ** 2 for a in rx)
    vy = math.fsum((b - my) ** 2 for b in ry)
    return cov / math.sqrt(vx * vy) if vx and vy else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark", choices=["logiccat", "tpcds"])
    parser.add_argument("--engine", help="the benchmark's engine (default: its first)")
    parser.add_argument("--url", help="the server of a server engine")
    parser.add_argument("--cache-dir", default=os.environ.get("SQLBENCH_LMEVAL_CACHE"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    options = {k: v for k, v in (("engine", args.engine), ("url", args.url)) if v}
    items = benchmarks.get(args.benchmark).load_items(cache_dir=args.cache_dir, **options)
    jobs = [Job(item.database, item.gold_sql) for item in items]
    limits = Limits(timeout_s=args.timeout)
    engine = engines.get(items[0].database.engine)
    print(f"{args.benchmark} on {engine.name}: {len(jobs)} gold queries, work: {engine.work_unit}")
    passes, how = [], []
    for run in range(args.runs):
        passes.append(execute_many(jobs, limits, workers=args.workers))
        how.append(f"run {run + 1}, {args.workers} workers")
    passes.append(execute_many(jobs, limits, workers=1))
    how.append("1 worker")
    with tempfile.TemporaryDirectory() as folder:
        passes.append(GoldCache(folder).run(jobs, limits, workers=args.workers))
        passes.append(GoldCache(folder).run(jobs, limits, workers=args.workers))
        how += ["cold gold cache", "warm gold cache"]
    ok = [i for i in range(len(jobs)) if all(p[i].status is Status.OK for p in passes)]
    identical = [i for i in ok if len({p[i].work for p in passes}) == 1]
    differing = [items[i].id for i in ok if i not in identical]
    print(f"passes: {', '.join(how)}")
    print(f"finished OK in every pass: {len(ok)}; identical work in all {len(passes)} passes: "
          f"{len(identical)}/{len(ok)}; differing items: {differing[:20]}")  # fmt: skip
    work = [passes[0][i].work for i in ok]
    if None in work:
        print("this engine counts no work")
        return 0
    values = sorted(work)
    print(f"work: median {values[len(values) // 2]}, max {values[-1]}, "
          f"zero {sum(1 for w in work if w == 0)}")  # fmt: skip
    bounds = (4, 16, 64, 256, 1024, 4096, 65536)
    print("work under: " + ", ".join(f"{b:,}: {sum(1 for w in work if w < b)}" for b in bounds))
    timed = passes[: args.runs + 1]  # executed passes (the cache's warm pass reads stored times)
    medians = [statistics.median(p[i].elapsed_s for p in timed) for i in ok]
    rho = spearman(work, medians)
    print(f"Spearman(work, median time of {len(timed)} executed passes) = {rho:.3f}")
    return 0 if len(identical) == len(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
