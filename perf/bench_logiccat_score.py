"""Whole-process time of ``sqlbench-lmeval score logiccat`` with the gold SQL as predictions.

Every one of the 4,036 gold queries really runs twice (as gold and as the prediction), so this is
the worst realistic load for LogicCat. Measured through the real CLI in a subprocess, cold
(empty gold cache) and ``--warm-runs`` times warm (see ``_common``). Prints wall time, CPU time
(user + system of the scoring process and its workers), EX, and peak RSS. Targets on 2 cores
(issue 6): <= 8 s cold, <= 5 s warm.

The LogicCat bundle is built first (not timed) from ``--source`` or the usual source lookup.

    python perf/bench_logiccat_score.py --source ../shared/logiccat --workers 2
    python perf/bench_logiccat_score.py --cache-dir ~/.cache/sqlbench_lmeval
"""

from __future__ import annotations

import json
import sys

from _common import options, prepare, print_best_warm, score_runs


def main() -> int:
    args = options(__doc__.splitlines()[0])
    work, cache, bundle = prepare(args, "bench_logiccat_")
    predictions = work / "gold-as-predictions.jsonl"
    with predictions.open("w", encoding="utf-8") as out:
        for record in bundle.records:
            out.write(json.dumps({"id": record.id, "prediction": record.gold_sql}) + "\n")

    runs = []
    for run in score_runs(predictions, cache, work, args.workers, args.warm_runs):
        runs.append(run)
        metrics = run.result["metrics"]
        print(
            f"{run.phase:>4} gold cache: {run.seconds:5.2f} s for {metrics['n']} items "
            f"({metrics['n'] / run.seconds:6.0f} items/s, CPU {run.cpu:5.2f} s), "
            f"ex={metrics['ex']:.4f}, ex_on_healthy_gold={metrics['ex_on_healthy_gold']:.4f}, "
            f"peak RSS of a child process {run.peak_mib:.0f} MiB"
        )
    print_best_warm(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
