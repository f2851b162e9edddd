"""Deterministic work counters (``execution.work``): are they identical run after run, across
worker counts (threads for DuckDB) and on cold and warm caches, how well do they follow time,
and what do they cost?

    python perf/measure_work.py sqlite --workers 2      # LogicCat gold on SQLite
    python perf/measure_work.py duckdb                  # TPC-DS gold on DuckDB
    python perf/measure_work.py mysql                   # LogicCat gold on the prepared server

Per engine: the gold queries run ``--runs`` times on fresh connections (a cold engine cache),
then again on the same connections (warm); SQLite also in 1 and in ``--workers`` processes,
DuckDB also with 2 and 4 threads. Printed: how many queries had identical counts across all of
that, the Spearman rank correlation of work with the median time, and (SQLite) the time of
every query with the counting handler against the sandbox's own handler alone, in alternating
rounds. Queries that fail or take longer than ``--timeout`` are left out.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sqlite3
import statistics
import sys
import time
from collections.abc import Sequence
from multiprocessing import get_context

from sqlbench_lmeval.execution import work

# -- Spearman's rank correlation, by hand (ties get their average rank) ------------------------


def ranks(values: Sequence[float]) -> list[float]:
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


# -- SQLite ------------------------------------------------------------------------------------

_SQLITE: dict[str, object] = {}


def _sqlite_connection(path: str, timeout: float):
    """A sandboxed connection as ``execution.sqlite.connect`` opens it, without the statement
    cache (what wiring the counter needs), schema loaded."""
    from sqlbench_lmeval.execution import sqlite as engine
    from sqlbench_lmeval.execution.job import Limits
    from sqlbench_lmeval.execution.runner import load_setup
    from sqlbench_lmeval.logiccat.benchmark import CONNECTION_SETUP

    if path not in _SQLITE:
        plain = sqlite3.connect
        sqlite3.connect = functools.partial(plain, cached_statements=0)
        try:
            conn = engine.connect(path, Limits(timeout_s=timeout), load_setup(CONNECTION_SETUP))
        finally:
            sqlite3.connect = plain
        work.load_schema(conn)
        _SQLITE[path] = conn
    return _SQLITE[path]


def _sqlite_job(job: tuple[str, str, float, int]) -> tuple[int | None, float]:
    """(VM steps or None if it failed, seconds) of one query, counted every ``unit`` steps;
    ``unit`` 0: the sandbox's handler alone (the baseline for the counter's cost)."""
    path, sql, timeout, unit = job
    conn = _sqlite_connection(path, timeout)
    deadline = conn.deadline
    started = time.perf_counter()
    deadline.at = time.monotonic() + timeout
    try:
        if unit:
            _, steps = work.sqlite_work(conn, sql, work.StepCounter(deadline, unit))
        else:
            conn.execute(sql).fetchall()
            steps = 0
    except Exception:
        return None, time.perf_counter() - started
    finally:
        deadline.at = float("inf")
    return steps, time.perf_counter() - started


def _fresh_pool(processes: int):
    return get_context("spawn").Pool(processes)


def measure_sqlite(args) -> None:
    from sqlbench_lmeval.logiccat.bundle import ensure_bundle

    bundle = ensure_bundle(cache_dir=args.cache_dir, progress=False)
    golds = [(str(bundle.database_path(r.db_id)), r.gold_sql) for r in bundle.records
             if r.gold_status == "ok"]  # fmt: skip
    jobs = [(path, sql, args.timeout, work.SQLITE_STEP_UNIT) for path, sql in golds]
    counts, times = [], []
    for _ in range(args.runs):  # fresh processes: cold connections and page caches
        with _fresh_pool(1) as pool:
            result = pool.map(_sqlite_job, jobs, chunksize=64)
            counts.append([steps for steps, _ in result])
            times.append([seconds for _, seconds in result])
            warm = pool.map(_sqlite_job, jobs, chunksize=64)  # same process: warm
            counts.append([steps for steps, _ in warm])
    with _fresh_pool(args.workers) as pool:
        counts.append([steps for steps, _ in pool.map(_sqlite_job, jobs, chunksize=7)])
    report("sqlite", counts, times, f"{args.runs} cold runs, each then warm, and {args.workers} "
           "processes")  # fmt: skip
    if args.skip_cost:
        return
    # The counter's cost, per query: the sandbox's handler alone and the counter every
    # ``unit`` steps, alternately, best of 2 each (in this process, load-robust).
    for unit in (16, 64, 256):
        base, counted, coarse = [], [], 0
        for path, sql in golds:
            best = {}
            for _ in range(2):
                for each in (0, unit):
                    steps, seconds = _sqlite_job((path, sql, args.timeout, each))
                    best[each] = min(best.get(each, seconds), seconds)
                    coarse += bool(each and steps is not None and steps < 4 * unit)
            base.append(best[0])
            counted.append(best[unit])
        slowest = max(range(len(base)), key=base.__getitem__)
        ratios = sorted(c / b for b, c in zip(base, counted, strict=True) if b > 0)
        rest = sum(base) - base[slowest], sum(counted) - counted[slowest]
        print(f"  counter every {unit} steps: all gold {sum(base):.2f} -> {sum(counted):.2f} s "
              f"({sum(counted) / sum(base):.2f}x), without the slowest query {rest[0]:.2f} -> "
              f"{rest[1]:.2f} s ({rest[1] / rest[0]:.2f}x), median per query "
              f"{ratios[len(ratios) // 2]:.3f}x; queries under 4 units: {coarse // 2} "
              f"(load {os.getloadavg()[0]:.2f})")  # fmt: skip


# -- DuckDB ------------------------------------------------------------------------------------


def _duckdb_connection(path: str, threads: int):
    import duckdb

    conn = duckdb.connect(path, read_only=True, config={"threads": threads})
    for statement in work.DUCKDB_PROFILING:
        conn.execute(statement)
    return conn


def measure_duckdb(args) -> None:
    from sqlbench_lmeval.tpcds.benchmark import load_items

    items = load_items(cache_dir=args.cache_dir)
    path = items[0].database.path

    def one_pass(conn) -> tuple[list, list, list]:
        found, scanned, seconds = [], [], []
        for item in items:
            started = time.perf_counter()
            try:
                conn.execute(item.gold_sql).fetchall()
                profile = json.loads(conn.get_profiling_information(format="json"))
                found.append(work.profiled_work(profile))
                scanned.append(profile.get("cumulative_rows_scanned"))
            except Exception:
                found.append(None)
                scanned.append(None)
            seconds.append(time.perf_counter() - started)
        return found, scanned, seconds

    single, times, threaded, threaded_scans, single_scans = [], [], [], [], []
    for _ in range(args.runs):
        conn = _duckdb_connection(path, 1)
        cold, scans, seconds = one_pass(conn)
        single += [cold, one_pass(conn)[0]]  # then warm: the same connection again
        single_scans.append(scans)
        times.append(seconds)
        conn.close()
    for threads in (2, 4):
        conn = _duckdb_connection(path, threads)
        found, scans, _ = one_pass(conn)
        threaded.append(found)
        threaded_scans.append(scans)
        conn.close()
    report("duckdb", single, times, f"{args.runs} cold runs with 1 thread (the sandbox's), "
           "each then warm")  # fmt: skip
    report("duckdb, 1, 2 and 4 threads", single[:1] + threaded, times, "work")
    report("duckdb, 1, 2 and 4 threads", single_scans[:1] + threaded_scans, times,
           "rows scanned only")  # fmt: skip
    # What counting costs: every gold query with the counting setup and without any (plain
    # DuckDB, one thread), in alternating rounds.
    rounds: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(2):
        for counting in (False, True):
            conn = _duckdb_connection(path, 1) if counting else duckdb_plain(path)
            started = time.perf_counter()
            for item in items:
                conn.execute(item.gold_sql).fetchall()
                if counting:
                    conn.get_profiling_information(format="json")
            rounds[counting].append(time.perf_counter() - started)
            conn.close()
    print(f"  all gold, plain: {[round(t, 2) for t in rounds[False]]} s; counting: "
          f"{[round(t, 2) for t in rounds[True]]} s (load {os.getloadavg()[0]:.2f})")  # fmt: skip


def duckdb_plain(path: str):
    import duckdb

    return duckdb.connect(path, read_only=True, config={"threads": 1})


# -- MariaDB -----------------------------------------------------------------------------------


def measure_mysql(args) -> None:
    from sqlbench_lmeval.execution.mysql import open_connection, parse_url
    from sqlbench_lmeval.logiccat import gold
    from sqlbench_lmeval.logiccat.bundle import ensure_bundle
    from sqlbench_lmeval.logiccat.server import read_manifest, run_url

    bundle = ensure_bundle(cache_dir=args.cache_dir, progress=False)
    address = parse_url(run_url(args.url, read_manifest(args.cache_dir)))
    records = [r for r in bundle.records if r.gold_status == "ok"
               and r.db_id not in gold.SPIDER_DERIVED]  # fmt: skip
    counts, times = [], []

    def one_pass(connections: dict) -> tuple[list, list]:
        found, seconds = [], []
        for record in records:
            if record.db_id not in connections:
                conn = open_connection(address, record.db_id)
                cursor = conn.cursor()
                cursor.execute(f"SET SESSION max_statement_time = {args.timeout}")
                connections[record.db_id] = (conn, cursor, work.mysql_status_overhead(cursor))
            _, cursor, overhead = connections[record.db_id]
            started = time.perf_counter()
            try:
                _, amount = work.mysql_work(cursor, record.gold_sql_mysql, overhead)
            except Exception:
                amount = None
            seconds.append(time.perf_counter() - started)
            found.append(amount)
        return found, seconds

    for _ in range(args.runs):  # new connections each run
        connections: dict = {}
        found, seconds = one_pass(connections)
        counts.append(found)
        times.append(seconds)
        counts.append(one_pass(connections)[0])  # the same connections again
        for conn, _, _ in connections.values():
            conn.close()
    report("mysql", counts, times, f"{args.runs} runs on new connections, each then again on "
           "the same ones")  # fmt: skip
    if args.save:
        import json

        with open(args.save, "w", encoding="utf-8") as out:
            json.dump({str(r.id): c for r, c in zip(records, counts[0], strict=True)}, out)


# -- report ------------------------------------------------------------------------------------


def report(engine: str, counts: list[list], times: list[list], how: str) -> None:
    ran = [i for i in range(len(counts[0])) if all(run[i] is not None for run in counts)]
    identical = [i for i in ran if len({run[i] for run in counts}) == 1]
    differing = [i for i in ran if i not in identical]
    medians = [statistics.median(run[i] for run in times) for i in range(len(times[0]))]
    rho = spearman([counts[0][i] for i in ran], [medians[i] for i in ran])
    zero = sum(1 for i in ran if counts[0][i] == 0)
    values = sorted(counts[0][i] for i in ran)
    print(f"{engine}: {len(counts[0])} gold queries, {len(ran)} ran every time ({how})")
    print(f"  identical work in all {len(counts)} passes: {len(identical)}/{len(ran)}; "
          f"differing at positions {differing[:10]}")  # fmt: skip
    print(f"  work: median {values[len(values) // 2]}, max {values[-1]}, zero {zero}")
    print(f"  Spearman(work, median time over {len(times)} cold passes) = {rho:.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=["sqlite", "duckdb", "mysql"])
    parser.add_argument("--cache-dir", default=os.environ.get("SQLBENCH_LMEVAL_CACHE"))
    parser.add_argument("--url", help="mysql: the prepared server (default: its reader)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--skip-cost", action="store_true", help="sqlite: no cost rounds")
    parser.add_argument("--save", help="mysql: write the first pass's counts here (JSON)")
    args = parser.parse_args()
    {"sqlite": measure_sqlite, "duckdb": measure_duckdb, "mysql": measure_mysql}[args.engine](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
