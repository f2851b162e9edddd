"""Wall and CPU time of ``sqlbench-lmeval score`` for any number of source trees, in rounds.

Each round runs every tree once (``PYTHONPATH=TREE``, as ``perf/ab_score.py`` runs its two),
the order rotated from round to round, after one untimed warm-up run of each; then prints per
tree the median wall and CPU time and each round's wall time as a ratio to the first tree's in
the same round. On a machine whose speed changes from minute to minute, the ratios of one round
compare runs made seconds apart, where medians of separate runs would not.

    python perf/rounds_score.py logiccat gold.jsonl /tmp/d2bf4f7 /tmp/start . --rounds 9
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from ab_score import timed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task")
    parser.add_argument("predictions")
    parser.add_argument("trees", nargs="+", help="source trees; the first is the reference")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    runs: dict[str, list[tuple[float, float]]] = {tree: [] for tree in args.trees}
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "scores.json"
        for tree in args.trees:
            timed(tree, args.task, args.predictions, out)
        for number in range(args.rounds):
            shift = number % len(args.trees)
            for tree in args.trees[shift:] + args.trees[:shift]:
                wall, cpu, _ = timed(tree, args.task, args.predictions, out)
                runs[tree].append((wall, cpu))
                load = os.getloadavg()[0]
                print(f"round {number + 1} {tree}: wall {wall:6.2f} s, CPU {cpu:6.2f} s, "
                      f"load {load:5.2f}", flush=True)  # fmt: skip
    first = runs[args.trees[0]]
    for tree, measured in runs.items():
        wall = statistics.median(w for w, _ in measured)
        cpu = statistics.median(c for _, c in measured)
        ratios = [w / first[i][0] for i, (w, _) in enumerate(measured)]
        print(
            f"median {tree}: wall {wall:6.2f} s, CPU {cpu:6.2f} s; wall / first "
            f"{statistics.median(ratios):.2f}x (rounds {min(ratios):.2f}-{max(ratios):.2f}x)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
