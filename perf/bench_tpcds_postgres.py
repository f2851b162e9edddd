"""TPC-DS on PostgreSQL: the load of sf 1, gold's own run time, and ``score tpcds --engine
postgres`` with gold's text as the 99 predictions, warm.

Issue 22 targets on 2 cores: the load in <= 3 min; the 99 gold-as-prediction answers scored
warm (gold already in the gold cache) in <= 2x the time gold itself takes to run (the same 99
queries, the same workers and limits). Also printed: gold's time per query on PostgreSQL and
on DuckDB, and how many gold results equal DuckDB's. ``--url`` is an admin account (default
``$SQLBENCH_LMEVAL_POSTGRES_URL``); the cache (``--cache-dir``, default a temporary folder)
gets the DuckDB database (built if missing; not timed), the manifest and the password file.

    python perf/bench_tpcds_postgres.py --url postgresql://postgres:pw@127.0.0.1:5432/postgres
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SF = 1.0


def score_once(predictions: Path, cache: Path, workers: int) -> tuple[float, dict]:
    output = cache / "scores.json"
    start = time.monotonic()
    subprocess.run(
        [
            sys.executable, "-m", "sqlbench_lmeval", "score", "tpcds", str(predictions),
            "--engine", "postgres", "--dialect", "postgres", "--scale-factor", str(SF),
            "--cache-dir", str(cache), "--workers", str(workers), "--no-progress",
            "--output", str(output),
        ],
        check=True,
    )  # fmt: skip
    return time.monotonic() - start, json.loads(output.read_text(encoding="utf-8"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("SQLBENCH_LMEVAL_POSTGRES_URL"))
    parser.add_argument("--cache-dir", help="cache root (default: a temporary folder)")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument(
        "--no-reload", action="store_true", help="keep a database already loaded (load not timed)"
    )
    args = parser.parse_args()
    if not args.url:
        parser.error("--url or $SQLBENCH_LMEVAL_POSTGRES_URL is required")

    from sqlbench_lmeval.execution import Database, Job, execute_many
    from sqlbench_lmeval.tpcds import postgres
    from sqlbench_lmeval.tpcds.data import ensure_database

    cache = Path(args.cache_dir or tempfile.mkdtemp(prefix="bench-tpcds-postgres-"))
    ensure_database(cache, SF)
    print(f"load average before: {os.getloadavg()}")
    manifest = postgres.prepare(
        args.url, cache, SF, reload=not args.no_reload, workers=args.workers, progress=False
    )
    print(postgres.summary(manifest))
    if manifest["action"] == "loaded":
        print(f"load (24 tables, COPY, checks, keys, ANALYZE): {manifest['load_s']:.1f} s")
    gold = manifest["gold"]
    print("query  postgres_s  duckdb_s  status  equal")
    for number, judged in sorted(gold.items(), key=lambda pair: int(pair[0])):
        print(
            f"{number:>5}  {judged['seconds']:10.2f}  {judged['duckdb_seconds']:8.2f}  "
            f"{judged['status']:7s} {judged['equal']}"
        )
    print(
        f"gold on PostgreSQL equal to DuckDB's: {sum(g['equal'] for g in gold.values())} of 99; "
        f"sums of per-query times: postgres {sum(g['seconds'] for g in gold.values()):.1f} s, "
        f"duckdb {sum(g['duckdb_seconds'] for g in gold.values()):.1f} s"
    )

    # Gold's own run time: the 99 queries once, as scoring runs them (workers, limits).
    database = Database("postgres", manifest["reader_url"])
    jobs = [
        Job(database, judged["sql"]) for _, judged in sorted(gold.items(), key=lambda p: int(p[0]))
    ]
    start = time.monotonic()
    execute_many(jobs, postgres.gold_limits(), workers=args.workers)
    gold_s = time.monotonic() - start
    print(f"gold's own run time (99 queries, {args.workers} workers): {gold_s:.1f} s")

    predictions = cache / "gold-predictions.jsonl"
    with predictions.open("w", encoding="utf-8") as out:
        for number, judged in gold.items():
            out.write(json.dumps({"id": int(number), "prediction": judged["sql"]}) + "\n")
    cold_s, _ = score_once(predictions, cache, args.workers)  # fills the gold cache
    warm_s, result = score_once(predictions, cache, args.workers)
    metrics = result["metrics"]
    print(f"score, gold cache cold: {cold_s:.1f} s")
    print(
        f"score, warm: {warm_s:.1f} s = {warm_s / gold_s:.2f}x gold's own run time "
        f"(target <= 2x); ex={metrics['ex']:.4f}, gold statuses {metrics['gold_status_counts']}"
    )
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
