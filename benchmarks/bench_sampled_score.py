"""Whole-process time of ``sqlbench-lmeval score logiccat --samples``: 8 samples x 4,036 items.

32,288 predictions, a fixed-seed mix per sample of: the gold SQL in a fence (40 %), the gold SQL
with other whitespace (10 %, a duplicate after normalisation), a wrong query that still runs
gold's work (``SELECT COUNT(*) FROM (<gold>)``, 25 %), a failing query (15 %) and prose (10 %).
Measured through the real CLI in a subprocess, cold (empty gold cache) and warm (gold cache
filled by the cold run). Prints wall and CPU time, how many predictions ran after
deduplication, and the headline numbers. Target (issue 12): <= 15 s warm on 2 cores.

    python benchmarks/bench_sampled_score.py --source ../shared/logiccat --workers 2
    python benchmarks/bench_sampled_score.py --cache-dir ~/.cache/sqlbench_lmeval
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SAMPLES = 8
MIX = (("gold", 40), ("gold_ws", 10), ("wrong", 25), ("error", 15), ("prose", 10))


def sample_text(kind: str, gold: str) -> str:
    if kind == "gold":
        return f"```sql\n{gold}\n```"
    if kind == "gold_ws":
        return "\n  ".join(gold.split(" "))
    if kind == "wrong":
        return f"```sql\nSELECT COUNT(*) FROM ({gold.rstrip().rstrip(';')})\n```"
    if kind == "error":
        return "SELECT no_such_column FROM no_such_table"
    return "I cannot answer this from the schema."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", help="LogicCat source folder (default: the usual lookup)")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument(
        "--cache-dir", help="reuse a cache holding a built bundle (its gold cache is emptied)"
    )
    args = parser.parse_args()

    from sqlbench_lmeval.logiccat.bundle import ensure_bundle
    from sqlbench_lmeval.paths import gold_cache_dir

    work = Path(tempfile.mkdtemp(prefix="bench_sampled_"))
    cache = Path(args.cache_dir) if args.cache_dir else work / "cache"
    started = time.perf_counter()
    bundle = ensure_bundle(source=args.source, cache_dir=cache, progress=False)
    print(f"bundle built in {time.perf_counter() - started:.1f} s (not part of the timings)")

    rng = random.Random(12)
    kinds, weights = zip(*MIX, strict=True)
    predictions = work / "samples.jsonl"
    with predictions.open("w", encoding="utf-8") as out:
        for record in bundle.records:
            drawn = rng.choices(kinds, weights=weights, k=SAMPLES)
            outputs = [sample_text(kind, record.gold_sql) for kind in drawn]
            out.write(json.dumps({"id": record.id, "prediction": outputs}) + "\n")

    command = [
        sys.executable, "-m", "sqlbench_lmeval", "score", "logiccat", str(predictions),
        "--samples", "--cache-dir", str(cache), "--workers", str(args.workers), "--no-progress",
    ]  # fmt: skip
    shutil.rmtree(gold_cache_dir(cache), ignore_errors=True)
    for phase in ("cold", "warm"):
        output = work / f"scores-{phase}.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([*command, "--output", str(output)], check=True, capture_output=True)
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        result = json.loads(output.read_text())
        metrics, items = result["metrics"], result["items"]
        total = sum(item["vote"]["n_samples"] for item in items)
        distinct = sum(item["vote"]["n_distinct"] for item in items)
        print(
            f"{phase:>4} gold cache: {seconds:5.2f} s (CPU {cpu:5.2f} s) for {total} predictions "
            f"on {metrics['n']} items; {distinct} distinct after dedup "
            f"({1 - distinct / total:.1%} not run); ex={metrics['ex']:.4f} "
            f"ex_maj={metrics['ex_maj']:.4f} pass_at_1={metrics['pass_at_1']:.4f} "
            f"pass_at_8={metrics['pass_at_8']:.4f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
