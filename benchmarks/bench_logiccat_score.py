"""Whole-process time of ``sqlbench-lmeval score logiccat`` with the gold SQL as predictions.

Every one of the 4,036 gold queries really runs twice (as gold and as the prediction), so this is
the worst realistic load for LogicCat. Measured twice through the real CLI in a subprocess:
cold (empty gold cache) and warm (gold cache filled by the cold run). Prints wall time, CPU time
(user + system of the scoring process and its workers), EX, and peak RSS. Targets on 2 cores
(issue 6): <= 8 s cold, <= 5 s warm.

The LogicCat bundle is built first (not timed) from ``--source`` or the usual source lookup.

    python benchmarks/bench_logiccat_score.py --source ../shared/logiccat --workers 2
    python benchmarks/bench_logiccat_score.py --cache-dir ~/.cache/sqlbench_lmeval
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


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

    work = Path(tempfile.mkdtemp(prefix="bench_logiccat_"))
    cache = Path(args.cache_dir) if args.cache_dir else work / "cache"
    started = time.perf_counter()
    bundle = ensure_bundle(source=args.source, cache_dir=cache, progress=False)
    print(f"bundle built in {time.perf_counter() - started:.1f} s (not part of the timings)")

    predictions = work / "gold-as-predictions.jsonl"
    with predictions.open("w", encoding="utf-8") as out:
        for record in bundle.records:
            out.write(json.dumps({"id": record.id, "prediction": record.gold_sql}) + "\n")

    command = [
        sys.executable, "-m", "sqlbench_lmeval", "score", "logiccat", str(predictions),
        "--cache-dir", str(cache), "--workers", str(args.workers), "--no-progress",
    ]  # fmt: skip
    # The cold run must execute every gold query: start from an empty gold cache.
    shutil.rmtree(gold_cache_dir(cache), ignore_errors=True)
    for phase in ("cold", "warm"):
        output = work / f"scores-{phase}.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([*command, "--output", str(output)], check=True, capture_output=True)
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak_mib = max(before.ru_maxrss, after.ru_maxrss) / 1024
        # CPU of the scoring process and its workers: steadier than wall time on a shared box.
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        metrics = json.loads(output.read_text())["metrics"]
        print(
            f"{phase:>4} gold cache: {seconds:5.2f} s for {metrics['n']} items "
            f"({metrics['n'] / seconds:6.0f} items/s, CPU {cpu:5.2f} s), ex={metrics['ex']:.4f}, "
            f"ex_on_healthy_gold={metrics['ex_on_healthy_gold']:.4f}, "
            f"peak RSS of a child process {peak_mib:.0f} MiB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
