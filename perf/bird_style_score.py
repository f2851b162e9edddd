"""A BIRD-style evaluator of LogicCat predictions: the yardstick of ``ab_score.py --bird``.

It does what BIRD's ``evaluation.py`` does (its ``run_sqls_parallel`` and ``execute_model``):
a ``multiprocessing`` pool of one process per core; for each (prediction, gold) pair a fresh
``sqlite3`` connection to the item's database, the predicted query and the gold query both
executed and fetched, ``set(predicted_rows) == set(gold_rows)``; each pair under
``func_timeout`` (30 s; an exception or a timeout counts 0), results gathered by callbacks and
sorted by index. Over the databases and gold SQL our LogicCat build keeps in
``$SQLBENCH_LMEVAL_CACHE`` (``logiccat/v*/records.jsonl`` and ``databases/``) and a predictions
file as ``score`` reads it (JSON lines of ``id`` and ``prediction``, the SQL as it is: BIRD
translates nothing and extracts nothing). Prints the execution accuracy and the count.

    pip install func-timeout   # BIRD's own timeout package (a perf tool's, not the package's)
    python perf/bird_style_score.py /work/perf/mix.jsonl
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sqlite3
import sys
from pathlib import Path

from func_timeout import FunctionTimedOut, func_timeout


def execute_sql(predicted_sql: str, ground_truth: str, db_path: str) -> int:
    conn = sqlite3.connect(db_path)
    cursor = conn.cursor()
    cursor.execute(predicted_sql)
    predicted_res = cursor.fetchall()
    cursor.execute(ground_truth)
    ground_truth_res = cursor.fetchall()
    conn.close()
    return int(set(predicted_res) == set(ground_truth_res))


def execute_model(predicted_sql: str, ground_truth: str, db_place: str, idx: int, timeout: float):
    try:
        res = func_timeout(timeout, execute_sql, args=(predicted_sql, ground_truth, db_place))
    except KeyboardInterrupt:
        sys.exit(0)
    except FunctionTimedOut:
        res = 0
    except Exception:
        res = 0
    return {"sql_idx": idx, "res": res}


def run_sqls_parallel(pairs, db_places, num_cpus: int, timeout: float) -> list[dict]:
    exec_result: list[dict] = []
    pool = mp.Pool(processes=num_cpus)
    for i, (predicted_sql, ground_truth) in enumerate(pairs):
        pool.apply_async(
            execute_model,
            args=(predicted_sql, ground_truth, db_places[i], i, timeout),
            callback=exec_result.append,
        )
    pool.close()
    pool.join()
    return sorted(exec_result, key=lambda result: result["sql_idx"])


def logiccat_build(cache: Path) -> Path:
    """The newest LogicCat build folder of the cache (``logiccat/v<N>``)."""
    builds = sorted(
        (p for p in (cache / "logiccat").glob("v*") if (p / "records.jsonl").exists()),
        key=lambda p: int(p.name[1:]) if p.name[1:].isdigit() else -1,
    )
    if not builds:
        raise SystemExit(f"no LogicCat build under {cache / 'logiccat'}: run score once first")
    return builds[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("predictions", help="JSON lines of id and prediction")
    parser.add_argument("--cache", default=os.environ.get("SQLBENCH_LMEVAL_CACHE"))
    parser.add_argument("--num-cpus", type=int, default=os.cpu_count())
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per pair (BIRD's)")
    args = parser.parse_args()
    if not args.cache:
        raise SystemExit("name the cache: --cache or $SQLBENCH_LMEVAL_CACHE")
    build = logiccat_build(Path(args.cache).expanduser())
    manifest = json.loads((build / "manifest.json").read_text())
    records = {}
    with open(build / "records.jsonl") as lines:
        for line in lines:
            record = json.loads(line)
            records[record["id"]] = record
    pairs, db_places = [], []
    with open(args.predictions) as lines:
        for line in lines:
            answer = json.loads(line)
            record = records[answer["id"]]
            pairs.append((answer["prediction"] or "", record["gold_sql"]))
            db_places.append(str(build / manifest["databases"][record["db_id"]]))
    results = run_sqls_parallel(pairs, db_places, args.num_cpus, args.timeout)
    correct = sum(result["res"] for result in results)
    print(f"execution accuracy {100 * correct / len(results):.2f}% ({correct} of {len(results)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
